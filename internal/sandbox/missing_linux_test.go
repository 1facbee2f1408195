//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// The walls a kernel refuses, tested by turning them off for a child copy
// of the test binary (TestWallsChild), which probes a Sandbox and tries a
// command; the parent checks what it said and that, under "required",
// nothing ran. They are turned off by a seccomp filter the child runs
// under, which answers as such a kernel does: landlock_create_ruleset
// with ENOSYS (no Landlock), a new user namespace with ENOSPC (what
// clone and unshare answer when user.max_user_namespaces is 0). The
// sysctl itself cannot be set here (root lacks CAP_SYS_RESOURCE, which
// the kernel asks to change it), and a filter changes nothing for the
// machine's other processes, so tests running at the same moment are
// not disturbed.

const wallsChildEnv = "DARMAN_TEST_WALLS_CHILD"

// wallsReport is what TestWallsChild prints.
type wallsReport struct {
	Status  Status `json:"status"`
	Summary string `json:"summary"`
	// WrapErr is Wrap's error; Unavailable whether it wraps
	// ErrUnavailable.
	WrapErr     string `json:"wrapErr"`
	Unavailable bool   `json:"unavailable"`
	Output      string `json:"output"`
}

// TestWallsChild is the child: it probes a Sandbox in the mode its
// environment names and runs a command that writes a marker in the
// workspace and changes a file's mode outside it.
func TestWallsChild(t *testing.T) {
	spec := os.Getenv(wallsChildEnv)
	if spec == "" {
		t.Skip("run by TestMissingWallsAreNamed and TestLandlockMissing")
	}
	var in struct {
		Mode, Dir string
		// Record is the probe's record (ProbeRecord); Forge writes one
		// for this process before the probe (see TestProbeRecord).
		Record string
		Forge  bool
		// Helper, when set, is the helper in place of this binary.
		Helper string
	}
	if err := json.Unmarshal([]byte(spec), &in); err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(in.Dir, "ws"), filepath.Join(in.Dir, "outside.txt")
	exe, _ := os.Executable()
	if in.Helper != "" {
		exe = in.Helper
	}
	if in.Forge {
		recordProbe(in.Record, probeKey(exe))
	}
	sb := New(Options{Mode: Mode(in.Mode), Home: filepath.Join(in.Dir, "home"), Helper: exe, TempRoot: in.Dir, ProbeRecord: in.Record})
	defer sb.Close()
	st := sb.Status()
	r := wallsReport{Status: st, Summary: st.Summary()}
	cmd := exec.Command("/bin/bash", "-c", "echo ran > marker; chmod 777 "+outside+"; echo RAN")
	cmd.Dir = ws
	if err := sb.Wrap(cmd, Request{Root: ws}); err != nil {
		r.WrapErr, r.Unavailable = err.Error(), errors.Is(err, ErrUnavailable)
	} else {
		out, err := combinedOutput(cmd)
		r.Output = string(out)
		if err != nil {
			r.Output += "\n" + err.Error()
		}
	}
	js, _ := json.Marshal(r)
	fmt.Printf("WALLS %s\n", js)
}

// wallsChild makes the command that runs TestWallsChild in mode, as uid
// (0: as the test runs), in a fresh directory it returns.
func wallsChild(t *testing.T, mode Mode, uid int) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"ws", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "outside.txt"), "outside")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if uid != 0 {
		// A copy of the test binary another user may run, in a
		// directory it owns.
		for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		copyFile(t, exe, filepath.Join(dir, "sandbox.test"))
		exe = filepath.Join(dir, "sandbox.test")
		filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	}
	spec, _ := json.Marshal(map[string]string{"Mode": string(mode), "Dir": dir})
	cmd := exec.Command(exe, "-test.run=^TestWallsChild$", "-test.v")
	cmd.Env = append(os.Environ(), wallsChildEnv+"="+string(spec), "HOME="+filepath.Join(dir, "home"), "TMPDIR="+dir)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	return cmd, dir
}

