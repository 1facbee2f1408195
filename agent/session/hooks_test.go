package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/sandbox"
	"github.com/darman-dev/darman/internal/testenv"
)

// hooked is a fixture whose service runs hooks with the real bash tool,
// in a workspace of its own.
type hooked struct {
	*fixture
	root string
}

func withHooks(t *testing.T, script llmtest.Script, hooks ...hook.Hook) *hooked {
	t.Helper()
	return withHooksAnd(t, script, nil, nil, hooks...)
}

// withHooksAnd is withHooks with the service's options changed by more
// and questions answered by asker.
func withHooksAnd(t *testing.T, script llmtest.Script, more func(*session.Options), asker permission.Asker, hooks ...hook.Hook) *hooked {
	t.Helper()
	root := t.TempDir()
	for i := range hooks {
		hooks[i].Origin = "test"
	}
	engine, problems, err := hook.New(hook.Options{
		Hooks: hooks, Root: root, Environ: os.Environ(),
		Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
			return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
		},
	})
	if err != nil || len(problems) > 0 {
		t.Fatalf("hook.New: %v %v", err, problems)
	}
	t.Cleanup(func() { engine.Close() })
	var bash []tool.Tool
	for _, tl := range tool.Builtins(tool.Options{NoRipgrep: true}) {
		if tl.Info().Name == "bash" {
			bash = append(bash, tl)
		}
	}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: bash, asker: asker, service: func(o *session.Options) {
		o.Hooks = engine
		if more != nil {
			more(o)
		}
	}})
	return &hooked{fixture: f, root: root}
}

func bashCall(id, command string) llmtest.ToolCall {
	args, _ := json.Marshal(map[string]string{"command": command})
	return llmtest.ToolCall{ID: id, Name: "bash", Arguments: args}
}

func (h *hooked) run(t *testing.T, prompt string) (session.Result, []agent.Event) {
	t.Helper()
	var evs []agent.Event
	res, err := h.svc.Run(context.Background(), session.Turn{Session: h.sess.ID, Prompt: session.Text(prompt),
		Events: func(u session.Update) { evs = append(evs, u.Event) }})
	if err != nil {
		t.Fatal(err)
	}
	return res, evs
}

func notices(evs []agent.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == agent.EventNotice {
			b.WriteString(e.Text + "\n")
		}
	}
	return b.String()
}

// A PreToolUse hook that exits 2 stops a bash call before it runs, and
// the model's next request carries the hook's standard error.
func TestPreToolUseExit2BlocksBash(t *testing.T) {
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Understood."},
	}}, hook.Hook{Event: hook.PreToolUse, Matcher: "Bash", Command: `echo "touching files is not allowed here" >&2; exit 2`})
	res, _ := h.run(t, "make a marker")
	if res.Finish != agent.FinishStop {
		t.Fatalf("finish %s: %s", res.Finish, res.Error)
	}
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err == nil {
		t.Fatal("the blocked command ran: marker exists")
	}
	calls := h.srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "touching files is not allowed here") {
		t.Fatalf("the hook's stderr did not reach the model (%d calls):\n%s", len(calls), calls[len(calls)-1].Body)
	}
}

// A PreToolUse hook's JSON permissionDecision "deny" blocks the call with
// its reason; a hook whose matcher names another tool does not run.
func TestPreToolUseJSONDeny(t *testing.T) {
	deny := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy forbids markers"}}'`
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Understood."},
	}},
		hook.Hook{Event: hook.PreToolUse, Matcher: "Edit|Write", Command: "touch wrong-matcher-ran"},
		hook.Hook{Event: hook.PreToolUse, Matcher: "bash", Command: deny})
	h.run(t, "make a marker")
	for _, f := range []string{"marker", "wrong-matcher-ran"} {
		if _, err := os.Stat(filepath.Join(h.root, f)); err == nil {
			t.Errorf("%s exists", f)
		}
	}
	if calls := h.srv.ModelCalls(); !strings.Contains(string(calls[len(calls)-1].Body), "policy forbids markers") {
		t.Fatalf("the reason did not reach the model:\n%s", calls[len(calls)-1].Body)
	}
}

