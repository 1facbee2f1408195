//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamCannotKillDarmanThroughItsThread: darman starts a command
// from a thread of its own that shares the command's Landlock domain
// while the command runs, and a fatal signal to one thread of a process
// kills the whole process. An allowed command tries to SIGKILL each of
// darman's threads every way (internal/sandbox/testdata/signal_darman.py:
// kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfds, a file
// whose owner the kernel signals, RLIMIT_CPU 0), with bash's kill, and
// through darman's process group: darman lives, the turn finishes, and the
// same command still kills its own background child and runs timeout.
func TestRedTeamCannotKillDarmanThroughItsThread(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the raw system calls need it")
	}
	e := newEnv(t)
	script, err := os.ReadFile(filepath.Join("..", "..", "internal", "sandbox", "testdata", "signal_darman.py"))
	if err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.workspace, "attack.py"), string(script))
	hostile := []string{
		`VICTIM_TIDS=$DARMAN_TIDS python3 attack.py $PPID`,
		`for t in /proc/$PPID/task/*; do kill -9 ${t##*/}; done; kill -9 -$PPID; kill -STOP $PPID; echo TRIED-BASH-KILL`,
		`sleep 100 & kill -9 $!; wait $!; echo CHILD-KILLED $?; timeout 1 sleep 5; echo TIMEOUT $?`,
	}
	srv, out, errs, code := runHostile(t, e, hostile, "TURN-FINISHED")
	if code != 0 {
		t.Fatalf("darman did not survive: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(out, "TURN-FINISHED") {
		t.Errorf("the turn did not finish:\nstdout: %s\nstderr: %s", out, errs)
	}
	var seen string
	for _, c := range srv.ModelCalls() {
		seen += string(c.Body)
	}
	for _, want := range []string{"TRIED-EVERY-SIGNAL", "TRIED-BASH-KILL", "CHILD-KILLED 137", "TIMEOUT 124"} {
		if !strings.Contains(seen, want) {
			t.Errorf("%s is not in what the model was shown", want)
		}
	}
}
