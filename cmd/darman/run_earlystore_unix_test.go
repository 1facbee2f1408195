//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// lockStore takes the store's owner lock as a darman that does not answer
// would hold it: every darman that opens the store waits until unlock.
func lockStore(t *testing.T, e *env) (unlock func()) {
	t.Helper()
	os.MkdirAll(e.dataDir(), 0o700)
	f, err := os.OpenFile(filepath.Join(e.dataDir(), "owner.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	done := false
	unlock = func() {
		if !done {
			done = true
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
			f.Close()
		}
	}
	t.Cleanup(unlock)
	return unlock
}

// startLockedRun starts `darman run --format json prompt` and waits for
// its model request, which comes while the store is still locked.
func startLockedRun(t *testing.T, e *env, srv *llmtest.Server, prompt string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(darmanBin, "run", "--format", "json", prompt)
	cmd.Dir, cmd.Env = e.workspace, e.vars
	cmd.SysProcAttr = noTerminal()
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	asked := len(srv.ModelCalls())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(15 * time.Second); len(srv.ModelCalls()) == asked; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no model request while the store opened (locked by another darman)\nstdout: %s\nstderr: %s", out.String(), errs.String())
		}
	}
	return cmd, &out, &errs
}

// A new session's first model request needs no open store: it goes out
// while another darman holds the store (darman waits for it as before),
// and once the store is free the session is stored whole, the user's
// message first.
func TestRunAsksTheModelWhileTheStoreOpens(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Answered while the store was locked."}, {Text: "Second."}}})
	unlock := lockStore(t, e)
	cmd, out, errs := startLockedRun(t, e, srv, "say it early")
	time.Sleep(100 * time.Millisecond) // the answer is in; the store still locked
	unlock()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("darman run: %v\nstdout: %s\nstderr: %s", err, out, errs)
	}
	if !strings.Contains(out.String(), `"result":"Answered while the store was locked."`) {
		t.Errorf("the result line:\n%s", out)
	}
	// The record as the store keeps it: the title the turn gave it and
	// the count of its messages, the user's and the answer's.
	var list []struct {
		Title    string
		Messages int
	}
	if err := json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &list); err != nil || len(list) != 1 ||
		list[0].Title != "say it early" || list[0].Messages != 2 {
		t.Fatalf("sessions list: %+v, %v\n%s", list, err, e.ok("sessions", "export", firstSession(t, e)))
	}
	show := e.ok("sessions", "show", firstSession(t, e))
	user, answer := strings.Index(show, "say it early"), strings.Index(show, "Answered while the store was locked.")
	if user < 0 || answer < user {
		t.Fatalf("the session as stored:\n%s", show)
	}
	// The turn continued from the store has the first one's history.
	e.ok("run", "-c", "and again")
	calls := srv.ModelCalls()
	if last := string(calls[len(calls)-1].Body); !strings.Contains(last, "say it early") || !strings.Contains(last, "Answered while the store was locked.") {
		t.Fatalf("the continued session's request lacks the first turn:\n%s", last)
	}
}

// A store that turns out damaged once the model was asked fails the turn
// saying what is wrong and how to repair it; the answer is shown, and the
// store is left as it was for the repair.
func TestRunStoreFailingAfterTheRequestFailsTheTurn(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "first turn", Steps: []llmtest.Step{{Text: "First."}}},
		{Match: "second turn", Steps: []llmtest.Step{{Text: "The answer survives."}}}}})
	e.ok("run", "first turn")
	tables, _ := filepath.Glob(filepath.Join(e.storeDir(), "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the first turn left no table")
	}
	info, _ := os.Stat(tables[0])
	if err := os.Truncate(tables[0], info.Size()/2); err != nil {
		t.Fatal(err)
	}
	before := storeFiles(t, e.storeDir())
	unlock := lockStore(t, e)
	cmd, out, errs := startLockedRun(t, e, srv, "second turn")
	unlock()
	err := cmd.Wait()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("darman run on a damaged store: %v, want exit 1\nstdout: %s\nstderr: %s", err, out, errs)
	}
	if s := errs.String(); !strings.Contains(s, "the turn is not saved") || !strings.Contains(s, "darman sessions repair") ||
		strings.Contains(s, "panic") || strings.Contains(s, "goroutine") {
		t.Errorf("stderr:\n%s", s)
	}
	if !strings.Contains(out.String(), `"result":"The answer survives."`) || !strings.Contains(out.String(), `"isError":true`) {
		t.Errorf("the result line:\n%s", out)
	}
	if after := storeFiles(t, e.storeDir()); !reflect.DeepEqual(before, after) {
		t.Errorf("the damaged store changed: %v -> %v", before, after)
	}
}

// A turn interrupted while another darman holds the store (and does not
// let go) says that its records wait for the store, and a second
// interrupt quits: the turn's last records waited for the store with
// every interrupt caught, and darman run could only be killed.
func TestRunInterruptedWhileTheStoreIsHeldQuitsAtTheSecond(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Never shown."}}})
	lockStore(t, e)
	cmd, out, errs := startLockedRun(t, e, srv, "say it")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cmd.Process.Signal(os.Interrupt)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errs.String(), "interrupt again"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no word after the interrupt\nstdout: %s\nstderr: %s", out, errs)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("darman run quit with 0 after two interrupts, the turn unsaved")
		}
	case <-time.After(20 * time.Second): // a liveness bound
		cmd.Process.Kill()
		t.Fatalf("darman run did not quit at the second interrupt\nstdout: %s\nstderr: %s", out, errs)
	}
	if strings.Contains(out.String(), "Never shown.") {
		t.Errorf("an answer that was never stored was shown:\n%s", out)
	}
}
