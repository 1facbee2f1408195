package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// An agent file's own keys take effect in darman run --agent: its model
// is the one the request names, its temperature is sent, its tools are
// the only ones offered, and its maxSteps ends the turn after that many
// model calls.
func TestRunHonoursAnAgentFilesKeys(t *testing.T) {
	e := newEnv(t)
	e.write("main.go", "package main\n\nfunc main() {}\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("read", `{"path":"main.go"}`)}},
		{Text: "never asked: maxSteps is 1"},
	}})
	e.write(".darman/agent/tester.md", `---
description: Reads and reports
mode: primary
model: anthropic/claude-haiku-4-5
temperature: 0.25
maxSteps: 1
tools: Read, Grep
---
Read, then report.
`)
	out, errs, code := e.run("run", "--agent", "tester", "--format", "json", "read main.go")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls, want 1 (maxSteps)\nstderr: %s", len(calls), errs)
	}
	first := calls[0]
	if m := first.Get("model").String(); m != "claude-haiku-4-5" {
		t.Errorf("the request's model is %q, want the agent's claude-haiku-4-5", m)
	}
	if temp := first.Get("temperature"); !temp.Exists() || temp.Float() != 0.25 {
		t.Errorf("the request's temperature is %s, want the agent's 0.25", temp.Raw)
	}
	var tools []string
	for _, n := range first.Get("tools.#.name").Array() {
		tools = append(tools, n.String())
	}
	if strings.Join(tools, ",") != "read,grep" && strings.Join(tools, ",") != "grep,read" {
		t.Errorf("the agent is offered %v, want only read and grep", tools)
	}
	if !strings.Contains(first.Get("system").Raw, "Read, then report.") {
		t.Errorf("the agent's prompt is not in the system prompt")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var result struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &result); err != nil || result.StopReason != "step_limit" {
		t.Errorf("the result line %q: %v, want stopReason step_limit", lines[len(lines)-1], err)
	}
}

// An agent file's permission key overrides the configuration both ways in
// darman run: it allows a command the defaults would ask about (and no
// one can be asked here), and denies a write the configuration allows.
func TestRunAppliesAnAgentsPermissions(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("bash", `{"command":"touch made","description":"make"}`),
			call("write", `{"path":"written.txt","content":"x\n"}`),
		}},
		{Text: "One of two."},
	}})
	e.configure(`"permission": {"write": "allow", "edit": "allow"}`)
	e.write(".darman/agent/maker.md", `---
description: Makes files, never writes them
mode: primary
permission:
  write: deny
  edit: deny
  bash:
    "touch *": allow
---
Make what is asked.
`)
	out, errs, code := e.run("run", "--agent", "maker", "make and write")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "made")); err != nil {
		t.Errorf("the command the agent allows did not run: %v\nstderr: %s", err, errs)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "written.txt")); err == nil {
		t.Error("the write the agent denies ran: written.txt exists")
	}
	if calls := srv.ModelCalls(); len(calls) != 2 || !strings.Contains(string(calls[1].Body), "denied") {
		t.Errorf("the model does not read that the write was denied (%d calls)", len(calls))
	}
}
