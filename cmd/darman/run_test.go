package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// withModel points the env's darman at a scripted model server speaking
// Anthropic's API, through the project's config file as a user would.
func (e *env) withModel(t *testing.T, script llmtest.Script) *llmtest.Server {
	srv := llmtest.Start(t, script)
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"}
	}`, srv.URL))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	return srv
}

func call(name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// TestRunReadsEditsRunsTestsAndAnswers is the main job end to end: the
// model reads a file, fixes a bug with an edit whose old text has the wrong
// indentation (a tolerant match), runs the tests and answers.
func TestRunReadsEditsRunsTestsAndAnswers(t *testing.T) {
	e := newEnv(t)
	e.write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	e.write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "Reading the code.", ToolCalls: []llmtest.ToolCall{call("read", `{"path":"calc.go"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"calc.go","oldString":"    return a - b","newString":"\treturn a + b"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"go test ./...","description":"run the tests"}`)}},
		{Text: "Fixed: Add subtracted; the tests pass now."},
	}})
	e.vars = append(e.vars, testenv.GoCaches(t)...)

	out, errs, code := e.run("run", "--allow", "edit", "--allow", "bash:go test *", "make TestAdd pass")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(out, "Reading the code.") || !strings.HasSuffix(out, "the tests pass now.\n") {
		t.Errorf("stdout:\n%s", out)
	}
	for _, want := range []string{"✓ read", "✓ edit", "✓ bash"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "calc.go")); !strings.Contains(string(b), "\treturn a + b\n") {
		t.Errorf("calc.go after the edit:\n%s", b)
	}
	calls := srv.ModelCalls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls", len(calls))
	}
	if body := string(calls[1].Body); !strings.Contains(body, "return a - b") {
		t.Errorf("the read result did not reach the model:\n%s", body)
	}
	if body := string(calls[3].Body); !strings.Contains(body, "ok  \\texample.com/calc") {
		t.Errorf("the passing go test output did not reach the model:\n%s", body)
	}
	show := e.ok("sessions", "show", firstSession(t, e))
	for _, want := range []string{"make TestAdd pass", "⚙ read", "⚙ edit", "⚙ bash", "the tests pass now"} {
		if !strings.Contains(show, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show)
		}
	}
}

func firstSession(t *testing.T, e *env) string {
	t.Helper()
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &list); err != nil || len(list) == 0 {
		t.Fatalf("no session: %v", err)
	}
	return list[0].ID
}

// TestRunCompoundCommandIsNotAllowedByPrefix: an allow rule for "git status"
// must not let "git status && rm -rf x" or "echo $(rm x)" run; with no
// terminal to ask, they are rejected and the model is told.
func TestRunCompoundCommandIsNotAllowedByPrefix(t *testing.T) {
	e := newEnv(t)
	victim := e.write("x", "precious")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"git status && rm -rf x"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo $(rm x)"}`)}},
		{Text: "I was not allowed."},
	}})
	out, errs, code := e.run("run", "--allow", "bash:git status*", "--allow", "bash:echo *", "clean up")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Fatalf("x was removed (%v)", err)
	}
	for i, c := range srv.ModelCalls()[1:] {
		if body := string(c.Body); !strings.Contains(body, `"is_error":true`) {
			t.Errorf("call %d: the refusal did not reach the model as an error:\n%s", i+2, body)
		}
	}
	if strings.Count(errs, "✗ bash") != 2 {
		t.Errorf("stderr:\n%s", errs)
	}
}

func TestRunFailedTurnExitsOne(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "x", Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 401, Times: -1}}}}})
	_, errs, code := e.run("run", "hello")
	if code != 1 || !strings.Contains(errs, "the turn failed") || !strings.Contains(errs, "rejected the key from provider.anthropic.apiKey (401)") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if strings.Contains(errs, "sk-ant-test-0123456789") {
		t.Fatal("the key was printed")
	}
}

