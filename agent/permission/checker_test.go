package permission

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// scriptedAsker answers requests from a script, in order, and records them.
type scriptedAsker struct {
	t       *testing.T
	mu      sync.Mutex
	replies []Reply
	asked   []Request
}

func (a *scriptedAsker) Ask(ctx context.Context, req Request) (Reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if len(a.replies) == 0 {
		a.t.Errorf("unexpected ask: %+v", req)
		return Reply{}, errors.New("the script has no answer left")
	}
	r := a.replies[0]
	a.replies = a.replies[1:]
	return r, nil
}

func (a *scriptedAsker) requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

// memGrants is a GrantStore in memory, shared by the Checkers of a test the
// way the badger store is shared by sessions.
type memGrants struct {
	mu      sync.Mutex
	byRoot  map[string][]Rule
	loadErr error
	addErr  error
	loads   int
}

func (g *memGrants) LoadGrants(_ context.Context, workspace string) ([]Rule, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.loads++
	if g.loadErr != nil {
		return nil, g.loadErr
	}
	return slices.Clone(g.byRoot[workspace]), nil
}

func (g *memGrants) AddGrants(ctx context.Context, workspace string, rules []Rule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.addErr != nil {
		return g.addErr
	}
	if g.byRoot == nil {
		g.byRoot = map[string][]Rule{}
	}
	g.byRoot[workspace] = append(g.byRoot[workspace], rules...)
	return nil
}

func (g *memGrants) stored(workspace string) []Rule {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.byRoot[workspace])
}

func newChecker(t *testing.T, opts Options) *Checker {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	c, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func bash(line string) Call { return Call{Permission: Bash, Subjects: []string{line}} }

func TestCheckerAllowsAndDeniesByRule(t *testing.T) {
	asker := &scriptedAsker{t: t}
	c := newChecker(t, Options{Asker: asker, Rules: []Rule{
		{Permission: Bash, Pattern: "git status *", Action: Allow},
		{Permission: Bash, Pattern: "rm *", Action: Deny},
	}})
	if err := c.Check(t.Context(), bash("git status -s")); err != nil {
		t.Errorf("allowed command: %v", err)
	}
	err := c.Check(t.Context(), bash("git status && rm -rf build"))
	var denied *DeniedError
	if !errors.As(err, &denied) || !errors.Is(err, ErrDenied) {
		t.Fatalf("denied command = %v, want a *DeniedError", err)
	}
	if denied.Rule == nil || denied.Rule.Pattern != "rm *" || !slices.Equal(denied.Subjects, []string{"rm -rf build"}) {
		t.Errorf("DeniedError = %+v, want the rule rm * on rm -rf build", denied)
	}
	if msg := err.Error(); !strings.Contains(msg, `"rm -rf build"`) || !strings.Contains(msg, `rm *`) {
		t.Errorf("message for the model = %q, want the command and the rule", msg)
	}
	if n := len(asker.requests()); n != 0 {
		t.Errorf("asked %d times, want none", n)
	}
}

func TestCheckerAllowOnceAsksEachTime(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowOnce}, {Answer: AllowOnce}}}
	c := newChecker(t, Options{Asker: asker})
	for range 2 {
		if err := c.Check(t.Context(), bash("make build")); err != nil {
			t.Fatalf("Check: %v", err)
		}
	}
	reqs := asker.requests()
	if len(reqs) != 2 {
		t.Fatalf("asked %d times, want 2", len(reqs))
	}
	want := Request{Permission: Bash, Patterns: []string{"make build"}, Title: "bash make build", Suggest: []string{"make build *"}}
	if got := reqs[0]; got.Permission != want.Permission || !slices.Equal(got.Patterns, want.Patterns) ||
		got.Title != want.Title || !slices.Equal(got.Suggest, want.Suggest) {
		t.Errorf("request = %+v, want %+v", got, want)
	}
}

