package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/testenv"
)

var fakeLS string

// TestMain builds the fake language server the tests start, and fails
// the package's tests if a goroutine outlives them: Close stops every
// server's connection and reaper.
func TestMain(m *testing.M) {
	testenv.RunWithProgram(m, "github.com/darman-dev/darman/diagnostics/testdata/fakels", &fakeLS)
}

// fakePool makes a pool whose only server is fakels (for .txt files) with
// the given flags (and opts.Servers["fake"]'s other keys), in a fresh
// workspace, and checks at the end that no
// child process is left.
func fakePool(t *testing.T, opts Options, args ...string) (*Pool, string) {
	t.Helper()
	root := t.TempDir()
	opts.Root = root
	if opts.Servers == nil {
		opts.Servers = map[string]config.LSP{}
	}
	fake := opts.Servers["fake"]
	fake.Command, fake.Extensions = append([]string{fakeLS}, args...), []string{".txt"}
	opts.Servers["fake"] = fake
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		if kids := liveChildren(); len(kids) > 0 {
			t.Errorf("child processes left after Close: %v", kids)
		}
	})
	return p, root
}

// liveChildren lists this process's children that are alive (not
// zombies), as "pid comm".
func liveChildren() []string {
	me := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 2 && f[1] == me && f[0] != "Z" && f[0] != "X" {
			out = append(out, e.Name()+" "+string(stat[:i+1]))
		}
	}
	return out
}

// write writes a file, making its directories, and returns its path.
var write = testenv.WriteFile

func statusOf(p *Pool, name string) ServerStatus {
	for _, st := range p.Status() {
		if st.Name == name {
			return st
		}
	}
	return ServerStatus{}
}

func TestTouchAndDiagnostics(t *testing.T) {
	p, root := fakePool(t, Options{})
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "fine\n😀 ERROR\nWARN\n")
	if err := p.Touch(ctx, file); err != nil {
		t.Fatal(err)
	}
	rep, err := p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || rep.Stale || len(rep.Items) != 2 {
		t.Fatalf("Diagnostics = %+v, %v", rep, err)
	}
	e := rep.Items[0]
	if e.Line != 2 || e.Column != 3 || e.EndColumn != 8 || e.Severity != "error" || e.Code != "EERROR" {
		t.Errorf("error item = %+v; want line 2, columns 3-8 in characters", e)
	}
	if len(rep.Errors()) != 1 {
		t.Errorf("Errors() = %v", rep.Errors())
	}
	if e.CodeHref != "https://example.com/fakels/EERROR" {
		t.Errorf("error item's CodeHref = %q; want the server's codeDescription.href", e.CodeHref)
	}
	wantRel := []Related{{Location: Location{Path: file, Start: Position{1, 1}, End: Position{1, 5}}, Message: "the document starts here"}}
	if fmt.Sprint(e.Related) != fmt.Sprint(wantRel) {
		t.Errorf("error item's Related = %+v; want %+v", e.Related, wantRel)
	}
	st := statusOf(p, "fake")
	if st.State != StateRunning || st.PID == 0 || st.Server != "fakels 1" {
		t.Errorf("Status = %+v", st)
	}

	// A fix on disk, touched: a fresh, clean set.
	write(t, file, "fine\n")
	if err := p.Touch(ctx, file); err != nil {
		t.Fatal(err)
	}
	rep, err = p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || rep.Stale || len(rep.Items) != 0 || rep.Version != 2 {
		t.Fatalf("after the fix = %+v, %v", rep, err)
	}
}

// overlay is a FileReader that serves some files from memory, as the LSP
// front serves the editor's unsaved buffers.
type overlay map[string]string

func (o overlay) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if s, ok := o[path]; ok {
		return []byte(s), nil
	}
	return os.ReadFile(path)
}

func TestTouchReadsUnsavedBuffers(t *testing.T) {
	buffers := overlay{}
	p, root := fakePool(t, Options{Files: buffers})
	file := write(t, filepath.Join(root, "a.txt"), "fine on disk\n")
	buffers[file] = "unsaved ERROR\n"
	rep, err := p.Diagnostics(context.Background(), file, 10*time.Second)
	if err != nil || len(rep.Items) != 1 {
		t.Fatalf("Diagnostics = %+v, %v; want the unsaved buffer's error", rep, err)
	}
}

