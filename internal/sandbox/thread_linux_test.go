//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
)

// startInThread wraps a bash script to run in the workspace, checks it is
// to be confined on a confined thread (of the test's, or where the test
// may not mount, of the workspace's namespace holder) rather than through
// the helper, and starts it as internal/child does: a process group of its
// own and the parent-death signal, so that the confined thread lives
// while it runs. Its output goes through a file, as the holder needs, to
// out once Wait has returned.
func (f *fixture) startInThread(t *testing.T, req Request, script string, out *bytes.Buffer) *startedCmd {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = f.ws
	cmd.Stdout, cmd.Stderr = file, file
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if req.Root == "" {
		req.Root = f.ws
	}
	if err := f.sb.Wrap(cmd, req); err != nil {
		t.Fatal(err)
	}
	if _, ok := cmd.Err.(*inThread); !ok || cmd.Path != "/bin/bash" {
		t.Fatalf("the command is not to be confined in-thread: path %s, err %v (caps %+v)", cmd.Path, cmd.Err, f.sb.caps)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	return &startedCmd{Cmd: cmd, file: file, out: out}
}

// startedCmd is a command startInThread started.
type startedCmd struct {
	*exec.Cmd
	file *os.File
	out  *bytes.Buffer
}

// Wait waits for the command and copies its output to out.
func (c *startedCmd) Wait() error {
	err := c.Cmd.Wait()
	c.file.Seek(0, 0)
	io.Copy(c.out, c.file)
	c.file.Close()
	return err
}

// TestInThreadCommandIsConfined: a command started from a confined thread
// of the test's process (as darman's own commands are) cannot write
// outside the workspace, read the key in home, connect to a listener on
// 127.0.0.1, nor reach the test's process through the thread that started
// it, which shares its Landlock domain while it runs: not its memory
// through /proc/PID/task/TID/mem, which needs ptrace access. Inside the workspace it works, and it
// outlives the parent-death signal (the thread waits for it).
func TestInThreadCommandIsConfined(t *testing.T) {
	f := newFixture(t, Options{})
	addr, connections := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "HELLO-FROM-LISTENER")
	marker := filepath.Join(f.outside, "marker")
	key := filepath.Join(f.home, ".ssh", "id_rsa")
	script := strings.Join([]string{
		"echo pwned > " + marker,
		"cat " + key,
		"exec 3<>/dev/tcp/127.0.0.1/" + itoa(addr.(*net.TCPAddr).Port) + " && cat <&3",
		"for t in /proc/$PPID/task/*; do (exec 4< $t/mem && echo MEM\"\"-OPENED $t); done",
		"sleep 0.3",
		"echo inside > inside.txt && echo ALIVE",
	}, "; ")
	var out bytes.Buffer
	cmd := f.startInThread(t, Request{}, script, &out)
	cmd.Wait()
	got := out.String()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the marker outside was written:\n%s", got)
	}
	for _, secret := range []string{"TOPSECRET", "HELLO-FROM-LISTENER", "MEM-OPENED"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s in the output:\n%s", secret, got)
		}
	}
	if connections.Load() != 0 {
		t.Errorf("the listener was reached %d times:\n%s", connections.Load(), got)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "inside.txt")); string(b) != "inside\n" || !strings.Contains(got, "ALIVE") {
		t.Errorf("the command did not write inside or did not live to its end (inside.txt %q):\n%s", b, got)
	}
}

