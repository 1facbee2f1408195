//go:build unix

package tool_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// fakeTerminal is the editor's terminal as the test scripts it.
type fakeTerminal struct {
	mu   sync.Mutex
	got  []tool.TerminalCommand
	res  tool.TerminalResult
	err  error
	wait bool // block until the call's context ends
}

func (f *fakeTerminal) Run(ctx context.Context, c tool.TerminalCommand) (tool.TerminalResult, error) {
	f.mu.Lock()
	f.got = append(f.got, c)
	f.mu.Unlock()
	if f.wait {
		<-ctx.Done()
		return tool.TerminalResult{}, ctx.Err()
	}
	return f.res, f.err
}

func terminalHarness(t *testing.T, term *fakeTerminal) *harness {
	h := newHarness(t)
	h.tools["bash"] = tool.NewTerminalBash(term, h.tools["bash"])
	return h
}

// TestTerminalBashRunsInTheTerminal: the command runs in the editor's
// terminal after the bash permission, in the workdir asked, and the model
// reads its output and exit status as it would a local command's.
func TestTerminalBashRunsInTheTerminal(t *testing.T) {
	term := &fakeTerminal{res: tool.TerminalResult{Output: "FAIL: TestX\n", ExitCode: 1}}
	h := terminalHarness(t, term)
	h.write("sub/keep.txt", "")
	res := h.run("bash", map[string]any{"command": "go test ./...", "workdir": "sub", "timeout": 5000})
	if !res.IsError || !strings.Contains(res.Output, "FAIL: TestX") || !strings.Contains(res.Output, "Exit code 1.") {
		t.Errorf("result: %+v", res)
	}
	if len(term.got) != 1 || term.got[0].Command != "go test ./..." || term.got[0].Dir != h.path("sub") ||
		term.got[0].Timeout != 5*time.Second || term.got[0].CallID != "call_1" || term.got[0].OutputLimit <= 0 {
		t.Errorf("the terminal got %+v", term.got)
	}
	perms := h.permissions()
	if len(perms) != 1 || perms[0].Permission != permission.Bash || perms[0].Subjects[0] != "go test ./..." {
		t.Errorf("permissions asked: %+v", perms)
	}
}

// TestTerminalBashRefusedNeverRuns: a refused command never reaches the
// terminal, and the model reads the refusal.
func TestTerminalBashRefusedNeverRuns(t *testing.T) {
	term := &fakeTerminal{}
	h := terminalHarness(t, term)
	h.deny(permission.Bash, "not now")
	res := h.run("bash", map[string]any{"command": "rm -rf build"})
	if !res.IsError || !strings.Contains(res.Output, "not now") || len(term.got) != 0 {
		t.Errorf("result %+v, terminal calls %d", res, len(term.got))
	}
}

// TestTerminalBashReportsHowItEnded: a timeout, a signal, a truncated
// output and a terminal that failed each say so to the model; a cancelled
// call is an error of the environment.
func TestTerminalBashReportsHowItEnded(t *testing.T) {
	for _, tc := range []struct {
		res  tool.TerminalResult
		err  error
		want string
	}{
		{tool.TerminalResult{TimedOut: true, ExitCode: -1}, nil, "timed out after 2m0s"},
		{tool.TerminalResult{Signal: "SIGKILL", ExitCode: -1}, nil, "killed by signal SIGKILL"},
		{tool.TerminalResult{Output: "…the end\n", Truncated: true}, nil, "keeps only its end"},
		{tool.TerminalResult{Output: strings.Repeat("line of output\n", 5000)}, nil, "cut to its beginning and end"},
		{tool.TerminalResult{}, errors.New("no terminal left"), "could not run the command: no terminal left"},
	} {
		h := terminalHarness(t, &fakeTerminal{res: tc.res, err: tc.err})
		if res := h.run("bash", map[string]any{"command": "make"}); !strings.Contains(res.Output, tc.want) {
			t.Errorf("want %q in:\n%.500s", tc.want, res.Output)
		}
	}
	h := terminalHarness(t, &fakeTerminal{wait: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		eventually(t, "the command to start", func() bool { return len(h.permissions()) > 0 })
		cancel()
	}()
	if _, err := h.runCtx(ctx, "bash", map[string]any{"command": "sleep 100"}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call returned %v", err)
	}
}

// TestTerminalBashKeepsBackgroundJobsLocal: run_in_background goes to the
// local bash, whose job bash_output reads.
func TestTerminalBashKeepsBackgroundJobsLocal(t *testing.T) {
	term := &fakeTerminal{}
	h := terminalHarness(t, term)
	res := h.run("bash", map[string]any{"command": "echo from-the-job", "run_in_background": true})
	if res.IsError || !strings.Contains(res.Output, "background job") || len(term.got) != 0 {
		t.Fatalf("result %+v, terminal calls %d", res, len(term.got))
	}
}
