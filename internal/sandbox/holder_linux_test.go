//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// heldFixture is a fixture whose workspace is a git repository with
// darman.json, where commands are started by a namespace holder: darman
// (this test) may not mount, but may make a user namespace. Elsewhere it
// skips, saying why.
func heldFixture(t *testing.T) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	f := newFixture(t, Options{})
	switch c := f.sb.caps; {
	case c.threadNS:
		t.Skip("this process may mount (root): commands with protected paths are confined in-thread; run as another user (uid 65534) for the holder")
	case c.pool == nil:
		t.Skipf("no namespace holder here: %+v, %s", c, f.sb.Status().Reason)
	}
	f.gitInit(t)
	return f
}

// gitInit makes the workspace a git repository with a darman.json.
func (f *fixture) gitInit(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	write(t, filepath.Join(f.ws, "darman.json"), "{}\n")
}

// startHeldScript starts script with bash in the workspace as
// internal/child starts a command (a group of its own, the parent-death
// signal, its output on a pipe), checks the holder starts it, and returns
// the command and its output's read end.
func (f *fixture) startHeldScript(t *testing.T, script string) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = f.ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := f.sb.Wrap(cmd, Request{Root: f.ws}); err != nil {
		t.Fatal(err)
	}
	if m, ok := cmd.Err.(*inThread); !ok || m.pool == nil {
		t.Fatalf("the command is not to be started by the namespace holder: %v", cmd.Err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = Start(cmd)
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	return cmd, r
}

// runHeld runs script to its end: its output and how it ended.
func (f *fixture) runHeld(t *testing.T, script string) (string, *os.ProcessState) {
	t.Helper()
	cmd, r := f.startHeldScript(t, script)
	out, _ := io.ReadAll(r)
	r.Close()
	cmd.Wait()
	return string(out), cmd.ProcessState
}

func (f *fixture) holderPID(t *testing.T) int {
	t.Helper()
	pl := f.sb.caps.pool
	pl.mu.Lock()
	defer pl.mu.Unlock()
	h := pl.m[realOr(f.ws)]
	if h == nil {
		t.Fatal("no holder for the workspace")
	}
	return h.pid
}

// TestHolderConfinesAndProtects: a command the holder starts cannot write
// .git/hooks, .git/config or darman.json, nor outside the workspace, nor
// read the key in home; it writes elsewhere in the workspace, and how it
// ends (its code, a signal, timeout's 124) comes back as darman's own
// child's would. A .git/config that darman's side replaces (git config
// writes a new file and renames it over, which unmounts the holder's
// read-only mount there) is read-only again for the next command.
func TestHolderConfinesAndProtects(t *testing.T) {
	f := heldFixture(t)
	cfg := filepath.Join(f.ws, ".git", "config")
	before, _ := os.ReadFile(cfg)
	marker := filepath.Join(f.outside, "marker")
	out, st := f.runHeld(t, strings.Join([]string{
		"echo evil > .git/hooks/x && echo WROTE-HOOK",
		"echo '[core] fsmonitor = touch " + marker + "' >> .git/config && echo WROTE-CONFIG",
		"echo '{\"hooks\":1}' > darman.json && echo WROTE-DARMAN-JSON",
		"mv .git .git-old && echo MOVED-GIT",
		"echo pwned > " + marker + " && echo WROTE-OUTSIDE",
		"cat " + filepath.Join(f.home, ".ssh", "id_rsa"),
		"echo inside > inside.txt && echo WROTE-INSIDE",
		"grep -c CapEff:.0000000000000000 /proc/self/status",
		"exit 3",
	}, "\n"))
	for _, bad := range []string{"WROTE-HOOK", "WROTE-CONFIG", "WROTE-DARMAN-JSON", "MOVED-GIT", "WROTE-OUTSIDE", "TOPSECRET"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "WROTE-INSIDE\n1\n") {
		t.Errorf("the command could not write inside the workspace, or has capabilities:\n%s", out)
	}
	if st.ExitCode() != 3 {
		t.Errorf("exit = %v, want 3", st)
	}
	for _, p := range []string{marker, filepath.Join(f.ws, ".git", "hooks", "x"), filepath.Join(f.ws, ".git-old")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
	if b, _ := os.ReadFile(cfg); !bytes.Equal(b, before) {
		t.Errorf(".git/config changed:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "darman.json")); string(b) != "{}\n" {
		t.Errorf("darman.json = %q", b)
	}

	// How it ends.
	for _, c := range []struct {
		script string
		code   int
		signal syscall.Signal
	}{
		{"kill -9 $$", -1, syscall.SIGKILL},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"timeout 0.2 sleep 5", 124, 0},
		{"sleep 100 & kill -9 $!; wait $!", 137, 0},
	} {
		_, st := f.runHeld(t, c.script)
		ws := st.Sys().(syscall.WaitStatus)
		if c.signal != 0 && (!ws.Signaled() || ws.Signal() != c.signal) || c.signal == 0 && st.ExitCode() != c.code {
			t.Errorf("%s ended %v, want code %d signal %v", c.script, st, c.code, c.signal)
		}
	}

	// darman's side rewrites .git/config as git does: a new file renamed
	// over the old one.
	if out, err := exec.Command("git", "-C", f.ws, "config", "darman.test", "yes").CombinedOutput(); err != nil {
		t.Fatalf("git config outside: %v: %s", err, out)
	}
	now, _ := os.ReadFile(cfg)
	if out, _ := f.runHeld(t, "echo evil >> .git/config && echo WROTE-CONFIG"); strings.Contains(out, "WROTE-CONFIG") {
		t.Errorf("after darman's side replaced .git/config, a command wrote it:\n%s", out)
	}
	if b, _ := os.ReadFile(cfg); !bytes.Equal(b, now) {
		t.Errorf(".git/config changed:\n%s", b)
	}

	// A protected path made since the holder started is protected too.
	os.MkdirAll(filepath.Join(f.ws, ".vscode"), 0o755)
	write(t, filepath.Join(f.ws, ".vscode", "tasks.json"), "{}\n")
	if out, _ := f.runHeld(t, "echo evil > .vscode/tasks.json && echo WROTE-TASKS; mv .vscode .vscode-old && echo MOVED"); strings.Contains(out, "WROTE-TASKS") || strings.Contains(out, "MOVED") {
		t.Errorf("a protected path made after the holder started was not protected:\n%s", out)
	}
}

// TestCommandCannotKillTheHolder: a command tries to kill the holder
// that started it (and this process, its parent) by pid, by each of the
// holder's threads (the one that forked it shares its Landlock domain),
// and by group, and to read the holder's and its parent's (darman's:
// the provider keys) environment and memory. The holder lives, and
// starts the next command.
func TestCommandCannotKillTheHolder(t *testing.T) {
	f := heldFixture(t)
	f.runHeld(t, "true") // the holder is started
	pid := f.holderPID(t)
	// darman's pid as the test knows it (in its PID namespace the
	// command's $PPID is 0).
	out, _ := f.runHeld(t, fmt.Sprintf(`h=%d
P=%d
kill -9 $h && echo KILLED-HOLDER
for t in /proc/$h/task/*; do kill -9 ${t##*/} && echo KILLED-THREAD; done
kill -9 -$h && echo KILLED-GROUP
kill -9 $P && echo KILLED-PARENT
cat /proc/$P/environ && echo READ-PARENT-ENVIRON
head -c1 /proc/$P/mem && echo READ-PARENT-MEM
cat /proc/$h/environ && echo READ-ENVIRON
head -c1 /proc/$h/mem && echo READ-MEM
ls /proc/$h/fd && echo READ-FDS
ls -l /proc/self/fd | grep -c socket
echo TRIED`, pid, os.Getpid()))
	for _, bad := range []string{"KILLED-", "READ-"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "\n0\nTRIED") {
		t.Errorf("the command holds a socket, or did not finish:\n%s", out)
	}
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the holder is gone: %v", err)
	}
	if out, st := f.runHeld(t, "echo AGAIN"); out != "AGAIN\n" || !st.Success() || f.holderPID(t) != pid {
		t.Errorf("the next command: %q %v (holder %d, was %d)", out, st, f.holderPID(t), pid)
	}
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && len(env) > 0 {
		t.Errorf("the holder's environment is not empty: %q", env)
	}
}

// TestParallelHeldStarts: commands started at once by one holder all
// run, each with its own streams, and none writes .git/config.
func TestParallelHeldStarts(t *testing.T) {
	f := heldFixture(t)
	const n = 24
	var wg sync.WaitGroup
	outs := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, st := f.runHeld(t, fmt.Sprintf("echo %d > f%d; echo x >> .git/config || echo NO-%d; exit %d", i, i, i, i))
			outs[i], codes[i] = out, st.ExitCode()
		}()
	}
	wg.Wait()
	for i := range n {
		if b, _ := os.ReadFile(filepath.Join(f.ws, "f"+strconv.Itoa(i))); string(b) != strconv.Itoa(i)+"\n" {
			t.Errorf("command %d: f%d = %q", i, i, b)
		}
		if !strings.Contains(outs[i], "NO-"+strconv.Itoa(i)) || codes[i] != i {
			t.Errorf("command %d: %q exit %d", i, outs[i], codes[i])
		}
	}
}

