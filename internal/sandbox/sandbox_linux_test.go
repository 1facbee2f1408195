//go:build linux

package sandbox

import (
	"github.com/darman-dev/darman/agent/permission"

	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
)

// TestMain lets the test binary be the helper, as darman is: "sandbox-exec"
// as the first argument runs the helper in internal/sandbox/early's
// initializer, before this; what that leaves to darman (re-executing in a
// namespace of its own) runs Exec here.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(Exec(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// fixture is a workspace, a directory outside it and a home with a fake
// secret.
type fixture struct {
	ws, outside, home string
	sb                *Sandbox
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home")}
	for _, d := range []string{f.ws, f.outside, filepath.Join(f.home, ".ssh"), filepath.Join(f.home, "go")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.home, ".ssh", "id_rsa"), "-----BEGIN FAKE KEY----- TOPSECRET")
	write(t, filepath.Join(f.home, "go", "toolchain.txt"), "a toolchain file")
	write(t, filepath.Join(f.outside, "existing.txt"), "outside")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Home, opts.Helper, opts.TempRoot = f.home, exe, base
	if opts.Protected == nil {
		opts.Protected = permission.ProtectedPaths // darman's list
	}
	f.sb = New(opts)
	t.Cleanup(func() { f.sb.Close() })
	st := f.sb.Status()
	if !st.Active() {
		t.Skipf("no sandbox on this machine: %s", st.Reason)
	}
	return f
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs script with bash in the workspace under the sandbox.
func (f *fixture) run(t *testing.T, req Request, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = f.ws
	if req.Root == "" {
		req.Root = f.ws
	}
	if err := f.sb.Wrap(cmd, req); err != nil {
		t.Fatal(err)
	}
	out, err := combinedOutput(cmd)
	return string(out), err
}

// combinedOutput is cmd.CombinedOutput for a command Wrap prepared: Start
// starts it. The output goes through a pipe, as child.Start gives one (a
// command started by a namespace holder needs files).
func combinedOutput(cmd *exec.Cmd) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w
	err = Start(cmd)
	w.Close()
	if err != nil {
		return nil, err
	}
	out, _ := io.ReadAll(r)
	return out, cmd.Wait()
}

