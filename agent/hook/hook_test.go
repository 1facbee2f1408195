package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/sandbox"
)

// engine runs hooks as darman does: bash -c through tool.ShellCommand
// (no sandbox here: the helper is darman's binary), in a workspace of
// its own.
func engine(t *testing.T, hooks ...hook.Hook) (*hook.Engine, string) {
	t.Helper()
	root := t.TempDir()
	for i := range hooks {
		if hooks[i].Origin == "" {
			hooks[i].Origin = "test.json"
		}
	}
	e, problems, err := hook.New(hook.Options{Hooks: hooks, Root: root, Environ: os.Environ(),
		Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
			return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
		}})
	if err != nil || len(problems) > 0 {
		t.Fatalf("hook.New: %v %v", err, problems)
	}
	return e, root
}

func pre(tool string) hook.Input {
	return hook.Input{Event: hook.PreToolUse, Session: "ses_1", Tool: tool, ToolUseID: "c1", ToolInput: json.RawMessage(`{"path":"a.go","oldString":"x","newString":"y"}`)}
}

// Matchers are Claude Code's: * and empty match all, | lists exact
// names (darman's or Claude's), anything else is a regular expression.
func TestMatchers(t *testing.T) {
	for _, c := range []struct {
		matcher string
		tool    string
		runs    bool
	}{
		{"", "bash", true},
		{"*", "read", true},
		{"Bash", "bash", true},
		{"bash", "bash", true},
		{"Edit|Write", "write", true},
		{"Edit|Write", "bash", false},
		{"Edit, MultiEdit", "multiedit", true},
		{"Bas", "bash", false},
		{"Notebook.*", "bash", false},
		{"^(Read|Grep)$", "grep", true},
		{"Web.*", "webfetch", true},
		{"Edit", "apply_patch", true},
		{"github_.*", "github_create_issue", true},
	} {
		e, _ := engine(t, hook.Hook{Event: hook.PreToolUse, Matcher: c.matcher, Command: "exit 0"})
		if got := e.Run(context.Background(), pre(c.tool)).Ran == 1; got != c.runs {
			t.Errorf("matcher %q, tool %s: ran %v, want %v", c.matcher, c.tool, got, c.runs)
		}
	}
}

// A matcher that is not a valid regular expression leaves its hook out,
// said with its file; an unknown event too.
func TestBadHooksAreReported(t *testing.T) {
	_, problems, err := hook.New(hook.Options{Root: t.TempDir(), Command: func(hook.Hook, string, []string) (*exec.Cmd, error) { return nil, nil },
		Hooks: []hook.Hook{
			{Event: hook.PreToolUse, Matcher: "Bash(", Command: "true", Origin: "a.json"},
			{Event: "PostToolUseFailure", Command: "true", Origin: "b.json"},
		}})
	if err != nil || len(problems) != 2 || !strings.Contains(problems[0], "a.json") || !strings.Contains(problems[1], "PostToolUseFailure") {
		t.Fatalf("%v %q", err, problems)
	}
}

