package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
)

// eventually retries f until it returns nil or d has passed, and returns
// its last error.
func eventually(d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLoadErrorFromAMessage: a server that runs but says, with an
// error-level showMessage while loading, that it cannot load the workspace
// answers its queries with a LoadError quoting it, not with its empty
// answers; Status and OnStatus say so; once what it lacked is there, the
// next use after the backoff starts it again and it answers.
func TestLoadErrorFromAMessage(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "broken")
	write(t, marker, "")
	statuses := make(chan ServerStatus, 100)
	p, root := fakePool(t, Options{Backoff: 50 * time.Millisecond, Process: "darman test", OnStatus: func(st ServerStatus) { statuses <- st }},
		"-load-error", "fakels: the toolchain is missing", "-load-error-while", marker)
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "ERROR\n")

	rep, err := p.Diagnostics(ctx, file, 10*time.Second)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrCannotLoad) {
		t.Fatalf("Diagnostics = %+v, %v; want a LoadError", rep, err)
	}
	if le.Server != "fake" || le.Program != "fakels" || le.Said != "fakels: the toolchain is missing" ||
		le.Cause != "fakels reported an error while loading the workspace" || le.Advice != "fix what it says" {
		t.Errorf("LoadError = %+v", le)
	}
	if !strings.Contains(err.Error(), `fakels said: "fakels: the toolchain is missing"`) || !strings.Contains(err.Error(), "darman starts it again on the next call") {
		t.Errorf("the error's text = %q", err)
	}
	if _, err := p.DocumentSymbols(ctx, file); !errors.Is(err, ErrCannotLoad) {
		t.Errorf("DocumentSymbols = %v; want ErrCannotLoad", err)
	}
	if _, err := p.DiagnoseText(ctx, file, "fine\n", 10*time.Second); !errors.Is(err, ErrCannotLoad) {
		t.Errorf("DiagnoseText = %v; want ErrCannotLoad", err)
	}
	if out, meta := p.Check(ctx, file); out != "" || !strings.Contains(string(meta), "the toolchain is missing") {
		t.Errorf("Check = %q, %s; want nothing for the model and the reason in the metadata", out, meta)
	}
	st := statusOf(p, "fake")
	if st.State != StateRunning || st.Load != LoadFailed || st.LoadError == nil || st.LoadError.Said != le.Said {
		t.Errorf("Status = %+v", st)
	}
	if err := waitStatus(statuses, func(st ServerStatus) bool { return st.Load == LoadFailed }); err != nil {
		t.Error(err)
	}

	// Fixed: after the backoff, the next use starts it again.
	os.Remove(marker)
	err = eventually(30*time.Second, func() error {
		_, err := p.Diagnostics(ctx, file, 10*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("after the fix, Diagnostics = %v", err)
	}
	rep, err = p.Diagnostics(ctx, file, 10*time.Second)
	if err != nil || len(rep.Items) != 1 {
		t.Errorf("after the fix, Diagnostics = %+v, %v", rep, err)
	}
	if st := statusOf(p, "fake"); st.Load != LoadLoaded || st.LoadError != nil || st.Restarts == 0 {
		t.Errorf("Status after the fix = %+v", st)
	}
	if err := waitStatus(statuses, func(st ServerStatus) bool { return st.Load == LoadLoaded }); err != nil {
		t.Error(err)
	}
}

// TestLoadRecoversInPlace: a server that reloads the workspace when
// files change, and this time loads it, serves again without being
// restarted.
func TestLoadRecoversInPlace(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "broken")
	write(t, marker, "")
	p, root := fakePool(t, Options{Backoff: time.Hour}, "-load-error", "fakels: the toolchain is missing", "-load-error-while", marker)
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "ERROR\n")
	if _, err := p.Diagnostics(ctx, file, 10*time.Second); !errors.Is(err, ErrCannotLoad) {
		t.Fatalf("Diagnostics = %v; want ErrCannotLoad", err)
	}
	os.Remove(marker)
	p.FilesChanged(ctx, FileChange{Path: file, Type: 2})
	err := eventually(10*time.Second, func() error {
		_, err := p.Diagnostics(ctx, file, 10*time.Second)
		return err
	})
	if st := statusOf(p, "fake"); err != nil || st.Restarts != 0 || st.Load != LoadLoaded {
		t.Errorf("after a clean reload: Diagnostics = %v, Status = %+v", err, st)
	}
}

