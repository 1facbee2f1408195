package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// allowTouch is a PreToolUse hook in Claude Code's documented JSON shape
// that allows the model's touch commands without asking.
const allowTouch = `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
	"command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"markers are fine here\"}}'"}]}]}}`

// In darman run with no terminal, where no one can be asked, a
// PreToolUse hook's "allow" answers the call's permission question as it
// does in the interactive fronts and in Claude Code's headless mode: the
// call the defaults would ask about runs. A deny rule still wins over the
// hook, and without a hook, or with one that says nothing, the question
// is refused, as before, saying why and how to allow it.
func TestRunHookAllowAnswersWithoutATerminal(t *testing.T) {
	script := llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"touch marker","description":"make the marker"}`)}},
		{Text: "Done."},
	}}
	cases := []struct {
		name     string
		settings string   // .claude/settings.json; "" for none
		args     []string // darman run's flags
		ran      bool     // whether the marker is made
		model    []string // what the model reads in the call's result
		user     []string // what darman run tells the user
	}{
		{name: "hook allows", settings: allowTouch, ran: true,
			user: []string{"A PreToolUse hook allowed bash", "markers are fine here"}},
		{name: "deny rule wins", settings: allowTouch, args: []string{"--deny", "bash:touch *"},
			model: []string{"is denied by the rule", "touch *"}},
		{name: "no hook", model: []string{"no one can be asked in this non-interactive session"},
			user: []string{`--allow "bash:touch marker"`}},
		{name: "a hook that says nothing", settings: `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat > /dev/null"}]}]}}`,
			model: []string{"no one can be asked in this non-interactive session"}, user: []string{`--allow "bash:touch marker"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			srv := e.withModel(t, script)
			if c.settings != "" {
				e.write(".claude/settings.json", c.settings)
			}
			runOneCall(t, e, srv, c.args, runOutcome{made: []string{"marker"}, ran: c.ran, model: c.model, user: c.user})
		})
	}
}

// A hook's "allow" does not answer a protected path's question: without a
// terminal, a write to .vscode/tasks.json (which VS Code runs) is refused
// although the hook allowed every call, while the same hook's allow of an
// ordinary write holds.
func TestRunHookAllowLeavesProtectedPathsToTheRules(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("write", `{"path":"notes.txt","content":"fine\n"}`),
			call("write", `{"path":".vscode/tasks.json","content":"{\"tasks\": []}\n"}`),
		}},
		{Text: "One of two."},
	}})
	e.write(".claude/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command",
		"command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`)
	out, errs, code := e.run("run", "write both")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || string(b) != "fine\n" {
		t.Errorf("the write the hook allowed did not run: %q %v\nstderr: %s", b, err, errs)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, ".vscode", "tasks.json")); err == nil {
		t.Error("the hook's allow wrote a protected path: .vscode/tasks.json exists")
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), `protected_path \".vscode/tasks.json\"`) {
		t.Errorf("the model does not read the protected path's refusal (%d calls)", len(calls))
	}
	if !strings.Contains(errs, `--allow "protected_path:.vscode/tasks.json"`) {
		t.Errorf("darman run does not say how to allow the protected path:\n%s", errs)
	}
}

// Every file hooks are read from runs its hooks in darman run: darman's
// config, the project's .claude/settings.json and settings.local.json,
// and the user's ~/.claude/settings.json.
func TestRunRunsHooksFromEveryFile(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Noted."}}})
	hooks := func(word string) string {
		return `"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'context from ` + word + `'"}]}]}`
	}
	says := func(word string) string { return "{" + hooks(word) + "}" }
	e.configure(hooks("darman.json"))
	e.write(".claude/settings.json", says("the project settings"))
	e.write(".claude/settings.local.json", says("the local settings"))
	e.write(filepath.Join(e.home, ".claude", "settings.json"), says("the user settings"))
	out, errs, code := e.run("run", "hello")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls\nstderr: %s", len(calls), errs)
	}
	for _, from := range []string{"darman.json", "the project settings", "the local settings", "the user settings"} {
		if !strings.Contains(string(calls[0].Body), "context from "+from) {
			t.Errorf("the hook of %s did not run: its context is not in the request", from)
		}
	}
}