// TestConfinementStaysOnItsThread: 50 commands started at once from
// confined threads, while other goroutines of the same process keep
// writing outside the workspace and connecting to a listener, and after
// them: every write and connection of the process's own succeeds, every
// command's write outside fails, and once the commands have exited no
// thread of the process is left with no_new_privs or a seccomp filter.
func TestConfinementStaysOnItsThread(t *testing.T) {
	f := newFixture(t, Options{})
	addr, connections := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "HI")
	baseline := threadCount(t)

	stop := make(chan struct{})
	var others sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	ours := 0
	for i := range 8 {
		others.Add(1)
		go func() {
			defer others.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				err := os.WriteFile(filepath.Join(f.outside, fmt.Sprintf("ours-%d", i)), []byte("x"), 0o644)
				if err == nil {
					var c net.Conn
					if c, err = net.Dial("tcp4", addr.String()); err == nil {
						c.Close()
					}
				}
				mu.Lock()
				ours++
				if err != nil {
					failures = append(failures, err.Error())
				}
				mu.Unlock()
			}
		}()
	}

	var cmds sync.WaitGroup
	outs := make([]bytes.Buffer, 50)
	for i := range outs {
		cmds.Add(1)
		go func() {
			defer cmds.Done()
			cmd := f.startInThread(t, Request{}, fmt.Sprintf("echo pwned > %s/cmd-%d; sleep 0.2; echo done", f.outside, i), &outs[i])
			cmd.Wait()
		}()
	}
	cmds.Wait()
	close(stop)
	others.Wait()

	if len(failures) > 0 {
		t.Errorf("%d of %d writes or connections of the process's own failed, first: %s", len(failures), ours, failures[0])
	}
	if ours == 0 || connections.Load() == 0 {
		t.Errorf("the process's own goroutines did nothing (%d runs, %d connections)", ours, connections.Load())
	}
	entries, _ := os.ReadDir(f.outside)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cmd-") {
			t.Errorf("a command wrote %s outside", e.Name())
		}
	}
	for i := range outs {
		if !strings.Contains(outs[i].String(), "done") {
			t.Errorf("command %d did not run to its end: %s", i, outs[i].String())
		}
	}
	confined := waitUnconfined(t)
	if confined > 0 {
		t.Errorf("%d threads are still confined after every command exited", confined)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "after"), []byte("x"), 0o644); err != nil {
		t.Errorf("the process cannot write outside after the commands: %v", err)
	}
	if c, err := net.Dial("tcp4", addr.String()); err != nil {
		t.Errorf("the process cannot connect after the commands: %v", err)
	} else {
		c.Close()
	}
	if n := threadCount(t); n > baseline+16 {
		t.Logf("threads: %d before, %d after (the runtime keeps idle ones)", baseline, n)
	}
}

// TestStartOfAMissingProgramFails: a program that does not exist fails to
// start with an error saying so, and the confined thread that tried ends
// all the same; one not found on PATH fails before any thread is confined.
// A wrapped command started with cmd.Start itself refuses to run.
func TestStartOfAMissingProgramFails(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range []struct {
		cmd  *exec.Cmd
		want string
	}{
		{exec.Command("/nonexistent/darman-test-program"), "no such file or directory"},
		{exec.Command("darman-test-program-not-on-path"), "executable file not found"},
	} {
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := f.sb.Wrap(c.cmd, Request{Root: f.ws}); err != nil {
			t.Fatal(err)
		}
		err := Start(c.cmd)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%s) = %v, want an error saying %q", c.cmd.Path, err, c.want)
		}
	}
	if n := waitUnconfined(t); n > 0 {
		t.Errorf("%d confined threads are left after the failed starts", n)
	}

	cmd := exec.Command("/bin/true")
	if err := f.sb.Wrap(cmd, Request{Root: f.ws}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err == nil || !strings.Contains(err.Error(), "sandbox.Start") {
		cmd.Wait()
		t.Errorf("cmd.Start of a wrapped command = %v, want a refusal naming sandbox.Start", err)
	}
}

// TestSequentialStartsDoNotGrowThreads: each start's thread ends with its
// command, so 200 commands one after the other leave the process with
// about the threads it had.
func TestSequentialStartsDoNotGrowThreads(t *testing.T) {
	f := newFixture(t, Options{})
	var out bytes.Buffer
	f.startInThread(t, Request{}, "true", &out).Wait() // the runtime's own threads
	waitUnconfined(t)
	baseline := threadCount(t)
	for range 200 {
		f.startInThread(t, Request{}, "true", &out).Wait()
	}
	waitUnconfined(t)
	if n := threadCount(t); n > baseline+4 {
		t.Errorf("threads: %d before 200 starts, %d after", baseline, n)
	}
}

