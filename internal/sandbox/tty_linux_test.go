//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/darman-dev/darman/internal/testenv"
)

// ttyVictimEnv, set to the script's path, makes the test binary a process
// with a controlling terminal that starts the hostile command in-thread.
const ttyVictimEnv = "DARMAN_TEST_TTY_VICTIM"

// TestCommandCannotTypeIntoItsTerminal: a command shares darman's
// controlling terminal (its own process group, the same session), and a
// line it typed there with TIOCSTI would be read by the user's shell once
// darman exits, outside the sandbox; a vhangup of it would have the
// kernel send SIGHUP to darman. Confined in-thread and through the
// helper's command line, the command types nothing (the terminal's input
// queue stays empty) and hangs nothing up (the process whose terminal it
// is lives).
func TestCommandCannotTypeIntoItsTerminal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	f := newFixture(t, Options{})
	script, err := filepath.Abs(filepath.Join("testdata", "type_into_tty.py"))
	if err != nil {
		t.Fatal(err)
	}
	argv, env, err := f.sb.CommandLine([]string{"python3", script}, Request{Root: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(argv[0], argv[1:]...)
	helper.Env = os.Environ()
	for k, v := range env {
		helper.Env = append(helper.Env, k+"="+v)
	}
	ttyVictim := victim("TestTTYVictim", ttyVictimEnv, script)
	for _, c := range []struct {
		name string
		cmd  *exec.Cmd
	}{{"in-thread", ttyVictim}, {"helper", helper}} {
		t.Run(c.name, func(t *testing.T) {
			slave, queued := testenv.PTY(t)
			var out bytes.Buffer
			c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = slave, &out, &out
			c.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := c.cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "TYPED-") {
				t.Fatalf("the command did not run:\n%s", out.String())
			}
			if strings.Contains(out.String(), "HUNG-UP\n") && !strings.Contains(out.String(), "NOT-HUNG-UP") {
				t.Errorf("the command hung its terminal up:\n%s", out.String())
			}
			if n := queued(); n != 0 || strings.Contains(out.String(), "TYPED-A-LINE") {
				t.Errorf("the command typed %d bytes into its terminal:\n%s", n, out.String())
			}
		})
	}
}

// TestTTYVictim is the process of TestCommandCannotTypeIntoItsTerminal
// whose terminal the command shares.
func TestTTYVictim(t *testing.T) {
	script, f := asVictim(t, ttyVictimEnv, "TestCommandCannotTypeIntoItsTerminal")
	var out bytes.Buffer
	f.startInThread(t, Request{}, "python3 "+script, &out).Wait()
	os.Stdout.Write(out.Bytes())
}
