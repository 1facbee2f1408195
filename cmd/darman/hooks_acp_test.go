package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// Through darman acp: hooks that fail after they ran (an exit code,
// output that is not JSON) reach the client as a line of the answer, and
// the turn goes on; a hook's "allow" answers the call's permission
// question, so the client is not asked. (A guard that cannot run blocks
// its call: TestGuardHookThatCannotRunBlocksTheCall.)
// Then agent files that change are announced: the modes (as config
// options) and the commands follow them, and /NAME of a new primary agent
// switches the session's mode without a model call.
func TestACPShowsHookFailuresAndAgentChanges(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo ok > by-hook.txt","description":"write"}`)}},
		{Text: "Written."},
	}})
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 1},
		"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
			{"type": "command", "command": "echo 'audit log unreachable' >&2; exit 1"},
			{"type": "command", "command": "echo '{\"oops'"},
			{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"the project trusts echo\"}}'"}
		]}]}
	}`, srv.URL))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	var asked atomic.Int32
	c := startACP(t, e, func(method string, _ json.RawMessage) (any, error) {
		if method == "session/request_permission" {
			asked.Add(1)
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil
		}
		return nil, fmt.Errorf("no %s", method)
	})
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	id := c.newSession(e.workspace)
	if stop := c.prompt(id, "write by-hook.txt"); stop != "end_turn" {
		t.Fatalf("stopReason %q\nstderr: %s", stop, c.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "by-hook.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("the call the hook allowed did not run: %q %v", b, err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the client was asked %d times although a hook allowed the call", n)
	}
	shown := strings.Join(c.updates("agent_message_chunk"), "\n")
	for _, want := range []string{"audit log unreachable", "not valid JSON", "the project trusts echo", "Written."} {
		if !strings.Contains(shown, want) {
			t.Errorf("the answer does not show %q:\n%s", want, shown)
		}
	}
	if calls := srv.ModelCalls(); len(calls) != 2 {
		t.Errorf("%d model calls: the failing hooks ended the turn", len(calls))
	}

	e.write(".darman/agent/docs.md", "---\ndescription: Writes the docs\nmode: primary\n---\nWrite docs.\n")
	reviewer, err := os.ReadFile("../../agent/agents/testdata/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	e.write(".claude/agents/reviewer.md", string(reviewer))
	cmds := c.await("available_commands_update with the new agents", func(n acpNote) bool {
		s := string(n.Params)
		return strings.Contains(s, "available_commands_update") && strings.Contains(s, `"name":"docs"`) && strings.Contains(s, `"name":"code-reviewer"`)
	})
	if !strings.Contains(string(cmds.Params), "Hand a task to the code-reviewer sub-agent") {
		t.Errorf("available_commands_update: %s", cmds.Params)
	}
	c.await("config_option_update with the docs mode", func(n acpNote) bool {
		s := string(n.Params)
		return strings.Contains(s, "config_option_update") && strings.Contains(s, `"value":"docs"`)
	})
	before := len(srv.ModelCalls())
	if stop := c.prompt(id, "/docs"); stop != "end_turn" {
		t.Fatalf("/docs: stopReason %q", stop)
	}
	c.await("current_mode_update to docs", func(n acpNote) bool {
		return strings.Contains(string(n.Params), `"currentModeId":"docs"`)
	})
	if after := len(srv.ModelCalls()); after != before {
		t.Errorf("/docs alone called the model %d times", after-before)
	}

	os.Remove(filepath.Join(e.workspace, ".darman/agent/docs.md"))
	c.await("current_mode_update back to default once docs is gone", func(n acpNote) bool {
		return strings.Contains(string(n.Params), `"currentModeId":"default"`)
	})
}