func TestNoServer(t *testing.T) {
	p, root := fakePool(t, Options{Servers: map[string]config.LSP{"rust": {Disabled: true}}})
	ctx := context.Background()
	for _, tt := range []struct{ file, want string }{
		{"x.unknown", "no server is configured for .unknown files"},
		{"Makefile", "has no extension"},
		{"x.rs", "lsp.rust is disabled"},
	} {
		err := p.Touch(ctx, filepath.Join(root, tt.file))
		if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Touch(%s) = %v; want ErrNoServer saying %q", tt.file, err, tt.want)
		}
	}
	if err := p.Touch(ctx, "relative.txt"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("Touch of a relative path = %v", err)
	}
}

func TestNotInstalled(t *testing.T) {
	p, root := fakePool(t, Options{
		Env:     []string{"PATH=" + t.TempDir()},
		Servers: map[string]config.LSP{"go": {Command: []string{"gopls"}, Extensions: []string{".go"}}},
	})
	err := p.Touch(context.Background(), write(t, filepath.Join(root, "a.go"), "package a\n"))
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "go install golang.org/x/tools/gopls") {
		t.Fatalf("Touch = %v; want ErrNotInstalled with the install hint", err)
	}
	if st := statusOf(p, "go"); st.State != StateMissing {
		t.Fatalf("Status(go) = %+v; want not installed", st)
	}
	if st := statusOf(p, "python"); st.State != StateMissing || !strings.Contains(st.Reason, "pyright") {
		t.Fatalf("Status(python) = %+v; want not installed, naming pyright", st)
	}
}

func TestCrashRestartsOnNextUse(t *testing.T) {
	var notices []ServerStatus
	noticesCh := make(chan ServerStatus, 100)
	p, root := fakePool(t, Options{Backoff: 50 * time.Millisecond, OnStatus: func(st ServerStatus) { noticesCh <- st }}, "-crash-on", "textDocument/didChange")
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "ERROR\n")
	rep, err := p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || len(rep.Items) != 1 {
		t.Fatalf("first Diagnostics = %+v, %v", rep, err)
	}
	firstPID := statusOf(p, "fake").PID

	write(t, file, "ERROR changed\n")
	if err := p.Touch(ctx, file); err != nil {
		t.Fatalf("Touch = %v", err)
	}
	_, err = p.Diagnostics(ctx, file, 10*time.Second)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Diagnostics after the crash = %v; want ErrUnavailable", err)
	}
	st := waitState(t, p, "fake", StateCrashed)
	if !strings.Contains(st.Reason, "exited with status 3") || !strings.Contains(st.Reason, "crashing on textDocument/didChange") {
		t.Errorf("crash reason = %q; want the exit status and the server's last stderr line", st.Reason)
	}
	if st.Exit != "exited with status 3" || !strings.HasSuffix(st.Stderr, "fakels: crashing on textDocument/didChange") {
		t.Errorf("crash status: exit %q, stderr %q; want them apart too", st.Exit, st.Stderr)
	}

	// Next use after the backoff starts a new server, which gets the
	// document opened afresh (so it does not crash: didOpen, not didChange).
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep, err = p.Diagnostics(ctx, file, 10*time.Second)
		if err == nil || time.Now().After(deadline) {
			break
		}
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "next try in") {
			t.Fatalf("Diagnostics during backoff = %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || len(rep.Items) != 1 {
		t.Fatalf("Diagnostics after restart = %+v, %v", rep, err)
	}
	st = statusOf(p, "fake")
	if st.State != StateRunning || st.PID == firstPID || st.Restarts != 1 {
		t.Fatalf("Status after restart = %+v (first pid %d)", st, firstPID)
	}
	for len(noticesCh) > 0 {
		notices = append(notices, <-noticesCh)
	}
	var states []State
	for _, n := range notices {
		states = append(states, n.State)
	}
	if fmt.Sprint(states) != fmt.Sprint([]State{StateRunning, StateCrashed, StateRunning}) {
		t.Errorf("notices = %v; want running, crashed, running", states)
	}
}

