//go:build linux

package sandbox

import (
	"github.com/darman-dev/darman/agent/permission"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fileState is what a command outside the roots must not change about a
// file: its mode (setuid bit too), owner, modification time and extended
// attributes.
func fileState(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := syscall.Listxattr(path, buf)
	return strings.Join([]string{
		"mode " + itoa(int(st.Mode)), "owner " + itoa(int(st.Uid)) + ":" + itoa(int(st.Gid)),
		"mtime " + itoa(int(st.Mtim.Sec)) + "." + itoa(int(st.Mtim.Nsec)), "xattrs " + string(buf[:max(n, 0)]),
	}, ", ")
}

// TestNothingOutsideTheRootsChanges: what Landlock does not look at —
// mode, owner, times and extended attributes of files outside the
// workspace (a directory in home that the sandbox keeps unreadable too),
// device and fifo nodes, hard links out of the workspace, the host's
// /dev/shm — is refused by the read-only view, whoever the test runs as;
// the same inside the workspace and $TMPDIR works.
func TestNothingOutsideTheRootsChanges(t *testing.T) {
	f := newFixture(t, Options{})
	if !f.sb.caps.view {
		t.Skipf("no read-only view here: %s", f.sb.Status().Reason)
	}
	outside := filepath.Join(f.outside, "existing.txt")
	ssh := filepath.Join(f.home, ".ssh")
	shm := "/dev/shm"
	shmBefore, _ := os.ReadDir(shm)
	t.Cleanup(func() { // where the sandbox fails this test
		for _, n := range []string{"pwned-file", "pwned-fifo", "pwned-link", "own"} {
			if !slices.ContainsFunc(shmBefore, func(e os.DirEntry) bool { return e.Name() == n }) {
				os.Remove(filepath.Join(shm, n))
			}
		}
	})
	before := map[string]string{outside: fileState(t, outside), ssh: fileState(t, ssh), f.outside: fileState(t, f.outside)}
	script := strings.Join([]string{
		"chmod 777 " + outside, "chmod u+s " + outside, "chown 1234:1234 " + outside,
		"touch -d 2001-01-01 " + outside, "touch -h -d 2001-01-01 " + f.outside,
		"python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.pwned\", b\"1\")' " + outside,
		"chmod 777 " + ssh, "touch -d 2001-01-01 " + ssh,
		"mkfifo " + filepath.Join(f.outside, "fifo"), "mknod " + filepath.Join(f.outside, "null") + " c 1 3",
		"ln " + outside + " hardlink",
		"echo x > " + shm + "/pwned-file", "mkfifo " + shm + "/pwned-fifo", "ln -s /etc/passwd " + shm + "/pwned-link",
		// Inside, the same works.
		"echo in > in.txt && chmod 600 in.txt && touch -d 2001-01-01 in.txt && ln in.txt in-link && mkfifo in-fifo && echo INSIDE-OK",
		`echo t > "$TMPDIR/t" && chmod 600 "$TMPDIR/t" && echo TMP-OK`,
		"echo s > /dev/shm/own && cat /dev/shm/own && echo SHM-OK",
	}, "\n")
	out, _ := f.run(t, Request{}, script)
	for p, was := range before {
		if now := fileState(t, p); now != was {
			t.Errorf("%s changed: %s, was %s\n%s", p, now, was, out)
		}
	}
	for _, name := range []string{"fifo", "null"} {
		if _, err := os.Lstat(filepath.Join(f.outside, name)); err == nil {
			t.Errorf("%s was made outside:\n%s", name, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "hardlink")); err == nil {
		t.Errorf("a file outside was linked into the workspace:\n%s", out)
	}
	shmAfter, _ := os.ReadDir(shm)
	if len(shmAfter) != len(shmBefore) {
		t.Errorf("the host's /dev/shm changed: %d entries, were %d\n%s", len(shmAfter), len(shmBefore), out)
	}
	for _, want := range []string{"INSIDE-OK", "TMP-OK", "SHM-OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(f.ws, "in.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("chmod inside the workspace: %v %v", fi, err)
	}
}

// TestCommandHasNoPrivilege: the command has no capability in any set,
// root or not, no_new_privs, and what capabilities or the kernel's
// permission checks would let through is refused: packet, raw and
// netlink sockets, changing a link or the host name (by the system call
// and through /proc/sys), reading the kernel's log, loading a module.
func TestCommandHasNoPrivilege(t *testing.T) {
	f := newFixture(t, Options{})
	host, _ := os.Hostname()
	lo, _ := exec.Command("ip", "link", "show", "lo").Output()
	// Where the sandbox fails this test, what the command changed is put
	// back (as root: another user's command cannot change them).
	t.Cleanup(func() {
		if now, _ := os.Hostname(); now != host && host != "" {
			exec.Command("hostname", host).Run()
		}
		if b, _ := exec.Command("ip", "link", "show", "lo").Output(); strings.Contains(string(b), "mtu 1300") {
			mtu := "65536"
			if f := strings.Fields(string(lo)); len(f) > 4 && f[3] == "mtu" {
				mtu = f[4]
			}
			exec.Command("ip", "link", "set", "lo", "mtu", mtu).Run()
		}
	})
	script := strings.Join([]string{
		"grep -E '^(Cap|NoNewPrivs)' /proc/self/status",
		`perl -e 'socket(my $s, 17, 3, 0x300) and print "PACKET-OPENED\n"'`,
		`perl -e 'socket(my $s, 2, 3, 1) and print "RAW-OPENED\n"'`,
		`perl -e 'socket(my $s, 16, 3, 0) and print "NETLINK-OPENED\n"'`,
		"ip link set lo mtu 1300 && echo IP-LINK-SET",
		"hostname pwned-host && echo HOSTNAME-SET",
		"echo pwned-host > /proc/sys/kernel/hostname && echo PROC-HOSTNAME-SET",
		"dmesg >/dev/null && echo DMESG-READ",
		"true",
	}, "\n")
	out, _ := f.run(t, Request{}, script)
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if !strings.Contains(out, set+":\t0000000000000000") {
			t.Errorf("%s is not empty:\n%s", set, out)
		}
	}
	if !strings.Contains(out, "NoNewPrivs:\t1") {
		t.Errorf("no no_new_privs:\n%s", out)
	}
	for _, bad := range []string{"PACKET-OPENED", "RAW-OPENED", "NETLINK-OPENED", "IP-LINK-SET", "HOSTNAME-SET", "PROC-HOSTNAME-SET", "DMESG-READ"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if now, _ := os.Hostname(); now != host {
		t.Errorf("the host name changed to %q", now)
	}
	if b, _ := exec.Command("ip", "link", "show", "lo").Output(); strings.Contains(string(b), "mtu 1300") {
		t.Errorf("lo's MTU changed: %s", b)
	}
}

// TestCommandSeesOnlyTheSandboxsProcesses: in the command's /proc there is
// no process outside the sandbox: not the test's (darman's), not another
// process of the same user with a secret in its environment, whose
// /proc/PID/environ the command could otherwise read; its own children
// are there, and its own environment.
func TestCommandSeesOnlyTheSandboxsProcesses(t *testing.T) {
	f := newFixture(t, Options{})
	if !f.sb.caps.pidOK {
		t.Skipf("no PID namespace here: %v", f.sb.caps.pidErr)
	}
	other := exec.Command("sleep", "30")
	other.Env = []string{"OTHER_TOKEN=OTHER-PROCESS-SECRET"}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	pid := itoa(other.Process.Pid)
	script := strings.Join([]string{
		"tr '\\0' '\\n' < /proc/" + pid + "/environ",
		"for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null",
		"sleep 5 & ls /proc/$!/ >/dev/null && echo CHILD-SEEN",
		"grep -c DARMAN_SANDBOX= /proc/self/environ && echo OWN-ENV",
		"kill %1",
	}, "\n")
	out, _ := f.run(t, Request{}, script)
	if strings.Contains(out, "OTHER-PROCESS-SECRET") {
		t.Errorf("the command read another process's environment:\n%s", out)
	}
	if strings.Contains(out, "sleep 30") || strings.Contains(out, "-test.") {
		t.Errorf("the command sees processes outside the sandbox:\n%s", out)
	}
	for _, want := range []string{"CHILD-SEEN", "OWN-ENV"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s:\n%s", want, out)
		}
	}
}

// TestMakeAndALanguageServerWorkInTheView: in the read-only view, make
// builds in the workspace and gopls checks a package there (its go list
// writes Go's caches, which stay writable), while the same make rule
// aimed outside fails.
func TestMakeAndALanguageServerWorkInTheView(t *testing.T) {
	f := newFixture(t, Options{})
	gopls, err := exec.LookPath("gopls")
	if err != nil {
		if gopath, e := exec.Command("go", "env", "GOPATH").Output(); e == nil {
			gopls = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "gopls")
		}
	}
	for _, bin := range []string{"make", "go", gopls} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not here", bin)
		}
	}
	write(t, filepath.Join(f.ws, "in.txt"), "made\n")
	write(t, filepath.Join(f.ws, "Makefile"), "out.txt: in.txt\n\tcp in.txt out.txt\n\n"+f.outside+"/out.txt: in.txt\n\tcp in.txt $@\n")
	write(t, filepath.Join(f.ws, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(t, filepath.Join(f.ws, "m.go"), "package m\n\nfunc F() int { return \"not an int\" }\n")
	out, _ := f.run(t, Request{}, "make && echo MADE; make "+f.outside+"/out.txt || echo OUTSIDE-REFUSED; "+gopls+" check m.go; echo GOPLS-DONE")
	if b, _ := os.ReadFile(filepath.Join(f.ws, "out.txt")); string(b) != "made\n" || !strings.Contains(out, "MADE") {
		t.Errorf("make in the workspace:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(f.outside, "out.txt")); err == nil || !strings.Contains(out, "OUTSIDE-REFUSED") {
		t.Errorf("make outside:\n%s", out)
	}
	if !strings.Contains(out, "m.go:3") || !strings.Contains(out, "GOPLS-DONE") {
		t.Errorf("gopls did not report the type error:\n%s", out)
	}
}

// TestTerminalCommandSeesOnlyTheSandboxsProcesses: a command line for the
// editor's terminal (CommandLine, started by a process darman does not
// control) runs in a PID namespace of its own too, as the bash tool's
// commands do: another process's environment and darman's test process
// are out of its sight, its own children in it; its exit code and its
// output come through.
func TestTerminalCommandSeesOnlyTheSandboxsProcesses(t *testing.T) {
	f := newFixture(t, Options{})
	if !f.sb.Status().PIDNamespace {
		t.Skipf("no PID namespace here: %s", f.sb.Status().Reason)
	}
	other := exec.Command("sleep", "30")
	other.Env = []string{"OTHER_TOKEN=OTHER-PROCESS-SECRET"}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	script := strings.Join([]string{
		"tr '\\0' '\\n' < /proc/" + itoa(other.Process.Pid) + "/environ",
		"for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null",
		"test -e /proc/" + itoa(os.Getpid()) + "/cmdline && echo TEST-PROCESS\"\"-SEEN",
		"sleep 5 & ls /proc/$!/ >/dev/null && echo CHILD-SEEN; kill %1",
		"echo PPID=$PPID",
		"exit 7",
	}, "\n")
	argv, env, err := f.sb.CommandLine([]string{"bash", "-c", script}, Request{Root: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = f.ws
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.CombinedOutput()
	out := string(b)
	if strings.Contains(out, "OTHER-PROCESS-SECRET") || strings.Contains(out, "sleep 30") || strings.Contains(out, "TEST-PROCESS-SEEN") {
		t.Errorf("the terminal's command sees processes outside the sandbox: %v\n%s", err, out)
	}
	if !strings.Contains(out, "CHILD-SEEN") || !strings.Contains(out, "PPID=0") {
		t.Errorf("the terminal's command is not in a PID namespace of its own:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Errorf("exit: %v, want 7\n%s", err, out)
	}
}

// BenchmarkTerminalCommand is the start of a command line the editor's
// terminal runs (CommandLine: darman re-executed as the helper, which
// confines the command as darman does), to its end: /bin/true.
func BenchmarkTerminalCommand(b *testing.B) {
	ws := b.TempDir()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	if h := os.Getenv("DARMAN_BENCH_HELPER"); h != "" {
		exe = h
	}
	sb := New(Options{Helper: exe, TempRoot: b.TempDir(), Protected: permission.ProtectedPaths})
	defer sb.Close()
	if !sb.Status().Active() {
		b.Skipf("no sandbox: %s", sb.Status().Reason)
	}
	argv, env, err := sb.CommandLine([]string{"/bin/true"}, Request{Root: ws})
	if err != nil {
		b.Fatal(err)
	}
	environ := os.Environ()
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	for b.Loop() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = ws, environ
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