func TestRunWithoutModelExplains(t *testing.T) {
	e := newEnv(t)
	_, errs, code := e.run("run", "hello")
	if code != 1 || !strings.Contains(errs, "no model") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}

// startRun starts `darman run` with a slow scripted answer and returns once
// it has printed n bytes of the answer, and those bytes.
func startRun(t *testing.T, e *env, n int, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(darmanBin, append([]string{"run"}, args...)...)
	cmd.Dir, cmd.Env = e.workspace, e.vars
	cmd.SysProcAttr = noTerminal()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	printed := make([]byte, n)
	if _, err := io.ReadFull(bufio.NewReader(stdout), printed); err != nil {
		t.Fatalf("no answer streamed: %v", err)
	}
	return cmd, string(printed)
}

func slowAnswer() llmtest.Script {
	words := strings.Repeat("word ", 200)
	return llmtest.Script{Steps: []llmtest.Step{{Text: words, Delay: llmtest.Duration(20 * time.Millisecond)}}}
}

func TestRunInterruptedExits130AndIsSaved(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, slowAnswer())
	cmd, _ := startRun(t, e, 5, "write a lot")
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v, want exit 130", err)
	}
	if show := e.ok("sessions", "show", firstSession(t, e)); !strings.Contains(show, "[cancelled]") {
		t.Fatalf("sessions show after Ctrl-C:\n%s", show)
	}
}

func TestRunKilledMidTurnShowsInterrupted(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, slowAnswer())
	cmd, printed := startRun(t, e, 50, "write a lot")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// Every chunk is stored before it is shown, so what the user saw is
	// in the store.
	show := e.ok("sessions", "show", firstSession(t, e))
	if !strings.Contains(show, "[interrupted") || !strings.Contains(show, strings.TrimSpace(printed)) {
		t.Fatalf("sessions show after kill -9:\n%s", show)
	}
}

func TestDoctorChecksTheModelWithoutPrintingKeys(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "pong"}}})
	e.vars = append(e.vars, "OPENAI_API_KEY=sk-proj-another-secret-key")
	out := e.ok("doctor", "--check-model")
	for _, want := range []string{
		"✓ anthropic/claude-sonnet-4-5",
		"✓ anthropic: " + srv.URL + ", key from provider.anthropic.apiKey",
		"✓ openai: ",
		"key from OPENAI_API_KEY",
		"✓ check",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"sk-ant-test-0123456789", "sk-proj-another-secret-key"} {
		if strings.Contains(out, secret) {
			t.Errorf("doctor printed a key:\n%s", out)
		}
	}
	if n := len(srv.ModelCalls()); n != 1 {
		t.Errorf("--check-model made %d model calls", n)
	}
}

// reviewCommand is a command file that uses every substitution and picks
// its own model.
const reviewCommand = "---\ndescription: Review a file\nmodel: anthropic/claude-opus-4-1\nargument-hint: FILE [FOCUS]\n---\n" +
	"Review $1 with care.\nFocus: $2\nAll: $ARGUMENTS\n@calc.go\nTree: !`printf tree-clean`\n"