func TestCheckerAllowAlwaysPersists(t *testing.T) {
	root := t.TempDir()
	store := &memGrants{}
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}, {Answer: RejectOnce}}}
	c := newChecker(t, Options{Root: root, Asker: asker, Grants: store})

	if err := c.Check(t.Context(), bash("npm run test -- -u")); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// The grant covers the command's prefix from now on: no second ask.
	if err := c.Check(t.Context(), bash("npm run test")); err != nil {
		t.Fatalf("Check after always: %v", err)
	}
	if n := len(asker.requests()); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	// Not more than the prefix.
	if err := c.Check(t.Context(), bash("npm run deploy")); !errors.Is(err, ErrDenied) {
		t.Errorf("npm run deploy = %v, want it asked and rejected", err)
	}
	if n := len(asker.requests()); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}

	want := []Rule{{Permission: Bash, Pattern: "npm run test *", Action: Allow}}
	if got := store.stored(root); !slices.Equal(got, want) {
		t.Errorf("stored grants = %v, want %v", got, want)
	}

	// A later session in the same workspace starts with the grant.
	later := newChecker(t, Options{Root: root, Asker: &scriptedAsker{t: t}, Grants: store})
	if err := later.Check(t.Context(), bash("npm run test")); err != nil {
		t.Errorf("later session: %v", err)
	}
	if got := later.Rules(); !slices.Contains(got, want[0]) {
		t.Errorf("Rules() = %v, want it to hold the grant", got)
	}
}

func TestCheckerRejectWithMessage(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{
		{Answer: RejectOnce, Message: "use make test instead"},
		{Answer: RejectOnce},
	}}
	c := newChecker(t, Options{Asker: asker})
	err := c.Check(t.Context(), bash("go test ./..."))
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "use make test instead") {
		t.Fatalf("Check = %v, want a denial carrying the user's message", err)
	}
	// Rejecting once does not remember anything: the next call asks again.
	err = c.Check(t.Context(), bash("go test ./..."))
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("second Check = %v, want a plain rejection", err)
	}
	if n := len(asker.requests()); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}
}

func TestCheckerRejectAlwaysBecomesADenyRule(t *testing.T) {
	root := t.TempDir()
	store := &memGrants{}
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: RejectAlways, Message: "never push"}}}
	c := newChecker(t, Options{Root: root, Asker: asker, Grants: store, Rules: []Rule{
		{Permission: Bash, Pattern: "git status *", Action: Allow},
	}})
	if err := c.Check(t.Context(), bash("git push origin main")); !errors.Is(err, ErrDenied) ||
		!strings.Contains(err.Error(), "never push") {
		t.Fatalf("Check = %v, want a denial with the message", err)
	}
	err := c.Check(t.Context(), bash("git status && git push --force"))
	var denied *DeniedError
	if !errors.As(err, &denied) || denied.Rule == nil || *denied.Rule != (Rule{Permission: Bash, Pattern: "git push *", Action: Deny}) {
		t.Fatalf("after reject always: %v, want a denial by the rule git push *", err)
	}
	if n := len(asker.requests()); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	if got := store.stored(root); len(got) != 1 || got[0].Action != Deny {
		t.Errorf("stored grants = %v, want one deny rule", got)
	}
}

func TestCheckerCompoundAsksOnlyWhatRulesLeaveOpen(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}}}
	c := newChecker(t, Options{Asker: asker, Rules: []Rule{
		{Permission: Bash, Pattern: "git status *", Action: Allow},
	}})
	if err := c.Check(t.Context(), bash("git status && make && make && rm -rf build")); err != nil {
		t.Fatalf("Check: %v", err)
	}
	reqs := asker.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v, want one", reqs)
	}
	if want := []string{"make", "rm -rf build"}; !slices.Equal(reqs[0].Patterns, want) {
		t.Errorf("Patterns = %q, want %q", reqs[0].Patterns, want)
	}
	if want := []string{"make", "rm -rf build"}; !slices.Equal(reqs[0].Suggest, want) {
		t.Errorf("Suggest = %q, want %q", reqs[0].Suggest, want)
	}
	// Both are granted now; a command using only them runs.
	if err := c.Check(t.Context(), bash("make; rm -rf build")); err != nil {
		t.Errorf("granted commands: %v", err)
	}
}