// threadCount is the process's Threads in /proc/self/status.
func threadCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no Threads in /proc/self/status")
	return 0
}

// waitUnconfined waits up to 10 s for every thread of the process to have
// neither no_new_privs nor a seccomp filter (a confined thread ends just
// after its command) and returns how many still have one.
func waitUnconfined(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			if err != nil {
				continue // ended meanwhile
			}
			if !bytes.Contains(b, []byte("NoNewPrivs:\t0")) || !bytes.Contains(b, []byte("Seccomp:\t0")) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProtectedPathsInThread: where darman may mount (CAP_SYS_ADMIN, as
// root has), a command with protected paths is confined in-thread too,
// its thread making the read-only mounts in a mount namespace of its own:
// the command cannot change .git/config or add a hook, git commit works,
// and the mounts stay in the command's namespace: the test's own process
// still writes .git/config, and its mount table is unchanged.
func TestProtectedPathsInThread(t *testing.T) {
	f := newFixture(t, Options{})
	if !f.sb.caps.threadNS {
		t.Skip("darman may not mount here: commands with protected paths go through the helper")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	config := filepath.Join(f.ws, ".git", "config")
	before, _ := os.ReadFile(config)
	var out bytes.Buffer
	script := "echo '[alias] x = !touch " + filepath.Join(f.outside, "pwned") + "' >> .git/config; echo evil > .git/hooks/pre-commit; " +
		"git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm first --allow-empty && echo COMMITTED"
	f.startInThread(t, Request{}, script, &out).Wait()
	if after, _ := os.ReadFile(config); !bytes.Equal(after, before) {
		t.Errorf(".git/config changed:\n%s\n%s", after, out.String())
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was written: %s", out.String())
	}
	if !strings.Contains(out.String(), "COMMITTED") {
		t.Errorf("git commit failed: %s", out.String())
	}
	waitUnconfined(t)
	if now, _ := os.ReadFile("/proc/self/mountinfo"); !bytes.Equal(now, mounts) {
		t.Errorf("the process's mount table changed:\n%s", now)
	}
	if err := os.WriteFile(config, append(before, "# darman\n"...), 0o644); err != nil {
		t.Errorf("the process cannot write .git/config after the command: %v", err)
	}
}

// onMainThread is where disposable ran fn when called on the runtime's
// main thread (package initializers run there), which cannot end.
var onMainThread struct{ caller, fn int }

func init() {
	onMainThread.caller = syscall.Gettid()
	disposable(func() { onMainThread.fn = syscall.Gettid() })
}

// TestDisposableLeavesTheMainThread: called on the main thread, which
// the runtime never ends (a goroutine ending locked there wedges it),
// disposable runs fn on another thread and gives the main one back.
func TestDisposableLeavesTheMainThread(t *testing.T) {
	pid := syscall.Getpid()
	if onMainThread.caller != pid {
		t.Skipf("the initializers ran on thread %d, not the main thread %d", onMainThread.caller, pid)
	}
	if onMainThread.fn == 0 || onMainThread.fn == pid {
		t.Errorf("fn ran on thread %d (the main thread is %d)", onMainThread.fn, pid)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", onMainThread.fn)); err == nil {
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", onMainThread.fn)); err == nil {
			t.Errorf("fn's thread %d is still alive", onMainThread.fn)
		}
	}
}

// TestParentDeathSignalIsDarmans: children started with a parent-death
// signal and no confinement (as child.Start starts language and MCP
// servers) live on while sandboxed commands' disposable threads come and
// go, though any of those may be the thread a child was started from.
func TestParentDeathSignalIsDarmans(t *testing.T) {
	var cmds []*exec.Cmd
	for range 20 {
		c := exec.Command("sleep", "100")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := Start(c); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		time.Sleep(time.Millisecond)
	}
	for range 300 {
		onDisposableThread(func() {})
	}
	time.Sleep(100 * time.Millisecond)
	for i, c := range cmds {
		if !running(c.Process.Pid) {
			t.Errorf("child %d of %d was killed when a disposable thread ended", i+1, len(cmds))
		}
	}
}