// holderVictimEnv makes the test binary a darman that starts a long
// command through the holder, prints the pids, and waits to be killed.
const holderVictimEnv = "DARMAN_TEST_HOLDER_VICTIM"

// TestKillingDarmanKillsTheHolderAndItsCommands: when darman is killed
// (SIGKILL: nothing of its own runs), the holder and every process of the
// commands it started, a background child included, are gone.
func TestKillingDarmanKillsTheHolderAndItsCommands(t *testing.T) {
	heldFixture(t) // skips where there is no holder
	cmd := victim("TestHolderVictim", holderVictimEnv, "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pids []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PIDS "); ok {
			for _, w := range strings.Fields(rest) {
				n, _ := strconv.Atoi(w)
				pids = append(pids, n)
			}
			break
		}
	}
	if len(pids) != 3 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the victim printed no pids: %s", stderr.String())
	}
	for _, p := range pids {
		if !running(p) {
			t.Fatalf("process %d is not running before the kill", p)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for running(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if running(p) {
			t.Errorf("process %d (of holder, command, background child %v) outlived darman", p, pids)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// TestHolderVictim is the darman of TestKillingDarmanKillsTheHolderAndItsCommands.
func TestHolderVictim(t *testing.T) {
	if os.Getenv(holderVictimEnv) == "" {
		t.Skip("run by TestKillingDarmanKillsTheHolderAndItsCommands")
	}
	f := heldFixture(t)
	cmd, r := f.startHeldScript(t, "sleep 100 & echo $!; exec sleep 101")
	bufio.NewReader(r).ReadString('\n')
	fmt.Printf("PIDS %d %d %d\n", f.holderPID(t), cmd.Process.Pid, childOf(t, cmd.Process.Pid))
	cmd.Wait()
}

// childOf returns the pid of parent's child (the command's background
// one), as this process sees it: the command's $! is its pid in the
// command's PID namespace.
func childOf(t *testing.T, parent int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.Atoi(f[0])
			return n
		}
	}
	t.Fatalf("process %d has no child", parent)
	return 0
}

// running reports whether process pid runs (a zombie is dead).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || len(b) < i+3 || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// TestHolderOfASandboxMadeAfterAnInThreadStart: once a command has been
// confined in-thread, darman is non-dumpable, and the files in /proc of
// the processes it starts are root's until they execve: a Sandbox made
// then (the hooks' is another) still finds the user namespace, and its
// holder still starts, maps its user and protects the paths.
func TestHolderOfASandboxMadeAfterAnInThreadStart(t *testing.T) {
	first := heldFixture(t) // skips where there is no holder
	if out, err := first.run(t, Request{Root: first.outside}, "echo first"); err != nil || out != "first\n" {
		t.Fatalf("an in-thread command: %q %v", out, err)
	}
	f := newFixture(t, Options{})
	if !f.sb.Status().ProtectedReadOnly || f.sb.caps.pool == nil {
		t.Fatalf("a Sandbox made after an in-thread start has no holder: %+v, %s", f.sb.caps, f.sb.Status().Reason)
	}
	f.gitInit(t)
	if out, st := f.runHeld(t, "echo x >> .git/config && echo WROTE-CONFIG; echo ran"); strings.Contains(out, "WROTE-CONFIG") || !strings.Contains(out, "ran") || !st.Success() {
		t.Errorf("%q %v", out, st)
	}
}

// TestAHolderThatDiesIsReplaced: when the holder dies (here SIGKILL from
// outside), a command it started runs on and ends as darman's child; a
// new holder takes over its group (it kills it on its parent-death
// signal, as when darman dies), and the next command starts.
func TestAHolderThatDiesIsReplaced(t *testing.T) {
	f := heldFixture(t)
	long, r := f.startHeldScript(t, "sleep 100 & echo $!; exec sleep 101")
	defer r.Close()
	bufio.NewReader(r).ReadString('\n')
	bg := childOf(t, long.Process.Pid)
	first := f.holderPID(t)
	syscall.Kill(first, syscall.SIGKILL)
	var second int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f.sb.caps.pool.mu.Lock()
		if h := f.sb.caps.pool.m[realOr(f.ws)]; h != nil && h.pid != first {
			second = h.pid
		}
		f.sb.caps.pool.mu.Unlock()
		if second != 0 {
			break
		}
	}
	if second == 0 {
		t.Fatal("no holder replaced the one that died")
	}
	if !running(long.Process.Pid) || !running(bg) {
		t.Fatal("the command died with its holder")
	}
	if out, st := f.runHeld(t, "echo NEXT"); out != "NEXT\n" || !st.Success() || f.holderPID(t) != second {
		t.Errorf("the next command: %q %v", out, st)
	}
	// The parent-death signal's cue: the new holder kills the group it
	// took over.
	syscall.Kill(second, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { long.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-long.Process.Pid, syscall.SIGKILL)
		t.Fatal("the new holder did not kill the group it took over")
	}
	if ws := long.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the command ended %v, want killed", long.ProcessState)
	}
	for deadline := time.Now().Add(5 * time.Second); running(bg) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if running(bg) {
		syscall.Kill(bg, syscall.SIGKILL)
		t.Error("the command's background child outlived the holder that took it over")
	}
}

// TestHeldStartOfAMissingProgramFails: the holder's failure to start a
// command is Start's error, as the system said it.
func TestHeldStartOfAMissingProgramFails(t *testing.T) {
	f := heldFixture(t)
	cmd := exec.Command(filepath.Join(f.ws, "no-such-program"))
	cmd.Dir = f.ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.sb.Wrap(cmd, Request{Root: f.ws}); err != nil {
		t.Fatal(err)
	}
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	cmd.Stdout, cmd.Stderr = null, null
	err := Start(cmd)
	if !errors.Is(err, syscall.ENOENT) || cmd.Process != nil {
		t.Fatalf("Start = %v (process %v), want ENOENT", err, cmd.Process)
	}
	var buf bytes.Buffer
	cmd = exec.Command("/bin/true")
	cmd.Dir = f.ws
	f.sb.Wrap(cmd, Request{Root: f.ws})
	cmd.Stdout = &buf
	if err := Start(cmd); err == nil || !strings.Contains(err.Error(), "*os.File") {
		t.Errorf("Start with a buffer as stdout = %v, want a refusal naming *os.File", err)
	}
}
