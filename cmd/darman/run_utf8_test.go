//go:build unix

package main_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A prompt that is not UTF-8 (a Latin-1 file piped in, such an argument)
// is refused saying so and how to convert it, before any model request:
// no record of the turn could keep it, and while the store opened (another
// darman holding it) darman run panicked on it; with the store open the
// turn ran without the prompt ("the request has no messages").
func TestRunRefusesAPromptNotInUTF8(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Answered."}}})
	check := func(how string, code int, stdout, stderr string) {
		t.Helper()
		if code != 1 || strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") ||
			!strings.Contains(stderr, "not UTF-8") || !strings.Contains(stderr, "offset 3") || !strings.Contains(stderr, "iconv") {
			t.Errorf("%s: exit %d, want 1 saying the prompt is not UTF-8 and how to convert it\nstdout: %s\nstderr: %s", how, code, stdout, stderr)
		}
	}
	// While the store opens.
	unlock := lockStore(t, e)
	cmd := exec.Command(darmanBin, "run", "caf\xe9 au lait")
	cmd.Dir, cmd.Env = e.workspace, e.vars
	cmd.SysProcAttr = noTerminal()
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a darman that waits for the store
	}
	unlock()
	<-done
	check("an argument while the store opens", cmd.ProcessState.ExitCode(), out.String(), errs.String())
	// On stdin, with the store open.
	e.prepare = func(c *exec.Cmd) { c.Stdin = strings.NewReader("caf\xe9 au lait\n") }
	stdout, stderr, code := e.run("run")
	check("stdin", code, stdout, stderr)
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("the model was asked %d times for a prompt darman could not keep", n)
	}
}