func TestRunExpandsACommand(t *testing.T) {
	e := newEnv(t)
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	e.write(".darman/command/review.md", reviewCommand)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Looks good."}}})

	out, errs, code := e.run("run", "--allow", "bash:printf *", "/review", "calc.go", "error handling")
	if code != 0 || out != "Looks good.\n" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	want := "Review calc.go with care.\nFocus: error handling\nAll: calc.go error handling\n" +
		"calc.go:\n```\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n```\nTree: tree-clean\n"
	if got := calls[0].Get("messages.0.content.0.text").String(); got != want {
		t.Errorf("the model was sent\n%s\nwant\n%s", got, want)
	}
	// The command's model runs this turn; the session keeps its own.
	if calls[0].Model != "claude-opus-4-1" {
		t.Errorf("the turn ran on %q, want the command's claude-opus-4-1", calls[0].Model)
	}
	var list []struct{ ID, Model, Title string }
	json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &list)
	if len(list) != 1 || list[0].Model != "anthropic/claude-sonnet-4-5" || list[0].Title != "/review calc.go error handling" {
		t.Fatalf("sessions after the command: %+v", list)
	}
	// The transcript shows what the user typed, not the expansion.
	if show := e.ok("sessions", "show", list[0].ID); !strings.Contains(show, "/review calc.go error handling") || strings.Contains(show, "Review calc.go with care.") {
		t.Errorf("sessions show:\n%s\nwant the typed command, not its expansion", show)
	}
	// A fork at it gives back what was typed, to edit and send again.
	var exp struct {
		Messages []struct{ Message struct{ ID, Role string } }
	}
	json.Unmarshal([]byte(e.ok("sessions", "export", list[0].ID)), &exp)
	var forked struct{ Prompt string }
	json.Unmarshal([]byte(e.ok("sessions", "fork", list[0].ID, exp.Messages[0].Message.ID, "--json")), &forked)
	if forked.Prompt != "/review calc.go error handling" {
		t.Errorf("the fork's prompt is %q, want the typed command", forked.Prompt)
	}
}

// TestRunBuiltinCommands: darman run runs darman's built-in commands as
// the editors do: /help answers with the commands without calling the
// model, /model switches the session's model for the turns after.
func TestRunBuiltinCommands(t *testing.T) {
	e := newEnv(t)
	e.write(".darman/command/review.md", reviewCommand)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "On haiku."}}})
	out, errs, code := e.run("run", "/help")
	if code != 0 || !strings.Contains(out, "/review FILE [FOCUS] — Review a file") || !strings.Contains(out, "/clear") {
		t.Fatalf("darman run /help: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if out, errs, code := e.run("run", "-c", "/model", "anthropic/claude-haiku-4-5"); code != 0 || !strings.Contains(out, "claude-haiku-4-5 from now on") {
		t.Fatalf("darman run /model: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Fatalf("the built-in commands called the model %d times", n)
	}
	e.ok("run", "-c", "hello")
	if calls := srv.ModelCalls(); len(calls) != 1 || calls[0].Model != "claude-haiku-4-5" {
		t.Errorf("after /model the turn went to %+v", calls)
	}
}

func TestRunCommandShellNeedsPermission(t *testing.T) {
	e := newEnv(t)
	e.write("calc.go", "package calc\n")
	e.write(".darman/command/review.md", reviewCommand)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}})
	_, errs, code := e.run("run", "/review", "calc.go")
	if code != 1 || !strings.Contains(errs, "command /review runs printf tree-clean, which needs your permission") ||
		!strings.Contains(errs, `--allow "bash:printf tree-clean"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls for a command that did not expand", n)
	}
}

func TestRunUnknownCommandListsTheCommands(t *testing.T) {
	e := newEnv(t)
	e.write(".darman/command/review.md", reviewCommand)
	e.write(".darman/command/git/commit.md", "Commit the staged changes.\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "It is on PATH."}}})

	_, errs, code := e.run("run", "/revue", "calc.go")
	want := "unknown command /revue; the commands here are:\n  /clear  — Start the conversation afresh"
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "\n  /git:commit\n") || !strings.Contains(errs, "\n  /review FILE [FOCUS]  — Review a file\n") {
		t.Fatalf("exit %d, stderr:\n%s\nwant it to contain:\n%s, /git:commit and /review", code, errs, want)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls for an unknown command", n)
	}
	if out := e.ok("sessions", "list", "--json"); strings.Contains(out, `"id"`) {
		t.Errorf("an unknown command made a session: %s", out)
	}
	// A path is not a command.
	if out := e.ok("run", "/usr/bin/env is missing"); out != "It is on PATH.\n" {
		t.Errorf("stdout %q", out)
	}
	if got := srv.ModelCalls()[0].Get("messages.0.content.0.text").String(); got != "/usr/bin/env is missing" {
		t.Errorf("the model was sent %q", got)
	}
}

// withGopls puts gopls on darman's PATH (after the rest, or first), keeps
// the machine's Go caches and turns gopls's telemetry off in the test's
// home (testenv); it returns gopls's path, or skips the test.
func (e *env) withGopls(t *testing.T, first bool) string {
	t.Helper()
	gopls := testenv.Gopls(t)
	for i, v := range e.vars {
		if rest, ok := strings.CutPrefix(v, "PATH="); ok {
			if first {
				e.vars[i] = "PATH=" + filepath.Dir(gopls) + string(os.PathListSeparator) + rest
			} else {
				e.vars[i] = v + string(os.PathListSeparator) + filepath.Dir(gopls)
			}
		}
	}
	e.vars = testenv.SetEnv(e.vars, testenv.GoCaches(t)...)
	testenv.TelemetryOff(t, e.home)
	return gopls
}

// TestRunEditReportsLanguageServerErrors: an edit that breaks the build gets
// gopls's error, with its line, in the tool result the model reads; the
// edit that fixes it gets none.
func TestRunEditReportsLanguageServerErrors(t *testing.T) {
	e := newEnv(t)
	e.withGopls(t, false)
	e.write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"calc.go","oldString":"return a + b","newString":"return a + \"b\""}`)}},
		{ToolCalls: []llmtest.ToolCall{call("diagnostics", `{"path":"calc.go"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"calc.go","oldString":"return a + \"b\"","newString":"return a + b"}`)}},
		{Text: "Back to a clean build."},
	}})
	// A cold gopls on a loaded machine can take longer than the default
	// wait to publish; the wait ends as soon as it does.
	e.configure(`"lsp": {"go": {"diagnosticsWait": "60s"}}`)
	out, errs, code := e.run("run", "--allow", "edit", "break it and fix it")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls", len(calls))
	}
	first := string(calls[1].Body)
	if !strings.Contains(first, "LSP errors detected in this file, please fix:") || !strings.Contains(first, "calc.go: L4: ") {
		t.Fatalf("the broken edit's result lacks gopls's error on line 4:\n%s", first)
	}
	if asked := string(calls[2].Body); !strings.Contains(asked, "calc.go has 1 problem(s):") || !strings.Contains(asked, "calc.go: L4:") {
		t.Fatalf("the diagnostics tool's answer:\n%s", asked)
	}
	if n := strings.Count(string(calls[3].Body), "LSP errors detected"); n != 1 {
		t.Fatalf("after the fixing edit the history holds %d error reports, want only the first", n)
	}
}