// A PostToolUse hook reads the call on its standard input, the tool's
// output included, in Claude Code's keys.
func TestPostToolUseReceivesTheOutput(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "post.json")
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "echo hello-from-bash")}},
		{Text: "Done."},
	}}, hook.Hook{Event: hook.PostToolUse, Matcher: "*", Command: "cat > " + strconv.Quote(seen)})
	h.run(t, "say hello")
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Session   string `json:"session_id"`
		Event     string `json:"hook_event_name"`
		Cwd       string `json:"cwd"`
		Tool      string `json:"tool_name"`
		ToolUseID string `json:"tool_use_id"`
		Input     struct {
			Command string `json:"command"`
		} `json:"tool_input"`
		Response struct {
			Output string `json:"output"`
			Stdout string `json:"stdout"`
		} `json:"tool_response"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if in.Event != "PostToolUse" || in.Tool != "Bash" || in.Session != string(h.sess.ID) || in.Cwd != h.root ||
		in.ToolUseID != "c1" || in.Input.Command != "echo hello-from-bash" ||
		!strings.Contains(in.Response.Output, "hello-from-bash") || !strings.Contains(in.Response.Stdout, "hello-from-bash") {
		t.Fatalf("the hook read:\n%s", b)
	}
}

// A UserPromptSubmit hook's output is context the model's request holds,
// besides the prompt; one that exits 2 ends the turn before the model is
// called, its reason shown.
func TestUserPromptSubmitAddsContextOrBlocks(t *testing.T) {
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Noted."}}},
		hook.Hook{Event: hook.UserPromptSubmit, Command: `if grep -q forbidden; then echo "that prompt is forbidden" >&2; exit 2; fi; echo "the build runs with make ci (ctx-7731)"`})
	h.run(t, "how do I build?")
	calls := h.srv.ModelCalls()
	if len(calls) != 1 || !strings.Contains(string(calls[0].Body), "ctx-7731") || !strings.Contains(string(calls[0].Body), "how do I build?") {
		t.Fatalf("the hook's context is not in the request:\n%s", calls[0].Body)
	}

	res, _ := h.run(t, "something forbidden")
	if res.Finish != agent.FinishError || !strings.Contains(res.Error, "that prompt is forbidden") {
		t.Fatalf("finish %s, error %q", res.Finish, res.Error)
	}
	if n := len(h.srv.ModelCalls()); n != 1 {
		t.Fatalf("the blocked prompt reached the model: %d calls", n)
	}
}

// A hook that hangs is stopped at its timeout with every process it
// started, the user is told, and the turn goes on without the call it
// guards: a PreToolUse hook that gave no answer blocks, and the model is
// told why.
func TestHangingHookIsKilledAtItsTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Done."},
	}}, hook.Hook{Event: hook.PreToolUse, Matcher: "Bash", Timeout: time.Second,
		Command: "sleep 300 & echo $! > " + strconv.Quote(pidFile) + "; wait"})
	res, evs := h.run(t, "make a marker")
	if res.Finish != agent.FinishStop {
		t.Fatalf("finish %s: %s", res.Finish, res.Error)
	}
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err == nil {
		t.Fatal("the call ran although its guard timed out")
	}
	if calls := h.srv.ModelCalls(); !strings.Contains(string(calls[len(calls)-1].Body), "blocked because its guard") {
		t.Fatalf("the model was not told why the call was blocked:\n%s", calls[len(calls)-1].Body)
	}
	if !strings.Contains(notices(evs), "did not finish within 1s") {
		t.Fatalf("the user was not told; notices:\n%s", notices(evs))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the hook's sleep (pid "+strconv.Itoa(pid)+") to be gone", 5*time.Second, func() bool {
		p, err := os.FindProcess(pid)
		return err != nil || p.Signal(syscall.Signal(0)) != nil
	})
}

// A Stop hook that exits 2 keeps the turn going with its reason for the
// model; told that it is active, it lets the turn end.
func TestStopHookContinuesTheTurn(t *testing.T) {
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{{Text: "All done."}, {Text: "Tests run, all done."}}},
		hook.Hook{Event: hook.Stop, Command: `if grep -q '"stop_hook_active":true'; then exit 0; fi; echo "run the tests before you stop" >&2; exit 2`})
	res, evs := h.run(t, "finish up")
	calls := h.srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "run the tests before you stop") {
		t.Fatalf("%d model calls; the last:\n%s", len(calls), calls[len(calls)-1].Body)
	}
	if res.Finish != agent.FinishStop || res.Text != "Tests run, all done." {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(notices(evs), "kept the turn going") {
		t.Errorf("notices:\n%s", notices(evs))
	}
}

// A hook that fails (exit 1) is shown to the user and blocks nothing.
func TestFailingHookIsShownNotFatal(t *testing.T) {
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Done."},
	}}, hook.Hook{Event: hook.PreToolUse, Command: `echo "lint config missing" >&2; exit 1`})
	res, evs := h.run(t, "make a marker")
	if res.Finish != agent.FinishStop {
		t.Fatalf("finish %s: %s", res.Finish, res.Error)
	}
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err != nil {
		t.Fatal("the call did not run")
	}
	if n := notices(evs); !strings.Contains(n, "exit code 1") || !strings.Contains(n, "lint config missing") {
		t.Fatalf("notices:\n%s", n)
	}
}

// SessionStart runs before a session's first turn in the service, its
// output context for that turn; SessionEnd runs when the service closes.
func TestSessionStartAndEnd(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{{Text: "one"}, {Text: "two"}}},
		hook.Hook{Event: hook.SessionStart, Matcher: "startup", Command: `echo start >> ` + strconv.Quote(log) + `; echo "on branch feature-x (ctx-2291)"`},
		hook.Hook{Event: hook.SessionEnd, Command: `grep -q '"reason":"other"' && echo end >> ` + strconv.Quote(log)})
	h.run(t, "first")
	h.run(t, "second")
	calls := h.srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[0].Body), "ctx-2291") {
		t.Fatalf("the SessionStart context is not in the first request:\n%s", calls[0].Body)
	}
	if strings.Count(string(calls[1].Body), "ctx-2291") != 1 {
		t.Errorf("SessionStart ran again for the second turn:\n%s", calls[1].Body)
	}
	h.svc.Close()
	if b, _ := os.ReadFile(log); string(b) != "start\nend\n" {
		t.Fatalf("the hooks ran: %q", b)
	}
}

// A sub-task's end runs SubagentStop, not Stop: a SubagentStop hook that
// blocks keeps the sub-agent going with its reason, and the parent's
// Stop runs once, for the parent.
func TestSubagentStop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Count the files", Steps: []llmtest.Step{{Text: "Three files."}, {Text: "Three files, checked."}}},
		{Match: "How many files?", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "count files", "Count the files in the workspace.")}},
			{Text: "There are three."},
		}},
	}}
	h := withHooksAnd(t, script, withTasks, nil,
		hook.Hook{Event: hook.SubagentStop, Command: `echo sub >> ` + strconv.Quote(log) + `; if grep -q '"stop_hook_active":true'; then exit 0; fi; echo "double-check the count" >&2; exit 2`},
		hook.Hook{Event: hook.Stop, Command: `echo stop >> ` + strconv.Quote(log)})
	res, _ := h.run(t, "How many files?")
	if res.Text != "There are three." {
		t.Fatalf("result %+v", res)
	}
	var child []string
	for _, c := range h.srv.ModelCalls() {
		if strings.Contains(c.Get("messages.0").Raw, "Count the files") {
			child = append(child, string(c.Body))
		}
	}
	if len(child) != 2 || !strings.Contains(child[1], "double-check the count") {
		t.Fatalf("%d sub-agent calls; the SubagentStop reason did not reach the sub-agent", len(child))
	}
	if b, _ := os.ReadFile(log); string(b) != "sub\nsub\nstop\n" {
		t.Fatalf("the hooks ran: %q", b)
	}
}

// A permission question runs Notification beside it.
func TestNotificationOnPermissionQuestion(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "note.json")
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.AllowOnce}}
	h := withHooksAnd(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Done."},
	}}, func(o *session.Options) {
		o.Rules = []permission.Rule{{Permission: "*", Pattern: "*", Action: permission.Ask}}
	}, asker,
		hook.Hook{Event: hook.Notification, Matcher: "permission_prompt", Command: "cat > " + strconv.Quote(seen)})
	h.run(t, "make a marker")
	testenv.Eventually(t, "the Notification hook's input", 5*time.Second, func() bool {
		b, _ := os.ReadFile(seen)
		return strings.Contains(string(b), `"notification_type":"permission_prompt"`) && strings.Contains(string(b), "touch marker")
	})
}

// A PreToolUse hook's "ask" asks the user (permission hook) even where
// the rules allow the call itself; a rejection keeps it from running.
func TestPreToolUseAskAsksTheUser(t *testing.T) {
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.RejectOnce, Message: "not now"}}
	h := withHooksAnd(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Done."},
	}}, func(o *session.Options) {
		o.Rules = []permission.Rule{{Permission: "*", Pattern: "*", Action: permission.Ask}, {Permission: permission.Bash, Pattern: "*", Action: permission.Allow}}
	}, asker,
		hook.Hook{Event: hook.PreToolUse, Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"touching files needs a look"}}'`})
	h.run(t, "make a marker")
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err == nil {
		t.Fatal("the rejected call ran")
	}
	asker.mu.Lock()
	defer asker.mu.Unlock()
	if len(asker.asked) != 1 || asker.asked[0].Permission != "hook" || !strings.Contains(asker.asked[0].Title, "touching files needs a look") {
		t.Fatalf("asked %+v", asker.asked)
	}
	if calls := h.srv.ModelCalls(); !strings.Contains(string(calls[len(calls)-1].Body), "not now") {
		t.Fatal("the rejection did not reach the model")
	}
}

