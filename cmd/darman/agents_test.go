package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

const planMain = "package main\n\nfunc main() {}\n"

// planWorkspace is a workspace whose configuration allows every edit and
// command, and a model that tries to change main.go three ways before it
// answers with a plan.
func planWorkspace(t *testing.T) (*env, *llmtest.Server) {
	e := newEnv(t)
	e.write("main.go", planMain)
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			{ID: "e1", Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","oldString":"func main() {}","newString":"func main() { panic(1) }"}`)},
			{ID: "w1", Name: "write", Arguments: json.RawMessage(`{"path":"main.go","content":"changed\n"}`)},
			{ID: "b1", Name: "bash", Arguments: json.RawMessage(`{"command":"echo changed > main.go","description":"overwrite"}`)},
			{ID: "ls1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls","description":"list the files"}`)},
		}},
		{Text: "Plan: make main panic."},
	}})
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"},
		"sandbox": {"mode": "off"},
		"permission": {"edit": "allow", "write": "allow", "bash": "allow"},
		"agents": {"plan": {"permission": {"edit": "allow"}}}
	}`, srv.URL))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	return e, srv
}

func mainUnchanged(t *testing.T, e *env, front string) {
	t.Helper()
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "main.go")); string(b) != planMain {
		t.Errorf("%s: main.go changed under the plan agent: %q", front, b)
	}
}

// The plan agent changes nothing through any front, although the
// configuration allows every edit, even in plan's own agents entry.
func TestPlanCannotEditInAnyFront(t *testing.T) {
	t.Run("run", func(t *testing.T) {
		e, srv := planWorkspace(t)
		out, errs, code := e.run("run", "--agent", "plan", "make main panic")
		if code != 0 || !strings.Contains(out, "Plan: make main panic.") {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		mainUnchanged(t, e, "darman run")
		// plan's bash runs the commands that read, as its prompt says.
		if calls := srv.ModelCalls(); len(calls) < 2 {
			t.Errorf("%d model calls", len(calls))
		} else if ls := calls[1].Get(`messages.@reverse.0.content.#(tool_use_id=="ls1")`).Raw; !strings.Contains(ls, "main.go") || strings.Contains(ls, "may not use") {
			t.Errorf("ls under plan answered %s", ls)
		}
		if _, errs, code := e.run("run", "--agent", "nobody", "hi"); code == 0 || !strings.Contains(errs, "the agents are build, plan") {
			t.Errorf("--agent nobody: exit %d, %s", code, errs)
		}
	})
	t.Run("lsp", func(t *testing.T) {
		e, _ := planWorkspace(t)
		_, c, _, stderr := startLSP(t, e, "--stdio")
		c.initialize(e.workspace, nil)
		if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
			"arguments": []any{map[string]any{"prompt": "make main panic", "agent": "plan"}}}, nil); err != nil {
			t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
		}
		c.await("the end of the turn", isIdle)
		mainUnchanged(t, e, "darman lsp")
	})
	t.Run("acp", func(t *testing.T) {
		e, _ := planWorkspace(t)
		c := startACP(t, e, func(method string, _ json.RawMessage) (any, error) {
			return nil, fmt.Errorf("no %s", method)
		})
		c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
		var res struct {
			SessionID string `json:"sessionId"`
			Modes     struct {
				AvailableModes []struct{ ID string } `json:"availableModes"`
			} `json:"modes"`
		}
		c.mustCall("session/new", map[string]any{"cwd": e.workspace, "mcpServers": []any{}}, &res)
		var ids []string
		for _, m := range res.Modes.AvailableModes {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, " ") != "default accept_edits read_only plan" {
			t.Errorf("the session's modes are %v", ids)
		}
		c.mustCall("session/set_mode", map[string]any{"sessionId": res.SessionID, "modeId": "plan"}, nil)
		if stop := c.prompt(res.SessionID, "make main panic"); stop != "end_turn" {
			t.Errorf("stopReason %q", stop)
		}
		mainUnchanged(t, e, "darman acp")
	})
}

// darman doctor lists the agents with the file each comes from, and a file
// it leaves out with the reason.
func TestDoctorListsAgents(t *testing.T) {
	e := newEnv(t)
	reviewer, err := os.ReadFile("../../agent/agents/testdata/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	e.write(".claude/agents/reviewer.md", string(reviewer))
	e.write(".darman/agent/broken.md", "---\nname: broken\n---\nno description\n")
	out, _, _ := e.run("doctor")
	for _, want := range []string{"plan", "code-reviewer", "subagent, .claude/agents/reviewer.md", ".darman/agent/broken.md", "no description"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
}

// A Claude Code agent file as Claude Code users write it (name,
// description, tools; no mode) runs with darman run --agent, as claude
// --agent runs it, with its tools only; it stays out of a session that
// did not name it.
func TestRunWithAClaudeCodeAgentFile(t *testing.T) {
	e := newEnv(t)
	e.write("main.go", planMain)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\n---\nYou review code and report bugs.\n")
	srv := e.userModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "No bugs."}, {Text: "Built."}}}, "")
	out, errs, code := e.run("run", "--agent", "reviewer", "review main.go")
	if code != 0 || !strings.Contains(out, "No bugs.") {
		t.Fatalf("run --agent reviewer: exit %d\n%s\n%s", code, out, errs)
	}
	first := srv.ModelCalls()[0]
	var tools []string
	for _, n := range first.Get("tools.#.name").Array() {
		tools = append(tools, n.String())
	}
	if strings.Join(tools, ",") != "read,grep" || !strings.Contains(first.Get("system").Raw, "You review code and report bugs.") {
		t.Errorf("the reviewer's turn offered %v with system %.300s", tools, first.Get("system").Raw)
	}
	// A new session without --agent is build's, with every tool.
	e.ok("run", "build it")
	if n := len(srv.ModelCalls()[1].Get("tools").Array()); n <= 2 {
		t.Errorf("a plain run offered %d tools: the reviewer file replaced build", n)
	}
}

// A misspelt tool name in an agent file's tools list is an error naming
// the file, the name it most likely meant and darman's tools, not an
// agent left silently without the tool; Claude Code's tools darman lacks
// and MCP tools of a configured server are accepted.
func TestRunRefusesAnAgentFileWithAnUnknownTool(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Reed, Grep\n---\nYou review code.\n")
	e.write(".claude/agents/searcher.md", "---\nname: searcher\ndescription: Searches the web\ntools: Read, WebSearch, mcp__docs__lookup\n---\nYou search.\n")
	srv := e.userModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Searched."}}}, "")
	_, errs, code := e.run("run", "--agent", "reviewer", "review")
	if code == 0 {
		t.Fatalf("run --agent reviewer with tools Reed: exit 0\n%s", errs)
	}
	for _, want := range []string{"reviewer.md", `unknown tool "Reed"`, `did you mean "read"?`, `"bash"`, `"webfetch"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls for a refused agent", n)
	}
	if out, errs, code := e.run("run", "--agent", "searcher", "search"); code != 0 || !strings.Contains(out, "Searched.") {
		t.Fatalf("run --agent searcher: exit %d\n%s\n%s", code, out, errs)
	}
}
