//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// victimEnv, set to the attack script's path, makes the test binary the
// victim: a process that confines one of its threads and starts a hostile
// command from it, as darman does.
const victimEnv = "DARMAN_TEST_SIGNAL_VICTIM"

// TestCommandCannotSignalItsThread: a command confined in-thread tries to
// kill the process that started it (a copy of this test binary, which must
// survive its own test to tell) every way there is through the thread that
// shares its Landlock domain: SIGKILL to each of its threads by kill,
// tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo (pids with the high
// half set too), pidfd_open and a /proc/TID directory as pidfds, a file
// whose owner (F_SETOWN, F_SETOWN_EX, FIOSETOWN) the kernel signals with
// F_SETSIG's SIGKILL, kill of its process group, RLIMIT_CPU 0 through
// prlimit, its memory through process_vm_readv, and writes to each
// thread's oom_score_adj and comm. Every attempt fails, the process lives
// and is unchanged, and the command still signals its own: a background
// child, a job of an interactive shell, timeout, kill 0.
func TestCommandCannotSignalItsThread(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the raw system calls need it")
	}
	newFixture(t, Options{}) // skips where there is no sandbox
	script, err := filepath.Abs(filepath.Join("testdata", "signal_darman.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := victim("TestSignalVictim", victimEnv, script)
	// A group of its own, as darman has in a terminal: kill -PGID aims at
	// it alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	got := string(out)
	if err != nil {
		t.Fatalf("the victim did not survive its command: %v\n%s", err, got)
	}
	for _, want := range []string{"TRIED-EVERY-SIGNAL", "TRIED-PROC", "CHILD-KILLED 137", "JOB-KILLED 137", "TIMEOUT 124", "KILL0 143", "VICTIM-UNCHANGED", "VICTIM-ALIVE"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s missing from the victim's output:\n%s", want, got)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		// F_SETOWN of the threads outside the command's domain is let
		// through: Landlock refuses the signal when the kernel sends it
		// (the victim's survival tells).
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "ATTEMPT" && f[3] == "ok" && f[1] != "F_SETOWN" {
			t.Errorf("an attempt succeeded: %s", l)
		}
	}
	if strings.Contains(got, "VICTIM-SECRET-") {
		t.Errorf("the command read the victim's memory:\n%s", got)
	}
}

// TestSignalVictim is the victim of TestCommandCannotSignalItsThread.
func TestSignalVictim(t *testing.T) {
	script, f := asVictim(t, victimEnv, "TestCommandCannotSignalItsThread")
	secret := []byte("VICTIM" + "-SECRET-" + fmt.Sprint(os.Getpid()))
	before := procState(t)
	// The victim's pid and threads as the test knows them: in its PID
	// namespace the command sees neither in /proc (and $PPID is 0).
	pid := os.Getpid()
	var tids []string
	if entries, err := os.ReadDir("/proc/self/task"); err == nil {
		for _, e := range entries {
			tids = append(tids, e.Name())
		}
	}
	bash := strings.Join([]string{
		fmt.Sprintf("VICTIM_TIDS=%s python3 %s %d %d %d", strings.Join(tids, ","), script, pid, uintptr(unsafe.Pointer(&secret[0])), len(secret)),
		fmt.Sprintf(`for t in %s; do kill -9 $t; echo 1000 > /proc/%d/task/$t/oom_score_adj; echo pwned > /proc/%d/task/$t/comm; done; kill -9 -%d; echo TRIED-PROC`, strings.Join(tids, " "), pid, pid, pid),
		`sleep 100 & kill -9 $!; wait $!; echo CHILD-KILLED $?`,
		`bash -c 'set -m; sleep 100 & kill -9 %1; wait %1; echo JOB-KILLED $?'`,
		`timeout 1 sleep 5; echo TIMEOUT $?`,
		`setsid bash -c 'kill -TERM 0; sleep 5'; echo KILL0 $?`,
	}, "\n")
	var out bytes.Buffer
	f.startInThread(t, Request{}, bash, &out).Wait()
	os.Stdout.Write(out.Bytes())
	if after := procState(t); after != before {
		t.Fatalf("the process changed:\n%s\n%s", before, after)
	}
	fmt.Println("VICTIM-UNCHANGED")
	fmt.Println("VICTIM-ALIVE", string(secret[:6]))
}

// procState is what a write to /proc could change: the process's OOM
// score adjustment and its threads' names.
func procState(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	s := "oom_score_adj " + string(b)
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if c, err := os.ReadFile("/proc/self/task/" + task.Name() + "/comm"); err == nil && bytes.Contains(c, []byte("pwned")) {
			s += "thread " + task.Name() + " named " + string(c)
		}
	}
	return s
}

// victim runs this test binary again as the process a test attacks: only
// its test named test, with env set to the attack script's path.
func victim(test, env, script string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+script)
	return cmd
}

// asVictim is the victim's side: the script's path and a fixture that
// may read it; the test skips unless by started it.
func asVictim(t *testing.T, env, by string) (string, *fixture) {
	t.Helper()
	script := os.Getenv(env)
	if script == "" {
		t.Skip("run by " + by)
	}
	return script, newFixture(t, Options{ReadableDirs: []string{filepath.Dir(script)}})
}