func TestWritesOutsideTheWorkspaceFail(t *testing.T) {
	f := newFixture(t, Options{})
	marker := filepath.Join(f.outside, "marker")
	out, err := f.run(t, Request{}, "echo pwned > "+marker)
	if err == nil {
		t.Fatalf("writing outside succeeded: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the marker outside was created")
	}
	if !strings.Contains(out, "Permission denied") && !strings.Contains(out, "Read-only file system") {
		t.Errorf("output = %q, want a permission error", out)
	}
	// Truncating, appending, removing and renaming an existing file
	// outside fail too.
	for _, script := range []string{
		": > " + filepath.Join(f.outside, "existing.txt"),
		"echo x >> " + filepath.Join(f.outside, "existing.txt"),
		"rm -f " + filepath.Join(f.outside, "existing.txt"),
		"mv " + filepath.Join(f.outside, "existing.txt") + " " + filepath.Join(f.ws, "stolen.txt"),
		"ln -s /etc/passwd " + filepath.Join(f.outside, "link"),
	} {
		if out, err := f.run(t, Request{}, script); err == nil {
			t.Errorf("%s succeeded: %s", script, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.outside, "existing.txt")); err != nil || string(b) != "outside" {
		t.Errorf("the file outside changed: %q, %v", b, err)
	}

	// The same inside the workspace, and in $TMPDIR, works.
	out, err = f.run(t, Request{Session: "s1"}, `echo ok > inside.txt && mkdir -p a/b && echo x > a/b/c && mv a/b/c a/d && rm -r a && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	if err != nil {
		t.Fatalf("writing inside failed: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "inside.txt")); string(b) != "ok\n" {
		t.Errorf("inside.txt = %q", b)
	}
}

func TestSecretsInHomeAreUnreadable(t *testing.T) {
	f := newFixture(t, Options{})
	key := filepath.Join(f.home, ".ssh", "id_rsa")
	for _, script := range []string{
		"cat " + key,
		"cat $HOME/.ssh/id_rsa",
		"ls " + filepath.Join(f.home, ".ssh"),
		"cp " + key + " ./key && cat ./key",
		"git status --untracked-files=\"$(< " + key + ")\"",
		"ln " + key + " hard && cat hard",
		"ln -s " + key + " soft && cat soft",
		"cat /proc/$PPID/root" + key,
		"cat /proc/self/root" + key,
	} {
		cmd := script
		out, _ := f.run(t, Request{}, "HOME="+f.home+"; "+cmd)
		if strings.Contains(out, "TOPSECRET") || strings.Contains(out, "id_rsa\n") {
			t.Errorf("%s printed the secret: %s", script, out)
		}
	}
	// A toolchain directory in home is readable, and the system too.
	out, err := f.run(t, Request{}, "cat "+filepath.Join(f.home, "go", "toolchain.txt")+" && head -c0 /etc/passwd && ls /usr/bin >/dev/null")
	if err != nil || !strings.Contains(out, "a toolchain file") {
		t.Errorf("reading the toolchain dir and the system failed: %v: %s", err, out)
	}
}

// What a command reads of darman's environment through /proc/PID/environ
// is tested where darman wipes it, with the secrets in the real process
// environment: cmd/darman's TestRedTeamCannotReadDarmansEnvironment and
// TestEveryFrontWipesItsEnvironmentBlock (t.Setenv, as a test here would
// use, changes the Go copy, not the block that file shows).

func TestNetworkIsOffByDefault(t *testing.T) {
	addr, _ := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "HELLO-FROM-LISTENER")
	port := addr.(*net.TCPAddr).Port
	script := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && cat <&3"

	f := newFixture(t, Options{})
	out, err := f.run(t, Request{}, script)
	if err == nil || strings.Contains(out, "HELLO-FROM-LISTENER") {
		t.Fatalf("connecting with the network off worked: %v: %s", err, out)
	}
	if note := f.sb.Explain(script, out, Request{Root: f.ws}); !strings.Contains(note, "network") {
		t.Errorf("Explain(%q) = %q, want a note about the network", out, note)
	}
	// Listening is refused too.
	if out, err := f.run(t, Request{}, "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); print(\"LISTENING\")'"); err == nil || strings.Contains(out, "LISTENING") {
		t.Errorf("listening with the network off worked: %s", out)
	}

	// A request for the network, or the option, opens it.
	out, err = f.run(t, Request{Network: true}, script)
	if err != nil || !strings.Contains(out, "HELLO-FROM-LISTENER") {
		t.Fatalf("connecting with the network on failed: %v: %s", err, out)
	}
	g := newFixture(t, Options{Network: true})
	if out, err := g.run(t, Request{}, script); err != nil || !strings.Contains(out, "HELLO-FROM-LISTENER") {
		t.Fatalf("connecting with sandbox.network failed: %v: %s", err, out)
	}
}

func TestUnixSocketsOutsideAreRefused(t *testing.T) {
	f := newFixture(t, Options{})
	sock := filepath.Join(f.outside, "agent.sock")
	testenv.Greeter(t, "unix", sock, "AGENT-SECRET")
	script := `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(100).decode())' ` + sock
	out, err := f.run(t, Request{}, script)
	if err == nil || strings.Contains(out, "AGENT-SECRET") {
		t.Fatalf("talking to a Unix socket outside worked: %v: %s", err, out)
	}
	// An abstract socket of a process outside the sandbox is refused by
	// Landlock's scoping.
	testenv.Greeter(t, "unix", "@darman-sandbox-test-"+itoa(os.Getpid()), "ABSTRACT-SECRET")
	g := newFixture(t, Options{UnixSockets: true})
	abs := `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0darman-sandbox-test-` + itoa(os.Getpid()) + `"); print(s.recv(100).decode())'`
	if out, err := g.run(t, Request{}, abs); err == nil || strings.Contains(out, "ABSTRACT-SECRET") {
		t.Fatalf("talking to an abstract socket outside worked: %v: %s", err, out)
	}
}

func TestProtectedPathsAreReadOnlyAndGitCommitWorks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	f := newFixture(t, Options{})
	if !f.sb.Status().ProtectedReadOnly {
		t.Skipf("protected paths are not read-only here: %s", f.sb.Status().Reason)
	}
	gitEnv := "export HOME=" + f.home + " GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; "
	if out, err := exec.Command("bash", "-c", "cd "+f.ws+" && git init -q && mkdir -p .claude .vscode && echo '{}' > .claude/settings.json && echo '{}' > .vscode/tasks.json && echo '{}' > .mcp.json").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	config, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
	for _, script := range []string{
		"echo evil > .git/hooks/pre-commit",
		"printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
		"git config core.hooksPath evil",
		"echo '{\"hooks\":{}}' > .claude/settings.json",
		"echo '{\"mcpServers\":{}}' > .mcp.json",
		"echo '{}' > .vscode/tasks.json",
		"rm -rf .git/hooks",
		"mv .git/config .git/config.old",
		"mv .git .git-old && git init -q",
		"mv .claude .claude-old",
		"ln -s ../../evil.sh .git/hooks/post-checkout",
	} {
		if out, err := f.run(t, Request{}, gitEnv+script); err == nil {
			t.Errorf("%s succeeded: %s", script, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config")); !bytes.Equal(b, config) {
		t.Errorf(".git/config changed:\n%s", b)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git-old", ".claude-old"} {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s exists", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".claude", "settings.json")); string(b) != "{}\n" {
		t.Errorf(".claude/settings.json = %q", b)
	}

	out, err := f.run(t, Request{}, gitEnv+"echo hello > main.txt && git add main.txt && git commit -q -m first && git log --oneline && echo more >> main.txt && git commit -qam second && git log --oneline | wc -l")
	if err != nil {
		t.Fatalf("git add/commit in the sandbox failed: %v: %s", err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "2") {
		t.Errorf("git log after two commits: %s", out)
	}
	if note := f.sb.Explain("echo x > .git/config", "bash: line 1: .git/config: Read-only file system\n", Request{Root: f.ws}); note == "" {
		t.Errorf("no note for a read-only protected path")
	}
}

// TestMissingProtectedPathsCannotBeCreated: the protected paths that
// matter most are often the ones not there yet. A sandboxed script tries
// to create git's indirections (commondir, alternates, config.worktree,
// info/attributes, a hook in a hooks directory that is gone) and a
// protected file in a directory below the root (.cargo/config.toml);
// none exists afterwards, a sandboxed git commit and gc still work, and
// once the sandbox closes its placeholders are gone and git outside
// works as before.
func TestMissingProtectedPathsCannotBeCreated(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	f := newFixture(t, Options{})
	if !f.sb.Status().ProtectedReadOnly {
		t.Skipf("protected paths are not read-only here: %s", f.sb.Status().Reason)
	}
	gitEnv := "export HOME=" + f.home + " GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; "
	if out, err := exec.Command("bash", "-c", gitEnv+"cd "+f.ws+" && git init -q && rm -rf .git/hooks .git/info && mkdir .cargo && echo a > a && git add a && git commit -qm a").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	targets := []string{".git/commondir", ".git/objects/info/alternates", ".git/config.worktree", ".git/info/attributes", ".git/hooks/pre-commit", ".cargo/config.toml"}
	for _, p := range targets {
		script := "mkdir -p $(dirname " + p + ") 2>/dev/null; echo /tmp/evil > " + p + " && echo MADE; mv " + p + " " + p + ".x 2>/dev/null; rm -rf " + p + " 2>/dev/null; echo x > " + p + " && echo MADE"
		if out, _ := f.run(t, Request{}, script); strings.Contains(out, "MADE") {
			t.Errorf("%s was created: %s", p, out)
		}
	}
	out, err := f.run(t, Request{}, gitEnv+"echo b > b && git add b && git commit -q -m b && git gc -q && git log --oneline | wc -l")
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "2") {
		t.Fatalf("git commit and gc in the sandbox: %v: %s", err, out)
	}
	f.sb.Close()
	for _, p := range targets {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s exists after the sandbox closed", p)
		}
	}
	for _, d := range []string{".git/hooks", ".git/info"} {
		if _, err := os.Lstat(filepath.Join(f.ws, d)); err == nil {
			t.Errorf("the placeholder %s is left", d)
		}
	}
	if out, err := exec.Command("bash", "-c", gitEnv+"cd "+f.ws+" && git status --short && git log --oneline | wc -l").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Errorf("git outside after the sandbox: %v: %s", err, out)
	}
}