// wallsOf is the report in a child's output.
func wallsOf(t *testing.T, out []byte, err error) wallsReport {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		if js, ok := strings.CutPrefix(line, "WALLS "); ok {
			var r wallsReport
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("the child reported nothing: %v\n%s", err, out)
	return wallsReport{}
}

// runWallsChild runs TestWallsChild (see wallsChild).
func runWallsChild(t *testing.T, mode Mode, uid int) (wallsReport, string) {
	t.Helper()
	cmd, dir := wallsChild(t, mode, uid)
	out, err := cmd.CombinedOutput()
	return wallsOf(t, out, err), dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}

// TestMissingWallsAreNamed: with user namespaces turned off, an
// unprivileged darman cannot make the read-only view, the protected
// paths' mounts or the PID namespace: its status names each (in doctor,
// darman.status, ACP and darman run, all of which show Status); in auto
// mode the command still runs, confined by Landlock; in required mode
// nothing runs. As root nothing is missing (root needs no user
// namespace).
func TestMissingWallsAreNamed(t *testing.T) {
	newFixture(t, Options{}) // skips where there is no sandbox
	if runtime.GOARCH != "amd64" {
		t.Skip("the filter that refuses user namespaces knows amd64's system calls")
	}
	if os.Geteuid() != 0 {
		t.Skip("running the child as another user needs root")
	}
	run := func(mode Mode, uid int) (wallsReport, string) {
		cmd, dir := wallsChild(t, mode, uid)
		cmd.Err = &filtered{noUserNS}
		out, err := startFiltered(cmd)
		return wallsOf(t, out, err), dir
	}
	auto, autoDir := run(Auto, 65534)
	t.Logf("without user namespaces, as uid 65534: %s", auto.Summary)
	required, requiredDir := run(Required, 65534)
	root, _ := run(Auto, 0)
	for _, want := range []string{"read-only file system outside the workspace", "protected paths read-only", "PID namespace", "user.max_user_namespaces"} {
		inMissing := strings.Contains(strings.Join(auto.Status.Missing, "\n"), want) || want == "user.max_user_namespaces"
		if !inMissing || !strings.Contains(auto.Summary, want) {
			t.Errorf("auto: %q is not named: %+v\n%s", want, auto.Status, auto.Summary)
		}
		if !strings.Contains(required.Summary, want) {
			t.Errorf("required: %q is not named: %s", want, required.Summary)
		}
	}
	if !auto.Status.Active() || !strings.Contains(auto.Output, "RAN") {
		t.Errorf("auto mode did not run the command confined: %+v", auto)
	}
	if b, _ := os.ReadFile(filepath.Join(autoDir, "ws", "marker")); string(b) != "ran\n" {
		t.Errorf("auto: marker = %q", b)
	}
	if required.Status.Active() || !required.Unavailable || required.Output != "" {
		t.Errorf("required mode did not refuse: %+v", required)
	}
	if _, err := os.Stat(filepath.Join(requiredDir, "ws", "marker")); err == nil {
		t.Error("required: the command ran")
	}
	if fi, _ := os.Stat(filepath.Join(requiredDir, "outside.txt")); fi == nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("required: the file outside changed: %v", fi)
	}
	if len(root.Status.Missing) != 0 || !strings.Contains(root.Output, "RAN") {
		t.Errorf("root without user namespaces: %+v", root)
	}
}

// BPF for the filters below.
const (
	tLd    = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	tJeq   = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	tJset  = syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K
	tRet   = syscall.BPF_RET | syscall.BPF_K
	tAllow = 0x7fff0000
	tErrno = 0x00050000
)

// noLandlock answers landlock_create_ruleset (444 everywhere) with ENOSYS,
// as a kernel without Landlock does.
var noLandlock = []syscall.SockFilter{
	{Code: tLd, K: 0},
	{Code: tJeq, Jt: 0, Jf: 1, K: 444},
	{Code: tRet, K: tErrno | uint32(syscall.ENOSYS)},
	{Code: tRet, K: tAllow},
}

// noUserNS answers clone and unshare (amd64's 56 and 272) asking for a
// new user namespace with ENOSPC, as the kernel does when
// user.max_user_namespaces is 0, and clone3 (435, whose flags are behind
// a pointer) with ENOSYS, which has Go and libc fall back to clone.
var noUserNS = []syscall.SockFilter{
	{Code: tLd, K: 0},
	{Code: tJeq, Jt: 3, Jf: 0, K: 435},
	{Code: tJeq, Jt: 3, Jf: 0, K: 56},
	{Code: tJeq, Jt: 2, Jf: 0, K: 272},
	{Code: tRet, K: tAllow},
	{Code: tRet, K: tErrno | uint32(syscall.ENOSYS)},
	{Code: tLd, K: 16}, // args[0]'s low half: the flags
	{Code: tJset, Jt: 0, Jf: 1, K: syscall.CLONE_NEWUSER},
	{Code: tRet, K: tErrno | uint32(syscall.ENOSPC)},
	{Code: tRet, K: tAllow},
}

// filtered marks a command to start under a seccomp filter (see
// startFiltered), which what it starts inherits.
type filtered struct{ prog []syscall.SockFilter }

func (*filtered) Error() string { return "start with startFiltered" }

// startFiltered runs cmd to its end from a disposable thread that
// installed the filter left in cmd.Err.
func startFiltered(cmd *exec.Cmd) ([]byte, error) {
	f := cmd.Err.(*filtered)
	cmd.Err = nil
	var out []byte
	var err error
	onDisposableThread(func() {
		syscall.RawSyscall6(syscall.SYS_PRCTL, 38, 1, 0, 0, 0, 0) // no_new_privs
		fprog := syscall.SockFprog{Len: uint16(len(f.prog)), Filter: &f.prog[0]}
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, 22, 2, uintptr(unsafe.Pointer(&fprog))); e != 0 {
			err = e
			return
		}
		out, err = cmd.CombinedOutput()
	})
	return out, err
}

// TestLandlockMissing: on a kernel without Landlock, the status says so;
// auto mode runs the command unsandboxed, saying why; required mode runs
// nothing.
func TestLandlockMissing(t *testing.T) {
	newFixture(t, Options{}) // skips where there is no sandbox
	report := func(mode Mode) (wallsReport, string) {
		cmd, dir := wallsChild(t, mode, 0)
		cmd.Err = &filtered{noLandlock}
		out, err := startFiltered(cmd)
		return wallsOf(t, out, err), dir
	}
	auto, _ := report(Auto)
	if auto.Status.Active() || !strings.Contains(auto.Summary, "no Landlock") || !strings.Contains(auto.Output, "RAN") {
		t.Errorf("auto without Landlock: %+v", auto)
	}
	required, dir := report(Required)
	if required.Status.Active() || !required.Unavailable || !strings.Contains(required.Summary, "commands are refused") {
		t.Errorf("required without Landlock: %+v", required)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "marker")); err == nil {
		t.Error("required: the command ran")
	}
}