// The output contract: exit 2 blocks with stderr; JSON decisions are
// honoured, the newer and the older spellings; "continue": false stops;
// plain output is context only where the event allows it; other exit
// codes are failures for the user.
func TestOutputContract(t *testing.T) {
	ctx := context.Background()
	// A guard script kept without its executable bit, as a checkout or a
	// copy can leave it.
	noExec := filepath.Join(t.TempDir(), "guard.sh")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		in      hook.Input
		command string
		check   func(hook.Result) bool
	}{
		{"exit 2 blocks", pre("bash"), `echo nope >&2; exit 2`, func(r hook.Result) bool { return r.Block && r.Reason == "nope" }},
		{"exit 2 ignores JSON", pre("bash"), `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo stop >&2; exit 2`, func(r hook.Result) bool { return r.Block && r.Reason == "stop" }},
		{"deny", pre("bash"), `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'`, func(r hook.Result) bool { return r.Block && r.Reason == "no" }},
		{"ask", pre("bash"), `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check it"}}'`, func(r hook.Result) bool { return !r.Block && r.Ask && r.AskReason == "check it" }},
		{"allow", pre("bash"), `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"trusted"}}'`, func(r hook.Result) bool {
			return !r.Block && !r.Ask && r.Allow && r.AllowReason == "trusted"
		}},
		{"bad JSON is a failure", pre("bash"), `echo '{"decision": "block",'`, func(r hook.Result) bool {
			return !r.Block && len(r.Failures) == 1 && strings.Contains(r.Failures[0], "not valid JSON")
		}},
		{"unknown decision is a failure", pre("bash"), `echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}'`, func(r hook.Result) bool {
			return !r.Block && !r.Allow && len(r.Failures) == 1 && strings.Contains(r.Failures[0], `"maybe"`)
		}},
		{"older block", pre("bash"), `echo '{"decision":"block","reason":"old style"}'`, func(r hook.Result) bool { return r.Block && r.Reason == "old style" }},
		{"continue false", pre("bash"), `echo '{"continue":false,"stopReason":"enough","systemMessage":"bye"}'`, func(r hook.Result) bool {
			return r.Stop && r.StopReason == "enough" && len(r.Messages) == 1 && r.Messages[0] == "bye"
		}},
		{"post block", hook.Input{Event: hook.PostToolUse, Tool: "edit"}, `echo '{"decision":"block","reason":"lint failed"}'`, func(r hook.Result) bool { return r.Block && r.Reason == "lint failed" }},
		{"post context", hook.Input{Event: hook.PostToolUse, Tool: "edit"}, `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted"}}'`, func(r hook.Result) bool {
			return len(r.Context) == 1 && r.Context[0] == "formatted"
		}},
		{"post plain is not context", hook.Input{Event: hook.PostToolUse, Tool: "edit"}, `echo formatted`, func(r hook.Result) bool { return len(r.Context) == 0 }},
		{"prompt plain is context", hook.Input{Event: hook.UserPromptSubmit, Prompt: "hi"}, `echo "today is Tuesday"`, func(r hook.Result) bool {
			return len(r.Context) == 1 && r.Context[0] == "today is Tuesday"
		}},
		{"session start plain is context", hook.Input{Event: hook.SessionStart, Source: "startup"}, `echo "branch: main"`, func(r hook.Result) bool {
			return len(r.Context) == 1 && r.Context[0] == "branch: main"
		}},
		{"pre-compact exit 2 is for the user", hook.Input{Event: hook.PreCompact, Trigger: "auto"}, `echo saved >&2; exit 2`, func(r hook.Result) bool {
			return !r.Block && len(r.Messages) == 1 && strings.Contains(r.Messages[0], "saved")
		}},
		{"exit 1 is a failure", pre("bash"), `echo broken >&2; exit 1`, func(r hook.Result) bool {
			return !r.Block && len(r.Failures) == 1 && strings.Contains(r.Failures[0], "exit code 1: broken") && strings.Contains(r.Failures[0], "test.json")
		}},
		{"missing program is a failure", hook.Input{Event: hook.PostToolUse, Tool: "bash"}, `/no/such/hook`, func(r hook.Result) bool { return !r.Block && len(r.Failures) == 1 }},
		// A guard that cannot run blocks the call it guards (Claude Code
		// lets it run).
		{"missing guard blocks", pre("bash"), `/no/such/hook`, func(r hook.Result) bool {
			return r.Block && strings.Contains(r.Reason, "exit code 127: not found") && len(r.Failures) == 1
		}},
		{"unreadable guard blocks", pre("bash"), `/dev/null/guard.sh`, func(r hook.Result) bool {
			return r.Block && strings.Contains(r.Reason, "could not run its program") && len(r.Failures) == 1
		}},
		{"guard not executable blocks", pre("bash"), noExec, func(r hook.Result) bool {
			return r.Block && strings.Contains(r.Reason, "exit code 126: not executable or not readable") && len(r.Failures) == 1
		}},
		{"killed guard blocks", pre("bash"), `kill -9 $$`, func(r hook.Result) bool {
			return r.Block && strings.Contains(r.Reason, "killed by signal") && len(r.Failures) == 1
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := engine(t, hook.Hook{Event: c.in.Event, Command: c.command})
			if r := e.Run(ctx, c.in); r.Ran != 1 || !c.check(r) {
				t.Fatalf("%+v", r)
			}
		})
	}
}