func TestCheckerOpaqueCommandCannotBeGranted(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}, {Answer: AllowOnce}}}
	c := newChecker(t, Options{Asker: asker})
	for range 2 {
		if err := c.Check(t.Context(), bash("$CMD --flag")); err != nil {
			t.Fatalf("Check: %v", err)
		}
	}
	reqs := asker.requests()
	if len(reqs) != 2 || len(reqs[0].Suggest) != 0 {
		t.Errorf("requests = %+v, want two asks with nothing to grant", reqs)
	}
	if want := "$CMD --flag: the command name is only known at run time"; len(reqs) == 0 ||
		!slices.Equal(reqs[0].Reasons, []string{want}) {
		t.Errorf("Reasons = %q, want %q", reqs[0].Reasons, want)
	}

	// An unparseable line is asked with the parse error for the human.
	asker.replies = append(asker.replies, Reply{Answer: RejectOnce})
	if err := c.Check(t.Context(), bash("echo 'oops")); !errors.Is(err, ErrDenied) {
		t.Fatalf("Check = %v, want it asked and rejected", err)
	}
	last := asker.requests()[2]
	if len(last.Reasons) != 1 || !strings.Contains(last.Reasons[0], "does not parse") || len(last.Suggest) != 0 {
		t.Errorf("request for an unparseable line = %+v, want the parse error and nothing to grant", last)
	}
}

func TestCheckerUnattended(t *testing.T) {
	c := newChecker(t, Options{Rules: []Rule{
		{Permission: Bash, Pattern: "ls *", Action: Allow},
		{Permission: Bash, Pattern: "rm *", Action: Deny},
	}})
	if err := c.Check(t.Context(), bash("ls")); err != nil {
		t.Errorf("allowed command: %v", err)
	}
	err := c.Check(t.Context(), bash("make"))
	var denied *DeniedError
	if !errors.As(err, &denied) || !denied.Unattended {
		t.Fatalf("Check = %v, want an unattended denial", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "non-interactive") || !strings.Contains(msg, `"make"`) {
		t.Errorf("message = %q, want it to say why and what", msg)
	}

	trusting := newChecker(t, Options{Fallback: Allow, Rules: []Rule{
		{Permission: Bash, Pattern: "rm *", Action: Deny},
	}})
	if err := trusting.Check(t.Context(), bash("make")); err != nil {
		t.Errorf("Fallback allow: %v", err)
	}
	if err := trusting.Check(t.Context(), bash("make && rm x")); !errors.Is(err, ErrDenied) {
		t.Errorf("Fallback allow with a deny rule = %v, want denied", err)
	}
}

func TestCheckerExternalDirectory(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	other := filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(root, "src"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(other, "a.txt"))
	writeFile(t, filepath.Join(other, "b.txt"))
	symlink(t, other, filepath.Join(root, "link"))
	realOther, err := filepath.EvalSymlinks(other)
	if err != nil {
		t.Fatal(err)
	}

	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}}}
	c := newChecker(t, Options{Root: root, Asker: asker, Rules: Defaults()})

	// Inside the workspace: read is allowed, nothing asked.
	for _, p := range []string{"src/x.go", filepath.Join(root, "src", "x.go"), "src/../src/x.go"} {
		if err := c.Check(t.Context(), Call{Permission: Read, Subjects: []string{p}}); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
	// Through a symlink that leads out: external_directory is asked.
	if err := c.Check(t.Context(), Call{Permission: Read, Subjects: []string{"link/a.txt"}}); err != nil {
		t.Fatalf("read link/a.txt: %v", err)
	}
	reqs := asker.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v, want one", reqs)
	}
	wantSubject := filepath.ToSlash(filepath.Join(realOther, "a.txt"))
	wantGrant := escapePattern(filepath.ToSlash(realOther)) + "/**"
	if r := reqs[0]; r.Permission != ExternalDirectory || !slices.Equal(r.Patterns, []string{wantSubject}) ||
		!slices.Equal(r.Suggest, []string{wantGrant}) {
		t.Errorf("request = %+v, want external_directory %s granting %s", r, wantSubject, wantGrant)
	}
	// The grant covers the directory: its sibling reads without asking.
	if err := c.Check(t.Context(), Call{Permission: Read, Subjects: []string{filepath.Join(other, "b.txt")}}); err != nil {
		t.Errorf("read sibling: %v", err)
	}
	if n := len(asker.requests()); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
}