// PreCompact runs before the history is summarized, told the trigger.
func TestPreCompactRunsBeforeSummarizing(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "compact.json")
	root := t.TempDir()
	engine, _, err := hook.New(hook.Options{
		Hooks: []hook.Hook{{Event: hook.PreCompact, Matcher: "auto", Command: "cat > " + strconv.Quote(seen), Origin: "test"}},
		Root:  root, Environ: os.Environ(),
		Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
			return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	var steps atomic.Int32
	f := newFixture(t, fixtureOptions{root: root, script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if isSummaryCall(c) {
			return llmtest.Step{Text: "Goal: read the logs. Remains: the rest."}
		}
		if k := int(steps.Add(1)); k <= 8 {
			return llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog(fmt.Sprintf("call_%d", k), fmt.Sprintf("t%d", k))}}
		}
		return llmtest.Step{Text: "All clean."}
	}}, tools: []tool.Tool{logTool{size: 5000}}, models: tinyModel, service: func(o *session.Options) { o.Hooks = engine }})
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Read the logs t1 to t8.")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v %v", msg, err)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the PreCompact hook did not run: %v", err)
	}
	if !strings.Contains(string(b), `"hook_event_name":"PreCompact"`) || !strings.Contains(string(b), `"trigger":"auto"`) {
		t.Fatalf("the hook read %s", b)
	}
}
