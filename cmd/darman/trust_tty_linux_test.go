package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// onTerminal runs darman with a terminal of its own; what is written to
// the returned master is what the user types.
func (e *env) onTerminal(t *testing.T) *os.File {
	master, slave, _ := testenv.PTYPair(t)
	e.prepare = func(cmd *exec.Cmd) {
		cmd.Stdin = slave
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	}
	return master
}

// On a terminal, the first run in a folder that configures a hook shows
// it and asks; "t" trusts it (the hook runs, and the next run asks
// nothing), a changed hook asks again, "n" leaves it untrusted for this
// run, "v" for good, without asking again.
func TestRunAsksTrustOnATerminal(t *testing.T) {
	e := newEnv(t)
	e.distrust()
	e.userProvider(llmtest.Start(t, llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step { return llmtest.Step{Text: "done"} }}))
	hooks := func(cmd string) string {
		return `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "` + cmd + `"}]}]}}`
	}
	e.write(".claude/settings.json", hooks("echo one >> hook.log"))
	master := e.onTerminal(t)
	const question = "configures what only a folder you trust may:"
	log := filepath.Join(e.workspace, "hook.log")

	master.WriteString("t\n")
	_, errs, code := e.run("run", "hi")
	if code != 0 || !strings.Contains(errs, question) || !strings.Contains(errs, "echo one >> hook.log") {
		t.Fatalf("exit %d; the question does not show the hook:\n%s", code, errs)
	}
	if b, _ := os.ReadFile(log); string(b) != "one\n" {
		t.Errorf("trusted: the hook did not run: %q\n%s", b, errs)
	}
	if _, errs, _ = e.run("run", "hi"); strings.Contains(errs, question) {
		t.Errorf("asked again although nothing changed:\n%s", errs)
	}

	e.write(".claude/settings.json", hooks("echo two >> hook.log"))
	master.WriteString("n\n")
	_, errs, _ = e.run("run", "hi")
	if !strings.Contains(errs, "changed since you trusted it; it now "+question) || !strings.Contains(errs, "echo two >> hook.log") || lineWith(errs, "ignores what would widen") == "" {
		t.Errorf("a changed hook: want the question, then the notice:\n%s", errs)
	}
	master.WriteString("v\n")
	e.run("run", "hi")
	_, errs, _ = e.run("run", "hi")
	if strings.Contains(errs, question) || !strings.Contains(errs, "never to trust") {
		t.Errorf("after never: want no question and the notice:\n%s", errs)
	}
	if b, _ := os.ReadFile(log); string(b) != "one\none\n" {
		t.Errorf("the untrusted hook ran: %q", b)
	}
}

// A folder that configures nothing that needs trust (instructions, a deny
// rule, a stricter sandbox) sees no question and no notice, and no record
// is written.
func TestNothingToTrustAsksNothing(t *testing.T) {
	e := newEnv(t)
	e.distrust()
	srv := llmtest.Start(t, llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step { return llmtest.Step{Text: "done"} }})
	e.userProvider(srv)
	e.write("AGENTS.md", "Use tabs. (instructions-3391)\n")
	e.write("darman.json", `{"permission": {"bash": {"rm *": "deny"}}, "sandbox": {"mode": "required", "protect": ["secrets/**"]}, "agent": {"maxSteps": 10}}`)
	master := e.onTerminal(t)
	master.WriteString("t\n") // would answer a question, were one asked

	out, errs, code := e.run("run", "hi")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(errs, "trust") {
		t.Errorf("a folder with nothing to trust was asked or told about trust:\n%s", errs)
	}
	if exists(e.trustFile()) {
		t.Error("a trust record was written")
	}
	if calls := srv.ModelCalls(); len(calls) == 0 || !strings.Contains(string(calls[0].Body), "instructions-3391") {
		t.Error("the folder's instructions did not reach the model")
	}
}
