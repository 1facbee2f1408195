package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// claudeGuard is a PreToolUse hook as Claude Code's docs write one: it
// reads the call on stdin and exits 2 with a reason on stderr to block
// it. It also writes its environment where the test reads it.
const claudeGuard = `#!/bin/sh
input=$(cat)
env > "$CLAUDE_PROJECT_DIR/hook-env.txt"
touch "$HOME/escaped" 2>/dev/null
if printf '%s' "$input" | grep -q '"tool_name":"Bash"' && printf '%s' "$input" | grep -q 'touch marker'; then
  echo "Blocked by the project's guard: no markers here" >&2
  exit 2
fi
exit 0
`

// claudeSettings is .claude/settings.json in the shape of Claude Code's
// hooks documentation.
const claudeSettings = `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"
          }
        ]
      }
    ]
  }
}
`

// A project's .claude/settings.json with a hook in Claude Code's shape
// works in darman run unchanged: the hook blocks one bash call (its
// marker file is never made), lets the next one run, the model reads the
// hook's reason, and the hook's environment holds none of darman's
// secrets, and it runs in the sandbox like bash: it cannot write outside
// the workspace. doctor lists the hook with its file.
func TestRunRunsClaudeCodeHooks(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"touch marker"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo fine > allowed.txt"}`)}},
		{Text: "One was blocked, one ran."},
	}})
	guard := e.write(".claude/hooks/guard.sh", claudeGuard)
	if err := os.Chmod(guard, 0o755); err != nil {
		t.Fatal(err)
	}
	e.write(".claude/settings.json", claudeSettings)
	const secret = "hunter2-do-not-leak-0042"
	e.vars = append(e.vars, "DARMAN_TEST_SECRET_TOKEN="+secret)

	out, errs, code := e.run("run", "--allow", "bash", "--allow", "edit", "make a marker, then write allowed.txt")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "marker")); err == nil {
		t.Fatal("the hook did not block the call: marker exists")
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "allowed.txt")); err != nil || string(b) != "fine\n" {
		t.Fatalf("the allowed call did not run: %q %v\nstderr: %s", b, err, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 3 || !strings.Contains(string(calls[1].Body), "Blocked by the project's guard: no markers here") {
		t.Fatalf("the hook's reason did not reach the model (%d calls)", len(calls))
	}
	env, err := os.ReadFile(filepath.Join(e.workspace, "hook-env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{secret, "DARMAN_TEST_SECRET_TOKEN", "sk-ant-test-0123456789"} {
		if strings.Contains(string(env), leak) {
			t.Errorf("the hook's environment holds %q", leak)
		}
	}
	if !strings.Contains(string(env), "CLAUDE_PROJECT_DIR="+e.workspace) || !strings.Contains(string(env), "DARMAN_PROJECT_DIR="+e.workspace) {
		t.Errorf("the hook's environment lacks the project dir:\n%s", env)
	}

	if _, err := os.Stat(filepath.Join(e.home, "escaped")); err == nil {
		t.Error("the hook wrote outside the workspace: it did not run in the sandbox")
	}

	doctor := e.ok("doctor")
	settings := filepath.Join(e.workspace, ".claude", "settings.json")
	if !strings.Contains(doctor, "PreToolUse") || !strings.Contains(doctor, settings) || !strings.Contains(doctor, "guard.sh") {
		t.Errorf("doctor does not list the hook with its file:\n%s", doctor)
	}
}

// Through darman lsp, darman's own hooks key: a UserPromptSubmit hook's
// output reaches the model with the prompt, a PreToolUse hook exiting 2
// keeps a bash call from running and the model reads why, and a hook
// that fails is shown to the user as a warning, as is a Claude Code hook
// of a type darman does not run (agent).
func TestLSPRunsHooks(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"touch marker"}`)}},
		{Text: "Blocked, as the project wants."},
	}})
	e.write(".darman/config.json", `{"hooks": {
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'the release branch is frozen (ctx-5521)'"}]}],
		"PreToolUse": [
			{"matcher": "bash", "hooks": [{"type": "command", "command": "echo 'no shell in this repo' >&2; exit 2"}]},
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo 'audit log unreachable' >&2; exit 1", "timeout": 5}]}
		]
	}}`)
	e.write(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "agent", "prompt": "Is it done?"}]}]}}`)
	_, c, _, stderr := startLSP(t, e, "--stdio")
	c.initialize(e.workspace, nil)
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "make a marker"}}}, nil); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
	}
	c.await("the end of the turn", isIdle)
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls\nstderr: %s", len(calls), stderr)
	}
	if !strings.Contains(string(calls[0].Body), "ctx-5521") {
		t.Errorf("the UserPromptSubmit context is not in the first request:\n%s", calls[0].Body)
	}
	if !strings.Contains(string(calls[1].Body), "no shell in this repo") {
		t.Errorf("the hook's stderr is not in the second request:\n%s", calls[1].Body)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "marker")); err == nil {
		t.Error("the blocked call ran: marker exists")
	}
	c.await("the failing hook shown as a warning", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "audit log unreachable")
	})
	c.await("the agent hook shown as unsupported", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), `is not supported: darman runs command and prompt hooks`)
	})
}