// TestRunTaskRunsASubAgent: the task tool runs a sub-agent in a child
// session; its tool calls show nested under the task, its answer goes back
// to the parent model, and the child is stored as a sub-task session.
func TestRunTaskRunsASubAgent(t *testing.T) {
	e := newEnv(t)
	e.write("calc.go", "package calc\n")
	srv := e.withModel(t, llmtest.Script{
		Conversations: []llmtest.Conversation{{Match: "child job", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("list", `{"path":"."}`)}},
			{Text: "child found calc.go"},
		}}},
		Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("task", `{"description":"look around","prompt":"child job: list the files and report"}`)}},
			{Text: "The sub-agent found calc.go."},
		},
	})
	out, errs, code := e.run("run", "what is here?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if out != "The sub-agent found calc.go.\n" {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(errs, "  ↳ ✓ list") || !strings.Contains(errs, "✓ task") {
		t.Errorf("stderr:\n%s", errs)
	}
	var parentFinal string
	for _, c := range srv.ModelCalls() {
		if c.Conversation == "what is here?" && c.Step == 1 {
			parentFinal = string(c.Body)
		}
	}
	if !strings.Contains(parentFinal, "child found calc.go") {
		t.Errorf("the sub-agent's answer did not reach the parent model:\n%s", parentFinal)
	}
	var all []struct{ ID, ParentID string }
	json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &all)
	if len(all) != 1 {
		t.Errorf("sessions list shows %d sessions; sub-tasks should stay out of it", len(all))
	}
}