func waitState(t *testing.T, p *Pool, name string, want State) ServerStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := statusOf(p, name)
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s: %+v", name, want, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFailedStarts(t *testing.T) {
	ctx := context.Background()
	t.Run("garbage", func(t *testing.T) {
		p, root := fakePool(t, Options{Backoff: time.Hour}, "-garbage")
		err := p.Touch(ctx, write(t, filepath.Join(root, "a.txt"), "x"))
		if err == nil || !strings.Contains(err.Error(), "not an LSP message") {
			t.Fatalf("Touch = %v; want the garbage named", err)
		}
		st := statusOf(p, "fake")
		if st.State != StateFailed || st.RetryAt.IsZero() {
			t.Fatalf("Status = %+v; want failed with a retry time", st)
		}
		// Within the backoff, it is not started again.
		err = p.Touch(ctx, filepath.Join(root, "a.txt"))
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "next try in") {
			t.Fatalf("second Touch = %v", err)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		p, root := fakePool(t, Options{StartTimeout: 200 * time.Millisecond}, "-silent")
		err := p.Touch(ctx, write(t, filepath.Join(root, "a.txt"), "x"))
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "initialize") {
			t.Fatalf("Touch = %v; want a failed start naming initialize", err)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		p, root := fakePool(t, Options{}, "-no-such-flag")
		err := p.Touch(ctx, write(t, filepath.Join(root, "a.txt"), "x"))
		if err == nil || !strings.Contains(err.Error(), "exited with status 2") || !strings.Contains(err.Error(), "no-such-flag") {
			t.Fatalf("Touch = %v; want the exit status and the server's complaint", err)
		}
		st := statusOf(p, "fake")
		if st.State != StateFailed || st.Exit != "exited with status 2" || !strings.Contains(st.Stderr, "no-such-flag") {
			t.Fatalf("Status = %+v; want failed, with the exit status and stderr apart", st)
		}
	})
	t.Run("stops reading", func(t *testing.T) {
		p, root := fakePool(t, Options{WriteTimeout: 100 * time.Millisecond}, "-stop-reading-on", "initialized")
		err := p.Touch(ctx, write(t, filepath.Join(root, "a.txt"), strings.Repeat("x", 1<<20)))
		if !errors.Is(err, lsp.ErrClosed) {
			t.Fatalf("Touch of a server that reads nothing = %v; want the connection closed", err)
		}
		st := waitState(t, p, "fake", StateCrashed)
		if !strings.Contains(st.Reason, "stopped reading its input") {
			t.Fatalf("Status = %+v; want the hang named", st)
		}
	})
}

func TestFloodDoesNotDisturb(t *testing.T) {
	p, root := fakePool(t, Options{}, "-flood", "2000", "-flood-items", "3000")
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "ERROR\n")
	rep, err := p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || len(rep.Errors()) != 1 || len(rep.Items) > 1000 {
		t.Fatalf("Diagnostics = %d items (%d errors), %v; want the error kept and at most 1000 items", len(rep.Items), len(rep.Errors()), err)
	}
	write(t, file, "ERROR\nERROR\n")
	p.Touch(ctx, file)
	rep, err = p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || len(rep.Errors()) != 2 || statusOf(p, "fake").State != StateRunning {
		t.Fatalf("second Diagnostics = %d errors, %v", len(rep.Errors()), err)
	}
}

