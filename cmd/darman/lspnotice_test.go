package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/testenv"
)

// TestWatchLanguageServers: a server that dies at start and one that is
// not installed each give one notice, however often their files are
// edited; after stop, none.
func TestWatchLanguageServers(t *testing.T) {
	root := t.TempDir()
	broken := filepath.Join(root, "broken-ls")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'broken-ls: no toolchain' >&2\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{LSP: map[string]config.LSP{
		"broken": {Command: []string{broken}, Extensions: []string{".brk"}},
		"gone":   {Command: []string{"darman-no-such-language-server"}, Extensions: []string{".gone"}},
		"later":  {Command: []string{broken}, Extensions: []string{".later"}},
	}}
	reg := &child.Registry{}
	defer reg.Close(0)
	l, err := newLanguageServers(context.Background(), root, cfg, nil, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 10)
	stop := l.watch(func(level, text string) { got <- level + " " + text })

	next := func() string {
		t.Helper()
		select {
		case s := <-got:
			return s
		case <-time.After(30 * time.Second):
			t.Fatal("no notice")
			return ""
		}
	}
	brk := filepath.Join(root, "a.brk")
	os.WriteFile(brk, []byte("x"), 0o644)
	l.Check(context.Background(), brk)
	if s := next(); !strings.HasPrefix(s, "warning language server broken failed to start, so .brk files get no diagnostics: ") ||
		!strings.Contains(s, "exited with status 7") || !strings.Contains(s, "broken-ls: no toolchain") {
		t.Fatalf("notice = %q", s)
	}
	gone := filepath.Join(root, "a.gone")
	os.WriteFile(gone, []byte("x"), 0o644)
	for range 3 {
		l.Check(context.Background(), gone)
	}
	if s := next(); s != "info language server gone is not installed, so .gone files get no diagnostics: darman-no-such-language-server was not found on PATH (check the command in darman's configuration (lsp.gone.command))" {
		t.Fatalf("notice = %q", s)
	}
	// The pool tells of a state change before the call that caused it
	// returns, so a notice would be in got by now.
	stop()
	later := filepath.Join(root, "a.later")
	os.WriteFile(later, []byte("x"), 0o644)
	l.Check(context.Background(), later)
	if st := l.Status(); !hasState(st, "later", diagnostics.StateFailed) {
		t.Fatalf("Status = %+v; want later failed", st)
	}
	select {
	case s := <-got:
		t.Fatalf("a notice after stop, or a repeated one: %q", s)
	default:
	}
}

func hasState(list []diagnostics.ServerStatus, name string, state diagnostics.State) bool {
	for _, st := range list {
		if st.Name == name && st.State == state {
			return true
		}
	}
	return false
}

// TestWatchALanguageServerThatCannotLoad: real gopls without the go
// command on its PATH tells the editor once that it cannot load the
// workspace, however many edits start it again, and darman.status's
// languageServers say why; once go is there, the editor is told it loaded
// the workspace.
func TestWatchALanguageServerThatCannotLoad(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	gopls := testenv.Gopls(t)
	for _, kv := range testenv.GoplsHome(t) {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	later := t.TempDir()
	t.Setenv("PATH", filepath.Dir(gopls)+string(os.PathListSeparator)+later)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	file := filepath.Join(root, "m.go")
	os.WriteFile(file, []byte("package m\n"), 0o644)
	reg := &child.Registry{}
	defer reg.Close(0)
	l, err := newLanguageServers(context.Background(), root, config.Config{}, nil, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 100)
	defer l.watch(func(level, text string) { got <- level + " " + text })()

	goStatus := func() diagnostics.ServerStatus {
		for _, s := range l.Status() {
			if s.Name == "go" {
				return s
			}
		}
		return diagnostics.ServerStatus{}
	}
	// Edits until an edit past the backoff has started gopls again twice.
	for deadline := time.Now().Add(60 * time.Second); goStatus().Restarts < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("gopls was not started again: %+v", goStatus())
		}
		l.Check(context.Background(), file)
		<-time.After(100 * time.Millisecond) // a poll, not a hot loop
	}
	l.Check(context.Background(), file)
	var notices []string
	for len(got) > 0 {
		notices = append(notices, <-got)
	}
	failed := 0
	for _, n := range notices {
		if strings.HasPrefix(n, "warning language server go runs but cannot load the workspace, so .go files get no diagnostics and queries fail: gopls cannot find the `go` command: put Go on PATH for darman's environment") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("notices = %q; want one saying gopls cannot load the workspace", notices)
	}
	if st := goStatus(); st.Load != diagnostics.LoadFailed || st.LoadError == nil || !strings.Contains(st.LoadError.Said, "go command required") {
		t.Errorf("Status = %+v", st)
	}

	if err := os.Symlink(goBin, filepath.Join(later, "go")); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(90 * time.Second)
	for {
		l.Check(context.Background(), file)
		select {
		case n := <-got:
			if n == "info language server go loaded the workspace: .go files get diagnostics again" {
				return
			}
			t.Logf("notice: %s", n)
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("no notice that gopls loaded the workspace once go was on PATH")
		}
	}
}
