package lsp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
)

const mainGo = "package main\n\nfunc main() {}\n"

// Through darman lsp: initialize lists Claude Code's reviewer file as it
// is written; the plan agent changes nothing although the rules allow
// every edit; its plan is handed to build with one code action; an
// unknown agent is refused; a new agent file is announced.
func TestAgentsOverLSP(t *testing.T) {
	reviewer, err := os.ReadFile("../../agent/agents/testdata/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	rules := append(permission.Defaults(), permission.Rule{Permission: "edit", Pattern: "*", Action: permission.Allow},
		permission.Rule{Permission: "bash", Pattern: "*", Action: permission.Allow})
	e := start(t, options{noInitialize: true, rules: rules, files: map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", "main.go": mainGo, ".claude/agents/reviewer.md": string(reviewer),
	}, script: llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			{ID: "e1", Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","oldString":"func main() {}","newString":"func main() { panic(1) }"}`)},
			{ID: "b1", Name: "bash", Arguments: json.RawMessage(`{"command":"echo x > main.go","description":"overwrite"}`)},
		}},
		{Text: "Plan: make main panic."},
		{Text: "Done."},
	}}})
	var init initResult
	e.client.MustCall("initialize", map[string]any{"rootUri": fileURI(e.root),
		"capabilities": map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true}}}}, &init)
	e.client.Notify("initialized", map[string]any{})
	listed := map[string]map[string]string{}
	for _, raw := range init.Capabilities.Experimental.Darman.Agents {
		var a map[string]string
		json.Unmarshal(raw, &a)
		listed[a["name"]] = a
	}
	if r := listed["code-reviewer"]; r["mode"] != "subagent" || !strings.HasPrefix(r["description"], "Expert code review") || listed["plan"]["mode"] != "primary" {
		t.Errorf("initialize listed %v", listed)
	}

	var tr turn
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": "Make main panic", "agent": "plan"}, &tr)
	_, end := e.client.Await(0, "the plan turn's end", isState("idle"))
	if got := e.read("main.go"); got != mainGo {
		t.Errorf("main.go changed under plan: %q", got)
	}
	var status struct {
		Agent struct {
			CurrentAgent string `json:"currentAgent"`
		} `json:"agent"`
	}
	e.client.mustCommand("darman.status", map[string]any{"sessionId": tr.SessionID}, &status)
	if status.Agent.CurrentAgent != "plan" {
		t.Errorf("darman.status currentAgent = %q", status.Agent.CurrentAgent)
	}

	// The hand-off: one code action sends the plan to build.
	e.open("main.go", mainGo)
	var actions []struct {
		Title   string `json:"title"`
		Command struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	e.client.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": e.uri("main.go")},
		"range":   map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}}, &actions)
	var handoff *json.RawMessage
	for _, a := range actions {
		if strings.HasPrefix(a.Title, "darman: carry out the plan with build") && a.Command.Command == "darman.prompt" {
			handoff = &a.Command.Arguments[0]
		}
	}
	if handoff == nil {
		t.Fatalf("no hand-off code action in %+v", actions)
	}
	var args map[string]string
	json.Unmarshal(*handoff, &args)
	if args["agent"] != "build" || args["sessionId"] != tr.SessionID {
		t.Errorf("hand-off arguments %v", args)
	}
	e.client.mustCommand("darman.prompt", args, nil)
	e.client.Await(end+1, "the build turn's end", isState("idle"))
	calls := e.model.ModelCalls()
	if last := calls[len(calls)-1]; !strings.Contains(string(last.Body), "Carry out the plan") || strings.Contains(last.Get("system").Raw, "plan agent") {
		t.Errorf("the hand-off did not reach build with the plan")
	}

	if err := e.client.command("darman.prompt", map[string]any{"prompt": "hi", "agent": "nobody"}, nil); err == nil || !strings.Contains(err.Error(), "the agents are build, plan") {
		t.Errorf("an unknown agent: %v", err)
	}
	// A file that says mode: subagent runs only under the task tool (a
	// Claude Code file without a mode, such as code-reviewer, runs when
	// named, as claude --agent runs it).
	e.write(".darman/agent/helper.md", "---\ndescription: Helps the task tool\nmode: subagent\n---\nHelp.\n")
	if err := e.client.command("darman.prompt", map[string]any{"prompt": "hi", "agent": "helper"}, nil); err == nil {
		t.Error("a sub-agent ran a session's turn")
	}

	from := len(e.client.Since(0))
	e.write(".darman/agent/docs.md", "---\ndescription: Writes the docs\nmode: primary\n---\nWrite docs.\n")
	n, _ := e.client.Await(from, "darman/agentsChanged", isMethod("darman/agentsChanged"))
	if !strings.Contains(string(n.Params), `"name":"docs"`) || !strings.Contains(string(n.Params), `"description":"Writes the docs"`) {
		t.Errorf("darman/agentsChanged = %s", n.Params)
	}
}
