package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// userModel points the user's own configuration at a scripted model, with
// the extra keys given.
func (e *env) userModel(t *testing.T, script llmtest.Script, extra string) *llmtest.Server {
	t.Helper()
	srv := llmtest.Start(t, script)
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"}%s
	}`, srv.URL, extra))
	return srv
}

// darman run's stderr is for a person: each thing said once, in words —
// a failed MCP server as a warning line (no raw log records), a
// permission refusal without "permission denied: permission denied:", a
// hook's block with its reason, and a failed turn's reason once.
func TestRunStderrSaysEachThingOnce(t *testing.T) {
	e := newEnv(t)
	e.userModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("bash", `{"command":"rm -rf gone","description":"remove"}`),
			call("bash", `{"command":"curl -s example.com","description":"fetch"}`),
		}},
		{Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 400, Type: "invalid_request_error", Message: "the scripted server refuses this", Times: -1}}},
	}}, `, "mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}`)
	e.write(filepath.Join(e.home, ".claude", "settings.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
		"command": "grep -q curl && { echo 'no network from here' >&2; exit 2; }; exit 0"}]}]}}`)
	_, errs, code := e.run("run", "--deny", "bash:rm *", "clean up")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the turn failed)\n%s", code, errs)
	}
	for _, bad := range []string{"level=", "time=", "permission denied: permission denied", "blocked the call:\n"} {
		if strings.Contains(errs, bad) {
			t.Errorf("stderr has %q:\n%s", bad, errs)
		}
	}
	for _, want := range []string{
		"! mcp server gone failed",
		`✗ bash permission denied: bash "rm -rf gone" is denied by the rule`,
		"blocked the call: no network from here",
		"the scripted server refuses this",
		"darman: the turn failed; it is saved in session ses_",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if n := strings.Count(errs, "the scripted server refuses this"); n != 1 {
		t.Errorf("the turn's failure is said %d times:\n%s", n, errs)
	}
	// Asked for, the log lines are there.
	if _, errs, _ := e.run("run", "--log-level", "warn", "again"); !strings.Contains(errs, "level=WARN") {
		t.Errorf("--log-level warn shows no log line:\n%s", errs)
	}
}