// TestLoadErrorFromAQuery: a query's error in a known shape of a load
// failure (tsserver's "No Project.") marks the server unable to load the
// workspace, with that shape's advice.
func TestLoadErrorFromAQuery(t *testing.T) {
	p, root := fakePool(t, Options{Backoff: time.Hour}, "-query-error", "Error: No Project.")
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "fine\n")
	_, err := p.DocumentSymbols(ctx, file)
	var le *LoadError
	if !errors.As(err, &le) || le.Cause != "fakels has no TypeScript project for the file" || !strings.Contains(le.Said, "No Project.") {
		t.Fatalf("DocumentSymbols = %v (%+v)", err, le)
	}
	if _, err := p.Diagnostics(ctx, file, 10*time.Second); !errors.Is(err, ErrCannotLoad) {
		t.Errorf("Diagnostics after it = %v; want ErrCannotLoad", err)
	}
}

func waitStatus(ch chan ServerStatus, ok func(ServerStatus) bool) error {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case st := <-ch:
			if ok(st) {
				return nil
			}
		case <-timeout:
			return errors.New("no such status was announced")
		}
	}
}

// TestLoadNeverFinishes: a server whose loading progress never ends is
// reported stuck once LoadTimeout has passed.
func TestLoadNeverFinishes(t *testing.T) {
	p, root := fakePool(t, Options{LoadTimeout: 2 * time.Second}, "-load-hang")
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "fine\n")
	// (The wait lasts while the server reports progress.)
	if _, err := p.Diagnostics(ctx, file, 100*time.Millisecond); err != nil {
		t.Fatalf("Diagnostics while loading = %v; want the answer", err)
	}
	if st := statusOf(p, "fake"); st.Load != LoadLoading {
		t.Errorf("Status while loading = %+v", st)
	}
	err := eventually(10*time.Second, func() error {
		_, err := p.Diagnostics(ctx, file, 100*time.Millisecond)
		if err == nil {
			return errors.New("still answering")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Diagnostics(ctx, file, 100*time.Millisecond)
	var le *LoadError
	if !errors.As(err, &le) || !strings.Contains(le.Cause, "fakels has not finished loading the workspace after") || le.Said != "Loading: reading the workspace" || !le.RetryAt.IsZero() {
		t.Errorf("Diagnostics once stuck = %v (%+v)", err, le)
	}
}

// TestGoplsWithoutGo: real gopls whose PATH lacks the go command cannot
// load the module; every query says so in gopls's words, with what to do;
// once go is on that PATH, the same pool answers.
func TestGoplsWithoutGo(t *testing.T) {
	env, gopls := testenv.GoplsEnv(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root := testenv.GoModule(t, t.TempDir())
	a := filepath.Join(root, "a", "a.go")
	// A PATH with gopls, and a directory that has no go yet.
	later := t.TempDir()
	env = testenv.SetEnv(env, "PATH="+filepath.Dir(gopls)+string(os.PathListSeparator)+later)
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second, Backoff: 100 * time.Millisecond, Process: "darman mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()

	check := func(what string, err error) {
		t.Helper()
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("%s = %v; want a LoadError", what, err)
		}
		if le.Cause != "gopls cannot find the `go` command" || le.Advice != "put Go on PATH for darman mcp's environment" ||
			!strings.Contains(le.Said, "go command required, not found") {
			t.Errorf("%s: LoadError = %+v", what, le)
		}
	}
	_, err = p.Diagnostics(ctx, a, 0)
	check("Diagnostics", err)
	_, err = p.Symbols(ctx, "Greet", SymbolQuery{})
	check("Symbols", err)
	_, err = p.Resolve(ctx, "a.Greet", "", "")
	check("Resolve", err)
	_, err = p.References(ctx, a, Position{Line: 4, Column: 6}, false)
	check("References", err)
	if st := statusOf(p, "go"); st.Load != LoadFailed || st.LoadError == nil || !strings.Contains(st.LoadError.Said, "Error loading workspace folders") {
		t.Errorf("Status = %+v", st)
	}

	if err := os.Symlink(goBin, filepath.Join(later, "go")); err != nil {
		t.Fatal(err)
	}
	var syms []Symbol
	err = eventually(60*time.Second, func() error {
		var err error
		syms, err = p.Symbols(ctx, "Greet", SymbolQuery{})
		return err
	})
	if err != nil || len(syms) == 0 || syms[0].Name != "Greet" {
		t.Fatalf("with go on PATH, Symbols = %+v, %v", syms, err)
	}
	refs, err := p.References(ctx, a, Position{Line: 4, Column: 6}, false)
	if err != nil || len(refs) != 1 {
		t.Errorf("with go on PATH, References = %+v, %v", refs, err)
	}
	if st := statusOf(p, "go"); st.Load != LoadLoaded {
		t.Errorf("Status with go on PATH = %+v", st)
	}
}

// TestProblems: what the agent's diagnostics tool reads of one file, every
// severity, one line per problem, capped with a count of the rest.
func TestProblems(t *testing.T) {
	p, root := fakePool(t, Options{Wait: 10 * time.Second})
	ctx := context.Background()
	file := write(t, filepath.Join(root, "sub", "a.txt"), "fine\n"+strings.Repeat("ERROR\n", 101)+"WARN\n")
	out, meta, err := p.Problems(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "sub/a.txt has 102 problem(s):" || lines[1] != "sub/a.txt: L2:1 error: found ERROR" || lines[len(lines)-1] != "... and 2 more" || len(lines) != 102 {
		t.Errorf("Problems = %d lines:\n%s", len(lines), out)
	}
	if !strings.Contains(string(meta), `"severity":"warning"`) {
		t.Errorf("the metadata lacks the warning past the cap: %s", meta)
	}
	clean := write(t, filepath.Join(root, "clean.txt"), "fine\n")
	if out, _, err := p.Problems(ctx, clean); out != "" || err != nil {
		t.Errorf("Problems of a clean file = %q, %v", out, err)
	}
}

// TestPyrightConfigurationError: real pyright with a pyrightconfig.json it
// cannot parse is reported as unable to load the project, naming the file;
// fixed, the next use after the backoff starts it again and it answers.
func TestPyrightConfigurationError(t *testing.T) {
	env := nodeServerEnv(t, "pyright-langserver")
	root := t.TempDir()
	config := write(t, filepath.Join(root, "pyrightconfig.json"), `{"include": ["."], `)
	file := write(t, filepath.Join(root, "m.py"), "def f(a: int) -> str:\n    return a\n")
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second, Backoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()
	_, err = p.Diagnostics(ctx, file, 0)
	var le *LoadError
	if !errors.As(err, &le) || le.Cause != "pyright-langserver cannot read its configuration" || !strings.Contains(le.Said, config+`" could not be parsed`) {
		t.Fatalf("Diagnostics = %v (%+v); want pyright's configuration error", err, le)
	}
	write(t, config, `{"include": ["."]}`)
	var rep Report
	err = eventually(60*time.Second, func() error {
		var err error
		rep, err = p.Diagnostics(ctx, file, 0)
		return err
	})
	if err != nil || len(rep.Errors()) != 1 {
		t.Errorf("with the configuration fixed, Diagnostics = %+v, %v", rep, err)
	}
}

// TestLoadTimeIsReported: while a server loads the workspace, its status
// says so and for how long; once loaded, how long the load took (from
// its start to the end of its loading progress), which no longer grows.
// Queries are answered meanwhile: a load is never a hang.
func TestLoadTimeIsReported(t *testing.T) {
	p, root := fakePool(t, Options{}, "-load-for", "400ms")
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "fine\n")
	if _, err := p.Diagnostics(ctx, file, 100*time.Millisecond); err != nil {
		t.Fatalf("Diagnostics while loading = %v; want the answer", err)
	}
	first := statusOf(p, "fake")
	time.Sleep(50 * time.Millisecond)
	second := statusOf(p, "fake")
	if first.Load != LoadLoading || second.Load != LoadLoading || second.LoadMillis <= first.LoadMillis {
		t.Errorf("while loading: %+v, then %+v", first, second)
	}
	var loaded ServerStatus
	err := eventually(10*time.Second, func() error {
		p.Diagnostics(ctx, file, 100*time.Millisecond)
		if loaded = statusOf(p, "fake"); loaded.Load != LoadLoaded {
			return fmt.Errorf("load %q", loaded.Load)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.LoadMillis < 400 {
		t.Errorf("loaded in %d ms; the server's progress lasted 400 ms", loaded.LoadMillis)
	}
	time.Sleep(50 * time.Millisecond)
	if again := statusOf(p, "fake"); again.LoadMillis != loaded.LoadMillis {
		t.Errorf("the load time moved after the load: %d then %d ms", loaded.LoadMillis, again.LoadMillis)
	}
}
