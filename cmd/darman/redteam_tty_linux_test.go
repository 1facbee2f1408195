//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/testenv"
)

// TestRedTeamCommandHasNoTerminal: darman run has a real pseudo-terminal
// as its controlling terminal, as in a user's shell. An allowed command
// has none: tty_nr in its /proc/self/stat is 0, /dev/tty does not open,
// and typing a line into darman's terminal (TIOCSTI through /dev/tty, or
// through the terminal opened by its path) leaves the terminal's input
// queue empty, so the user's shell reads nothing once darman exits.
func TestRedTeamCommandHasNoTerminal(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	e := newEnv(t)
	script, err := os.ReadFile(filepath.Join("..", "..", "internal", "sandbox", "testdata", "type_into_tty.py"))
	if err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.workspace, "type.py"), string(script))
	slave, queued := testenv.PTY(t)
	e.prepare = func(cmd *exec.Cmd) {
		cmd.Stdin = slave
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	}
	hostile := []string{
		`tty; echo "TTY_NR $(cut -d' ' -f7 /proc/self/stat)"; echo TRIED-TTY`,
		`python3 type.py`,
		// darman's terminal by its path: darman's fd 0, or every one.
		`python3 -c '
import fcntl, glob, os, termios
try:
    paths = [os.readlink("/proc/%d/fd/0" % os.getppid())]
except OSError as e:
    print("NO-FD-LINK", e.strerror)
    paths = glob.glob("/dev/pts/[0-9]*")
print("TERMINALS", paths)
for path in paths:
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        for c in b"echo TYP" b"ED-BY-PATH\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        print("TYPED" "-BY-PATH", path)
    except OSError as e:
        print("REFUSED-BY-PATH", path, e.strerror)
'`,
	}
	srv, out, errs, code := runHostile(t, e, hostile, "done")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	seen := out + errs
	for _, c := range srv.ModelCalls() {
		seen += string(c.Body)
	}
	for _, want := range []string{"not a tty", "TRIED-TTY", "TTY_NR 0", "TYPED-NOTHING no terminal", "TERMINALS ['/dev/pts/", "REFUSED-BY-PATH /dev/pts/"} {
		if !strings.Contains(seen, want) {
			t.Errorf("%q is not in what the model was shown", want)
		}
	}
	for _, leak := range []string{"TYPED-A-LINE", "TYPED-BY-PATH"} {
		if strings.Contains(seen, leak) {
			t.Errorf("%s: the command reached darman's terminal", leak)
		}
	}
	if n := queued(); n != 0 {
		t.Errorf("%d bytes were typed into darman's terminal", n)
	}
}