func TestRequiredModeRefusesWithoutSandbox(t *testing.T) {
	sb := New(Options{Mode: Off})
	cmd := exec.Command("/bin/true")
	if err := sb.Wrap(cmd, Request{Root: t.TempDir()}); err != nil || cmd.Path != "/bin/true" {
		t.Fatalf("off mode changed the command: %v %v", err, cmd.Args)
	}
	if st := sb.Status(); st.Active() || !strings.Contains(st.Summary(), "unsandboxed") {
		t.Errorf("status = %+v, %s", st, st.Summary())
	}
	req := New(Options{Mode: Required, Helper: "/nonexistent/darman"})
	req.once.Do(func() { req.status = Status{Mode: Required, Reason: "test: no sandbox"} })
	if err := req.Wrap(exec.Command("/bin/true"), Request{}); err == nil {
		t.Fatal("required mode without a sandbox did not refuse")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkPolicy is the parent's share of a command's start: building
// its policy from the disk.
func BenchmarkPolicy(b *testing.B) {
	ws := b.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
	sb := New(Options{Protected: permission.ProtectedPaths}) // darman's list, as cmd/darman passes it
	sb.Status()
	for b.Loop() {
		sb.Policy(Request{Root: ws}, "")
	}
}

// TestGitWorktreeCommitWorksAndItsHooksStayReadOnly: a workspace that is
// a git worktree (.git is a file naming a directory elsewhere) can commit
// from the sandbox, and the common directory's hooks and config stay
// read-only.
func TestGitWorktreeCommitWorksAndItsHooksStayReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	f := newFixture(t, Options{})
	if !f.sb.Status().ProtectedReadOnly {
		t.Skipf("protected paths are not read-only here: %s", f.sb.Status().Reason)
	}
	main := filepath.Join(f.outside, "main")
	gitEnv := "export HOME=" + f.home + " GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; "
	os.Remove(f.ws)
	if out, err := exec.Command("bash", "-c", gitEnv+"git init -q "+main+" && cd "+main+" && git commit -q --allow-empty -m root && git worktree add -q "+f.ws+" -b wt").CombinedOutput(); err != nil {
		t.Fatalf("making the worktree: %v: %s", err, out)
	}
	out, err := f.run(t, Request{}, gitEnv+"echo hi > a.txt && git add a.txt && git commit -q -m 'in the worktree' && git log --oneline | head -1")
	if err != nil || !strings.Contains(out, "in the worktree") {
		t.Fatalf("commit in the sandboxed worktree: %v: %s", err, out)
	}
	for _, script := range []string{
		"echo evil > " + filepath.Join(main, ".git", "hooks", "pre-commit"),
		"git config core.fsmonitor evil",
		"echo x >> " + filepath.Join(main, ".git", "config"),
	} {
		if out, err := f.run(t, Request{}, gitEnv+script); err == nil {
			t.Errorf("%s succeeded: %s", script, out)
		}
	}
	if _, err := os.Stat(filepath.Join(main, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the common directory's hook was written")
	}
}

// confinedScript is run by python3 inside the sandbox: in its own process,
// in a thread it starts and in a child it forks, it tries to write outside,
// read the key and connect to the listener, and prints what happened with
// the thread's no_new_privs and seccomp state.
const confinedScript = `
import os, socket, sys, threading
outside, key, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def attempt(who):
    r = [who]
    try:
        with open(os.path.join(outside, who), "w") as f: f.write("x")
        r.append("WROTE")
    except OSError: r.append("write-refused")
    try:
        with open(key) as f: r.append("READ:" + f.read())
    except OSError: r.append("read-refused")
    try:
        socket.create_connection(("127.0.0.1", port), 2).close(); r.append("CONNECTED")
    except OSError: r.append("connect-refused")
    with open("/proc/thread-self/status") as f:
        for l in f:
            if l.startswith(("NoNewPrivs:", "Seccomp:")): r.append(l.split()[0] + l.split()[1])
    print(" ".join(r), flush=True)
attempt("process")
t = threading.Thread(target=attempt, args=("thread",)); t.start(); t.join()
pid = os.fork()
if pid == 0:
    attempt("child")
    t = threading.Thread(target=attempt, args=("childthread",)); t.start(); t.join()
    os._exit(0)
os.waitpid(pid, 0)
`

// TestTheExecdProcessItsThreadsAndChildrenAreConfined: the restrictions
// the helper puts on its one thread hold for the shell it execs, for what
// that starts, for a thread and a forked child of that, and a thread of
// the child: no write outside, no read of the key, no TCP connect, and
// no_new_privs and the seccomp filter on every one of those threads. The
// test's own process, which made the policy, stays unrestricted.
func TestTheExecdProcessItsThreadsAndChildrenAreConfined(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	f := newFixture(t, Options{})
	addr, connections := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "HELLO")
	key := filepath.Join(f.home, ".ssh", "id_rsa")
	script := filepath.Join(f.ws, "confined.py")
	write(t, script, confinedScript)
	port := itoa(addr.(*net.TCPAddr).Port)
	out, err := f.run(t, Request{}, "echo shell > "+filepath.Join(f.outside, "shell")+"; python3 "+script+" "+f.outside+" "+key+" "+port)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	for _, who := range []string{"process", "thread", "child", "childthread"} {
		want := who + " write-refused read-refused connect-refused NoNewPrivs:1 Seccomp:2"
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want the line %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TOPSECRET") || connections.Load() != 0 {
		t.Errorf("the key was read or the listener reached (%d connections):\n%s", connections.Load(), out)
	}
	entries, _ := os.ReadDir(f.outside)
	for _, e := range entries {
		if e.Name() != "existing.txt" {
			t.Errorf("%s was written outside", e.Name())
		}
	}
	// darman's side: not restricted at all.
	status, _ := os.ReadFile("/proc/self/status")
	if !bytes.Contains(status, []byte("NoNewPrivs:\t0")) {
		t.Errorf("the process that made the sandbox has no_new_privs set:\n%s", status)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "existing.txt"), []byte("outside"), 0o644); err != nil {
		t.Errorf("the process that made the sandbox cannot write outside: %v", err)
	}
	if _, err := os.ReadFile(key); err != nil {
		t.Errorf("the process that made the sandbox cannot read home: %v", err)
	}
}

