//go:build linux

package child_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/testenv"
)

// victimEnv makes the test binary the process a test attacks through a
// child it starts; its value says which attack.
const victimEnv = "DARMAN_TEST_CHILD_VICTIM"

// typeScript is what a command tries against the terminal of the process
// that started it, with nothing but the kernel in the way (child.Start
// alone, no sandbox, so no seccomp rule for TIOCSTI): it prints whether it
// has a controlling terminal, opens /dev/tty and types a line into it, and
// (when not root, whom the kernel lets type into any terminal it can open)
// types into that process's terminal opened by its path.
const typeScript = `
import fcntl, os, sys, termios
print("TTY", os.popen("tty").read().strip())
stat = open("/proc/self/stat").read()
print("TTY_NR", stat[stat.rindex(")") + 2:].split()[4])
print("SESSION-LEADER", os.getsid(0) == os.getpid())
def typeinto(fd, how):
    for c in b"echo TYP" b"ED-LINE\n":
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        except OSError as e:
            print("TYPED-NOTHING", how, e.strerror)
            return
    print("TYPED-A-LINE", how)
try:
    typeinto(os.open("/dev/tty", os.O_RDWR), "/dev/tty")
except OSError as e:
    print("NO-DEV-TTY", e.strerror)
if os.geteuid() != 0:
    path = os.readlink("/proc/%d/fd/0" % os.getppid())
    typeinto(os.open(path, os.O_RDWR | os.O_NOCTTY), "by path")
print("DONE")
`

// TestChildHasNoControllingTerminal: a process whose controlling terminal
// is a real pseudo-terminal (as darman run in a terminal, or an editor
// started from one) starts a command with child.Start. The command is in
// a session of its own with no controlling terminal: tty says so,
// /dev/tty does not open, and its TIOCSTI types nothing into the
// terminal's input queue, without any seccomp filter.
func TestChildHasNoControllingTerminal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	slave, queued := testenv.PTY(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTerminalVictim$", "-test.v")
	cmd.Env = append(os.Environ(), victimEnv+"=type")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"TTY not a tty", "TTY_NR 0\n", "SESSION-LEADER True", "NO-DEV-TTY No such device or address", "DONE"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q is not in what the command printed:\n%s", want, got)
		}
	}
	if os.Geteuid() != 0 && !strings.Contains(got, "TYPED-NOTHING by path") {
		t.Errorf("the command did not try, or managed, to type into the terminal by its path:\n%s", got)
	}
	if n := queued(); n != 0 || strings.Contains(got, "TYPED-A-LINE") {
		t.Errorf("the command typed %d bytes into its parent's terminal:\n%s", n, got)
	}
}

// TestChildDiesWithItsStarter: in a session of its own, a child still
// gets the parent-death signal: when the process that started it is
// killed, the child (and only it was started) is gone too.
func TestChildDiesWithItsStarter(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTerminalVictim$", "-test.v")
	cmd.Env = append(os.Environ(), victimEnv+"=die")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var pid int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "CHILD %d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("the victim named no child")
	}
	cmd.Process.Kill()
	go io.Copy(io.Discard, stdout)
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child %d outlived the process that started it", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestTerminalVictim is the process the tests above attack.
func TestTerminalVictim(t *testing.T) {
	var cmd *exec.Cmd
	switch os.Getenv(victimEnv) {
	case "type":
		cmd = exec.Command("python3", "-c", typeScript)
	case "die":
		cmd = exec.Command("sleep", "100")
	default:
		t.Skip("run by TestChildHasNoControllingTerminal and TestChildDiesWithItsStarter")
	}
	p, err := child.Start(cmd, child.Options{MergeStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout.Close()
	fmt.Printf("CHILD %d\n", p.PID())
	io.Copy(os.Stdout, p.Stdout)
	<-p.Exited()
}

// TestSameSessionChildLeadsAGroupInOurs: with Options.SameSession the
// child stays in the starter's session (so in its scheduling autogroup)
// but still leads a group of its own, which Stop ends whole: a process it
// started in the background dies with it.
func TestSameSessionChildLeadsAGroupInOurs(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; exec sleep 60")
	p, err := child.Start(cmd, child.Options{SameSession: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout.Close()
	defer p.Stderr.Close()
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	background, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the background pid %q: %v", line, err)
	}
	ourSession, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{p.PID(), background} {
		sid, err := unix.Getsid(pid)
		if err != nil {
			t.Fatal(err)
		}
		pgid, err := syscall.Getpgid(pid)
		if err != nil {
			t.Fatal(err)
		}
		if sid != ourSession || pgid != p.PID() {
			t.Fatalf("process %d: session %d, group %d; want our session %d and the child's group %d", pid, sid, pgid, ourSession, p.PID())
		}
	}
	p.Stop(time.Second)
	if child.GroupAlive(p.PID()) {
		t.Fatal("the child's group outlived Stop")
	}
	if err := syscall.Kill(background, 0); err == nil {
		// A zombie (reaped by init later) is dead; only a running one fails.
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", background))
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			t.Fatalf("the background sleep %d outlived Stop (state %s)", background, f[0])
		}
	}
}