func TestCheckerBashRedirectOutside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowOnce}, {Answer: AllowOnce}}}
	c := newChecker(t, Options{Root: root, Asker: asker, Rules: []Rule{
		{Permission: Bash, Pattern: "cat *", Action: Allow},
		{Permission: Edit, Pattern: "*", Action: Allow},
	}})
	// Inside: cat is allowed and so are edits.
	if err := c.Check(t.Context(), bash("cat a > b")); err != nil {
		t.Fatalf("cat a > b: %v", err)
	}
	// Outside: the edit rule allows, but the directory must be asked.
	if err := c.Check(t.Context(), bash("cat a > ../escape.txt")); err != nil {
		t.Fatalf("cat a > ../escape.txt: %v", err)
	}
	reqs := asker.requests()
	if len(reqs) != 1 || reqs[0].Permission != ExternalDirectory {
		t.Fatalf("requests = %+v, want one external_directory ask", reqs)
	}
	// A redirection relative to the call's directory.
	if err := c.Check(t.Context(), Call{Permission: Bash, Subjects: []string{"cat a > ../../x"}, Dir: "sub"}); err != nil {
		t.Fatalf("from sub: %v", err)
	}
	if reqs := asker.requests(); len(reqs) != 2 || reqs[1].Permission != ExternalDirectory {
		t.Errorf("requests = %+v, want a second external_directory ask", reqs)
	}
}

func TestCheckerEditSubjectIsRelativeToRoot(t *testing.T) {
	root := t.TempDir()
	c := newChecker(t, Options{Root: root, Rules: []Rule{
		{Permission: Edit, Pattern: "docs/**", Action: Allow},
	}})
	for _, p := range []string{"docs/a.md", filepath.Join(root, "docs", "deep", "b.md"), "src/../docs/c.md"} {
		if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{p}}); err != nil {
			t.Errorf("edit %s: %v", p, err)
		}
	}
	if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{"src/a.go"}}); !errors.Is(err, ErrDenied) {
		t.Errorf("edit src/a.go = %v, want it asked (and rejected unattended)", err)
	}
	// A symlink inside docs that leads elsewhere in the workspace is judged
	// by where it leads.
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(root, ".git", "hooks"), filepath.Join(root, "docs-hooks"))
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(root, ".git", "hooks"), filepath.Join(root, "docs", "hooks"))
	if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{"docs/hooks/pre-commit"}}); !errors.Is(err, ErrDenied) {
		t.Errorf("edit through docs/hooks = %v, want it asked: it writes .git/hooks", err)
	}
}

func TestCheckerMCPAndOtherPermissions(t *testing.T) {
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}, {Answer: RejectOnce}}}
	c := newChecker(t, Options{Asker: asker, Rules: Defaults()})
	call := Call{Permission: MCP, Subjects: []string{"github_create_issue"}, Title: "Create an issue",
		Metadata: map[string]any{"toolCallId": "t1"}}
	if err := c.Check(t.Context(), call); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := c.Check(t.Context(), call); err != nil {
		t.Fatalf("Check after always: %v", err)
	}
	if n := len(asker.requests()); n != 1 {
		t.Fatalf("asked %d times, want 1", n)
	}
	if r := asker.requests()[0]; r.Title != "Create an issue" || r.Metadata["toolCallId"] != "t1" ||
		!slices.Equal(r.Suggest, []string{"github_create_issue"}) {
		t.Errorf("request = %+v, want the call's title, metadata and the tool as the grant", r)
	}
	// The grant is for that tool only.
	if err := c.Check(t.Context(), Call{Permission: MCP, Subjects: []string{"github_delete_repo"}}); !errors.Is(err, ErrDenied) {
		t.Errorf("another MCP tool = %v, want it asked and rejected", err)
	}
	if n := len(asker.requests()); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}
}

func TestCheckerAskerFailures(t *testing.T) {
	t.Run("unknown answer", func(t *testing.T) {
		c := newChecker(t, Options{Asker: &scriptedAsker{t: t, replies: []Reply{{Answer: "maybe"}}}})
		err := c.Check(t.Context(), bash("make"))
		if err == nil || errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), `"maybe"`) {
			t.Errorf("Check = %v, want an error naming the bad answer", err)
		}
	})
	t.Run("cancelled while asking", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		c := newChecker(t, Options{Asker: AskerFunc(func(ctx context.Context, _ Request) (Reply, error) {
			cancel()
			<-ctx.Done()
			return Reply{}, ctx.Err()
		})})
		err := c.Check(ctx, bash("make"))
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrDenied) {
			t.Errorf("Check = %v, want the cancellation, not a denial", err)
		}
	})
}