// TestRunLeavesNoProcessBehind: a background job the model started, and a
// server a command left running, are stopped when darman run ends.
func TestRunLeavesNoProcessBehind(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("bash", `{"command":"sleep 6123","run_in_background":true}`),
			call("bash", `{"command":"(sleep 6124 &) ; echo started"}`),
		}},
		{Text: "Started them."},
	}})
	out, errs, code := e.run("run", "--allow", "bash:*", "start things")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	ps, _ := exec.Command("ps", "-eo", "args").Output()
	for _, leftover := range []string{"sleep 6123", "sleep 6124"} {
		if strings.Contains(string(ps), leftover) {
			t.Errorf("%q is still running after darman run ended", leftover)
		}
	}
}

// TestRunCallsAnMCPServersTool: a real MCP server from npm (the reference
// "everything" server, installed by `make deps`) configured in darman.json;
// the model calls its echo tool as everything_echo, under the mcp
// permission, and the answer reaches the model.
func TestRunCallsAnMCPServersTool(t *testing.T) {
	bin, _ := filepath.Abs("../../.cache/npm/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("the MCP reference server is not installed: run `make deps`")
	}
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("everything_echo", `{"message":"hello from darman"}`)}},
		{Text: "The server echoed."},
	}})
	cfg, _ := os.ReadFile(filepath.Join(e.workspace, "darman.json"))
	withMCP := strings.Replace(string(cfg), `"model":`, fmt.Sprintf(`"mcpServers": {"everything": {"command": %q}}, "model":`, bin), 1)
	e.write("darman.json", withMCP)
	e.vars = append(e.vars, "PATH="+os.Getenv("PATH"))

	out, errs, code := e.run("run", "--allow", "mcp:everything_*", "echo something")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if !strings.Contains(string(calls[0].Body), `"name":"everything_echo"`) {
		t.Fatalf("the MCP tool was not offered to the model:\n%.2000s", calls[0].Body)
	}
	if !strings.Contains(string(calls[1].Body), "hello from darman") || strings.Contains(string(calls[1].Body), `"is_error":true`) {
		t.Fatalf("the echo did not come back:\n%s", calls[1].Body)
	}
}

// TestRunJSONEndsWithOneResult: --format json ends with one result line
// holding the whole answer (the last message's, not the chunks to
// stitch), how the turn ended, its usage and cost, how long it took and
// the session; a failed turn's result says so.
func TestRunJSONEndsWithOneResult(t *testing.T) {
	e := newEnv(t)
	e.write("notes.txt", "hello\n")
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "Let me read.", ToolCalls: []llmtest.ToolCall{call("read", `{"path":"notes.txt"}`)}},
		{Text: "It says hello, twice over.", Chunks: 5, Usage: &llmtest.Usage{Input: 120, Output: 7}},
	}})
	out := e.ok("run", "--format", "json", "what do the notes say?")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res struct {
		Type       string
		SessionID  string
		Result     string
		StopReason string
		IsError    bool
		Usage      struct{ Input, Output int64 }
		CostUSD    float64
		DurationMS *int64
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatal(err)
	}
	results := strings.Count(out, `"type":"result"`)
	if results != 1 || res.Type != "result" || res.Result != "It says hello, twice over." || res.StopReason != "stop" || res.IsError ||
		res.Usage.Input < 120 || res.Usage.Output < 7 || res.CostUSD <= 0 || res.DurationMS == nil {
		t.Errorf("%d result lines; the last line: %+v\n%s", results, res, lines[len(lines)-1])
	}
	var list []struct{ ID string }
	json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &list)
	if len(list) != 1 || list[0].ID != res.SessionID {
		t.Errorf("result session %q, sessions %+v", res.SessionID, list)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, `{"seq":`) {
			t.Errorf("an event line is not an event: %s", l)
		}
	}
}