// A hook reads the event in Claude Code's keys: the tool's Claude name,
// its input with Claude's keys beside darman's (file_path absolute), and
// the environment names the project.
func TestInputAndEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "in.json")
	e, root := engine(t, hook.Hook{Event: hook.PreToolUse, Matcher: "Edit", Command: `cat > "` + out + `"; echo "$CLAUDE_PROJECT_DIR|$DARMAN_PROJECT_DIR|$DARMAN_HOOK_EVENT" >> "` + out + `.env"`})
	e.Run(context.Background(), pre("edit"))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	ti, _ := in["tool_input"].(map[string]any)
	if in["tool_name"] != "Edit" || in["hook_event_name"] != "PreToolUse" || in["session_id"] != "ses_1" || in["cwd"] != root ||
		ti["file_path"] != filepath.Join(root, "a.go") || ti["old_string"] != "x" || ti["new_string"] != "y" || ti["oldString"] != "x" {
		t.Fatalf("the hook read %s", b)
	}
	env, _ := os.ReadFile(out + ".env")
	if strings.TrimSpace(string(env)) != root+"|"+root+"|PreToolUse" {
		t.Fatalf("environment: %q", env)
	}
}

// The same command given twice (darman's file and Claude's) runs once;
// the hooks of one event run at the same time: each waits for the
// other's file, which one after the other would never see.
func TestDuplicatesRunOnceAndHooksRunTogether(t *testing.T) {
	a := `touch a; n=0; while [ ! -f b ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done; [ -f b ]`
	b := `touch b; n=0; while [ ! -f a ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done; [ -f a ]`
	e, _ := engine(t,
		hook.Hook{Event: hook.PreToolUse, Command: a, Origin: "darman.json"},
		hook.Hook{Event: hook.PreToolUse, Command: a, Origin: ".claude/settings.json"},
		hook.Hook{Event: hook.PreToolUse, Command: b})
	if hs := e.Hooks(); len(hs) != 2 || hs[0].Origin != "darman.json" {
		t.Fatalf("%+v", hs)
	}
	if r := e.Run(context.Background(), pre("bash")); r.Ran != 2 || len(r.Failures) > 0 {
		t.Fatalf("%+v", r)
	}
}

// A cancelled turn stops its hooks at once, without a failure.
func TestCancelStopsTheHook(t *testing.T) {
	e, _ := engine(t, hook.Hook{Event: hook.PreToolUse, Command: "sleep 60"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan hook.Result)
	go func() { done <- e.Run(ctx, pre("bash")) }()
	select {
	case r := <-done:
		if len(r.Failures) > 0 || r.Block {
			t.Fatalf("%+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hook was not stopped on cancel")
	}
}

// A PreToolUse hook's updatedInput comes back in darman's keys: a Claude
// key the hook changed (file_path, new_string) takes the place of
// darman's, and Claude's keys are dropped.
func TestUpdatedInput(t *testing.T) {
	e, root := engine(t, hook.Hook{Event: hook.PreToolUse, Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"path":"a.go","file_path":"'"$CLAUDE_PROJECT_DIR"'/b.go","oldString":"x","old_string":"x","new_string":"z"}}}'`})
	r := e.Run(context.Background(), pre("edit"))
	var got map[string]any
	if err := json.Unmarshal(r.UpdatedInput, &got); err != nil {
		t.Fatalf("%+v: %v", r, err)
	}
	want := map[string]any{"path": filepath.Join(root, "b.go"), "oldString": "x", "newString": "z"}
	if len(got) != len(want) || got["path"] != want["path"] || got["oldString"] != "x" || got["newString"] != "z" {
		t.Fatalf("updated input %s, want %v", r.UpdatedInput, want)
	}
	bad, _ := engine(t, hook.Hook{Event: hook.PreToolUse, Command: `echo '{"hookSpecificOutput":{"updatedInput":"rm -rf /"}}'`})
	if r := bad.Run(context.Background(), pre("bash")); r.UpdatedInput != nil || len(r.Failures) != 1 {
		t.Fatalf("a string updatedInput: %+v", r)
	}
}

// Every hook reads transcript_path, the file the engine's Transcript
// names; a hook of a type darman does not run is reported, not run.
func TestTranscriptPathAndUnsupportedTypes(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "in.json")
	transcript := filepath.Join(root, "ses_1.jsonl")
	e, problems, err := hook.New(hook.Options{Root: root, Environ: os.Environ(),
		Hooks: []hook.Hook{
			{Event: hook.Stop, Command: `cat > "` + out + `"`, Origin: "a.json"},
			{Event: hook.Stop, Type: "agent", Command: "", Origin: "b.json"},
		},
		Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
			return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
		},
		Transcript: func(_ context.Context, session string) string { return filepath.Join(root, session+".jsonl") }})
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], `b.json: a Stop hook of type "agent" is not supported`) {
		t.Fatalf("%v %q", err, problems)
	}
	if r := e.Run(context.Background(), hook.Input{Event: hook.Stop, Session: "ses_1", StopHookActive: true}); r.Ran != 1 {
		t.Fatalf("%+v", r)
	}
	var in map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &in); err != nil || in["transcript_path"] != transcript || in["stop_hook_active"] != true {
		t.Fatalf("the hook read %s (%v)", b, err)
	}
}