// TestCommandLineConfinesWhatAnotherProcessStarts: the command line for a
// process darman does not start (the editor's terminal) re-executes the
// helper in a namespace of its own (internal/sandbox's Exec, with
// os/exec), which then confines as darman's own commands are: no write
// outside, the protected paths read-only, the workspace writable.
func TestCommandLineConfinesWhatAnotherProcessStarts(t *testing.T) {
	f := newFixture(t, Options{})
	if err := os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
	marker := filepath.Join(f.outside, "marker")
	script := "echo x > " + marker + "; echo evil > .git/hooks/pre-commit; echo inside > inside.txt; cat inside.txt"
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
	out, _ := cmd.CombinedOutput()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the marker outside was written: %s", out)
	}
	if f.sb.Status().ProtectedReadOnly {
		if _, err := os.Stat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); err == nil {
			t.Errorf("a hook was written: %s", out)
		}
	}
	if !strings.Contains(string(out), "inside\n") {
		t.Errorf("the write inside the workspace failed: %s", out)
	}
}

// TestUDPIsRefusedWithTheNetworkOff: this kernel's Landlock (below ABI 10)
// does not see UDP, so refusing it is the seccomp filter's alone: a
// datagram to a local listener never arrives.
func TestUDPIsRefusedWithTheNetworkOff(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	f := newFixture(t, Options{})
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := itoa(pc.LocalAddr().(*net.UDPAddr).Port)
	send := `python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"DATAGRAM", ("127.0.0.1", int(sys.argv[1]))); print("SENT")' ` + port
	if out, err := f.run(t, Request{}, send); err == nil || strings.Contains(out, "SENT") {
		t.Errorf("sending UDP with the network off worked: %s", out)
	}
	out, err := f.run(t, Request{Network: true}, send)
	if err != nil || !strings.Contains(out, "SENT") {
		t.Fatalf("sending UDP with the network on failed: %v: %s", err, out)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, _, err := pc.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "DATAGRAM" {
		t.Errorf("the one datagram allowed: %q, %v", buf[:n], err)
	}
	pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, _, err := pc.ReadFrom(buf); err == nil {
		t.Errorf("a second datagram arrived: %q", buf[:n])
	}
}