// AskerFunc adapts a function to Asker in tests.
type AskerFunc func(context.Context, Request) (Reply, error)

func (f AskerFunc) Ask(ctx context.Context, r Request) (Reply, error) { return f(ctx, r) }

// TestCheckerConcurrentAsksAreSerialized starts a second call while the
// first waits for its answer; the "always" answer to the first covers the
// second, which must not ask.
func TestCheckerConcurrentAsksAreSerialized(t *testing.T) {
	root := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan Reply)
		var asks int
		var mu sync.Mutex
		c := newChecker(t, Options{Root: root, Asker: AskerFunc(func(ctx context.Context, _ Request) (Reply, error) {
			mu.Lock()
			asks++
			mu.Unlock()
			select {
			case r := <-answer:
				return r, nil
			case <-ctx.Done():
				return Reply{}, ctx.Err()
			}
		})})

		errs := make(chan error, 3)
		go func() { errs <- c.Check(t.Context(), bash("make build")) }()
		synctest.Wait() // the first call is asking
		go func() { errs <- c.Check(t.Context(), bash("make build --verbose")) }()
		ctx, cancel := context.WithCancel(t.Context())
		go func() { errs <- c.Check(ctx, bash("make other")) }()
		synctest.Wait() // the others wait for their turn

		cancel() // a waiting call can be cancelled
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiting call = %v, want context.Canceled", err)
		}
		answer <- Reply{Answer: AllowAlways}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("Check: %v", err)
			}
		}
		if asks != 1 {
			t.Errorf("asked %d times, want 1", asks)
		}
	})
}

func TestCheckerGrantStoreFailures(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	root := t.TempDir()

	store := &memGrants{loadErr: errors.New("disk on fire")}
	c := newChecker(t, Options{Root: root, Grants: store, Logger: log,
		Asker: &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}}}})
	if store.loads != 0 {
		t.Errorf("New loaded the grants %d times; they load at the first decision", store.loads)
	}

	store.addErr = errors.New("read-only store")
	if err := c.Check(t.Context(), bash("make")); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("logs = %q, want the load failure", logs.String())
	}
	if !strings.Contains(logs.String(), "read-only store") {
		t.Errorf("logs = %q, want the store failure", logs.String())
	}
	// The grant still holds for this session.
	if err := c.Check(t.Context(), bash("make")); err != nil {
		t.Errorf("Check after a grant the store refused: %v", err)
	}

	// Invalid stored grants are skipped, valid ones kept.
	logs.Reset()
	store = &memGrants{byRoot: map[string][]Rule{}}
	abs, _ := filepath.Abs(root)
	store.byRoot[abs] = []Rule{
		{Permission: Bash, Pattern: "", Action: Allow},
		{Permission: Bash, Pattern: "make *", Action: Allow},
	}
	c = newChecker(t, Options{Root: root, Grants: store, Logger: log})
	if err := c.Check(t.Context(), bash("make")); err != nil {
		t.Errorf("Check with a valid stored grant: %v", err)
	}
	if !strings.Contains(logs.String(), "pattern is empty") {
		t.Errorf("logs = %q, want the skipped grant", logs.String())
	}
}

func TestCheckerBadInput(t *testing.T) {
	c := newChecker(t, Options{})
	for _, tt := range []struct {
		call Call
		want string
	}{
		{Call{Subjects: []string{"x"}}, "names no permission"},
		{Call{Permission: Bash}, "has no subject"},
		{Call{Permission: Bash, Subjects: []string{"ls", ""}}, "subject 2"},
	} {
		err := c.Check(t.Context(), tt.call)
		if err == nil || errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%+v) = %v, want an error about %q", tt.call, err, tt.want)
		}
	}

	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{}, "Root is empty"},
		{Options{Root: filepath.Join(t.TempDir(), "missing")}, "must exist"},
		{Options{Root: t.TempDir(), Rules: []Rule{{Permission: Bash, Pattern: "x", Action: "sometimes"}}}, "rule 1"},
		{Options{Root: t.TempDir(), Fallback: Ask}, "Fallback"},
	} {
		if _, err := New(t.Context(), tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error about %q", tt.opts, err, tt.want)
		}
	}
}