// A prompt hook's question goes to Ask with the event's JSON for
// $ARGUMENTS; {"ok": false} blocks with its reason, an answer that is
// not JSON is a failure, and without Ask the hook is reported, not run.
func TestPromptHooks(t *testing.T) {
	root := t.TempDir()
	var asked string
	answer := `{"ok": false, "reason": "not yet"}`
	opts := hook.Options{Root: root,
		Hooks:   []hook.Hook{{Event: hook.Stop, Type: "prompt", Prompt: "Done? $ARGUMENTS", Origin: "a.json"}},
		Command: func(hook.Hook, string, []string) (*exec.Cmd, error) { return nil, errors.New("no commands here") },
		Ask: func(_ context.Context, system, prompt string) (string, error) {
			asked = prompt
			return answer, nil
		}}
	e, problems, err := hook.New(opts)
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %q", err, problems)
	}
	in := hook.Input{Event: hook.Stop, Session: "ses_1", LastMessage: "all good"}
	if r := e.Run(context.Background(), in); !r.Block || r.Reason != "not yet" || !strings.Contains(asked, `"last_assistant_message":"all good"`) || strings.Contains(asked, "$ARGUMENTS") {
		t.Fatalf("%+v, asked %q", r, asked)
	}
	answer = "Sure, looks done to me."
	if r := e.Run(context.Background(), in); r.Block || len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "not a JSON object") {
		t.Fatalf("%+v", r)
	}
	answer = `{"ok": true}`
	if r := e.Run(context.Background(), in); r.Block || len(r.Failures) != 0 {
		t.Fatalf("%+v", r)
	}
	opts.Ask = nil
	if _, problems, _ := hook.New(opts); len(problems) != 1 || !strings.Contains(problems[0], "no model is configured") {
		t.Fatalf("without a model: %q", problems)
	}
}

// darman's debug log holds what a hook wrote, unless its JSON says
// suppressOutput, as Claude Code keeps such output out of its transcript
// view.
func TestSuppressOutput(t *testing.T) {
	for _, c := range []struct {
		command string
		shown   bool
	}{
		// The number is made by the shell: the command's text, which
		// the log holds, does not have it.
		{`echo "{\"systemMessage\":\"visible-$((7000+731))\"}"`, true},
		{`echo "{\"suppressOutput\":true,\"systemMessage\":\"hidden-$((7000+731))\"}"`, false},
	} {
		var log bytes.Buffer
		root := t.TempDir()
		e, _, err := hook.New(hook.Options{Root: root, Environ: os.Environ(),
			Hooks:  []hook.Hook{{Event: hook.PostToolUse, Command: c.command, Origin: "a.json"}},
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
				return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
			}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.Run(context.Background(), hook.Input{Event: hook.PostToolUse, Tool: "bash"})
		if len(r.Messages) != 1 {
			t.Fatalf("%+v", r)
		}
		if got := strings.Contains(log.String(), "7731"); got != c.shown {
			t.Errorf("%s: the log shows the output: %v, want %v\n%s", c.command, got, c.shown, log.String())
		}
	}
}