func TestCloseKillsTheProcessGroup(t *testing.T) {
	root := t.TempDir()
	log := filepath.Join(root, "fake.log")
	p, err := New(context.Background(), Options{Root: root, Servers: map[string]config.LSP{
		"fake": {Command: []string{fakeLS, "-child", "-log", log}, Extensions: []string{".txt"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Diagnostics(context.Background(), write(t, filepath.Join(root, "a.txt"), "x"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	pgid := statusOf(p, "fake").PID
	b, _ := os.ReadFile(log)
	var grandchild int
	fmt.Sscanf(string(b), "child %d", &grandchild)
	if grandchild == 0 || !child.GroupAlive(pgid) {
		t.Fatalf("the fake did not start its child (log %q)", b)
	}
	p.Close()
	if child.GroupAlive(pgid) {
		t.Fatal("a process of the server's group is still alive after Close")
	}
	if kids := liveChildren(); len(kids) > 0 {
		t.Fatalf("children left: %v", kids)
	}
}

func TestContextEndClosesThePool(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := New(ctx, Options{Root: root, Servers: map[string]config.LSP{
		"fake": {Command: []string{fakeLS}, Extensions: []string{".txt"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Touch(context.Background(), write(t, filepath.Join(root, "a.txt"), "x")); err != nil {
		t.Fatal(err)
	}
	pgid := statusOf(p, "fake").PID
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for child.GroupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if child.GroupAlive(pgid) {
		t.Fatal("the server outlived the pool's context")
	}
	p.Close()
	if err := p.Touch(context.Background(), filepath.Join(root, "a.txt")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Touch after close = %v", err)
	}
}

func TestIdleServersStop(t *testing.T) {
	p, root := fakePool(t, Options{IdleTimeout: 50 * time.Millisecond})
	file := write(t, filepath.Join(root, "a.txt"), "ERROR")
	if err := p.Touch(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	waitState(t, p, "fake", StateIdle)
	rep, err := p.Diagnostics(context.Background(), file, 10*time.Second)
	if err != nil || len(rep.Items) != 1 {
		t.Fatalf("Diagnostics after an idle stop = %+v, %v", rep, err)
	}
}

func TestProbe(t *testing.T) {
	servers := map[string]config.LSP{
		// A server for files the workspace has, which fails to start.
		"broken": {Command: []string{fakeLS, "-no-such-flag"}, Extensions: []string{".brk"}},
		// One for files it does not have.
		"unused": {Command: []string{fakeLS}, Extensions: []string{".unused"}},
	}
	p, root := fakePool(t, Options{Servers: servers})
	write(t, filepath.Join(root, "sub", "a.txt"), "x")
	write(t, filepath.Join(root, "b.brk"), "x")
	write(t, filepath.Join(root, "node_modules", "dep", "c.unused"), "x")
	byName := map[string]ServerStatus{}
	for _, st := range p.Probe(context.Background()) {
		byName[st.Name] = st
	}
	if st := byName["fake"]; st.State != StateRunning || st.PID == 0 || st.Root != root {
		t.Errorf("fake = %+v; want it running for the workspace's .txt file", st)
	}
	if st := byName["broken"]; st.State != StateFailed || st.Exit != "exited with status 2" || !strings.Contains(st.Stderr, "no-such-flag") {
		t.Errorf("broken = %+v; want it failed, with its exit status and stderr", st)
	}
	if st := byName["unused"]; st.State != StateIdle || len(st.Command) == 0 {
		t.Errorf("unused = %+v; want it found but not started (its only file is under node_modules)", st)
	}
}

func TestConfiguredIdleTimeout(t *testing.T) {
	// The pool has no idle timeout; the server's configuration does.
	p, root := fakePool(t, Options{Servers: map[string]config.LSP{"fake": {IdleTimeout: 50 * time.Millisecond}}})
	file := write(t, filepath.Join(root, "a.txt"), "ERROR")
	if err := p.Touch(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	waitState(t, p, "fake", StateIdle)
}

func TestConfiguredDiagnosticsWait(t *testing.T) {
	// The pool's own wait is too short for a server that takes 200 ms;
	// the server's configured wait is long enough.
	t.Run("configured", func(t *testing.T) {
		servers := map[string]config.LSP{"fake": {DiagnosticsWait: time.Minute}}
		p, root := fakePool(t, Options{Wait: time.Millisecond, Servers: servers}, "-delay", "200ms")
		file := write(t, filepath.Join(root, "a.txt"), "ERROR")
		rep, err := p.Diagnostics(context.Background(), file, 0)
		if err != nil || rep.Stale || len(rep.Items) != 1 {
			t.Fatalf("Diagnostics with the configured wait = %+v, %v; want the fresh set", rep, err)
		}
	})
	t.Run("pool's", func(t *testing.T) {
		p, root := fakePool(t, Options{Wait: time.Millisecond}, "-delay", "200ms")
		file := write(t, filepath.Join(root, "a.txt"), "ERROR")
		rep, err := p.Diagnostics(context.Background(), file, 0)
		if err != nil || !rep.Stale {
			t.Fatalf("Diagnostics with the pool's 1 ms wait = %+v, %v; want a stale set", rep, err)
		}
	})
}

// TestChildDiesWithDarman kills a process running a pool with SIGKILL and
// checks that its language server dies too (Linux's parent-death signal).
func TestChildDiesWithDarman(t *testing.T) {
	if os.Getenv("DARMAN_POOL_HELPER") != "" {
		root := os.Getenv("DARMAN_POOL_HELPER")
		p, err := New(context.Background(), Options{Root: root, Servers: map[string]config.LSP{
			"fake": {Command: []string{os.Getenv("DARMAN_FAKELS")}, Extensions: []string{".txt"}},
		}})
		if err != nil {
			os.Exit(1)
		}
		if err := p.Touch(context.Background(), filepath.Join(root, "a.txt")); err != nil {
			os.Exit(1)
		}
		fmt.Println(statusOf(p, "fake").PID)
		select {}
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs Linux")
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "x")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestChildDiesWithDarman$")
	cmd.Env = append(os.Environ(), "DARMAN_POOL_HELPER="+root, "DARMAN_FAKELS="+fakeLS)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil || pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper did not report its server: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for child.GroupAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if child.GroupAlive(pid) {
		syscall_kill(pid)
		t.Fatal("the language server outlived darman's SIGKILL")
	}
}
