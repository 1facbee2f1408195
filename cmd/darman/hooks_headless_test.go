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
// hook, and without a hook the question is refused, as before, saying
// why and how to allow it.
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			srv := e.withModel(t, script)
			if c.settings != "" {
				e.write(".claude/settings.json", c.settings)
			}
			out, errs, code := e.run(append(append([]string{"run"}, c.args...), "make a marker")...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			t.Logf("stderr:\n%s", errs)
			_, err := os.Stat(filepath.Join(e.workspace, "marker"))
			if ran := err == nil; ran != c.ran {
				t.Fatalf("marker made: %v, want %v\nstderr: %s", ran, c.ran, errs)
			}
			calls := srv.ModelCalls()
			if len(calls) != 2 {
				t.Fatalf("%d model calls\nstderr: %s", len(calls), errs)
			}
			for _, want := range c.model {
				if !strings.Contains(string(calls[1].Body), want) {
					t.Errorf("the model does not read %q:\n%s", want, calls[1].Body)
				}
			}
			for _, want := range c.user {
				if !strings.Contains(errs, want) {
					t.Errorf("darman run does not tell the user %q:\n%s", want, errs)
				}
			}
		})
	}
}
