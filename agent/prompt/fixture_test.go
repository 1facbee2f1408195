package prompt_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/testenv"
)

// fixture is a temporary machine: a home directory with darman's user
// config directory under XDG_CONFIG_HOME, and a repository holding the
// workspace.
type fixture struct {
	t    testing.TB
	home string // HOME
	repo string // holds .git
	root string // the workspace root, repo itself unless moved below
	env  map[string]string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	tmp := t.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	f := &fixture{
		t:    t,
		home: filepath.Join(tmp, "home"),
		repo: filepath.Join(tmp, "repo"),
	}
	f.root = f.repo
	f.env = map[string]string{"HOME": f.home, "XDG_CONFIG_HOME": filepath.Join(f.home, ".config")}
	for _, d := range []string{f.home, filepath.Join(f.repo, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) lookupEnv(name string) (string, bool) {
	v, ok := f.env[name]
	return v, ok
}

// userDir is darman's per-user config directory in the fixture.
func (f *fixture) userDir() string { return filepath.Join(f.home, ".config", "darman") }

// write creates a file (and its directories) at an absolute path, or one
// relative to the workspace root.
func (f *fixture) write(path, content string) string {
	f.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.root, path)
	}
	return testenv.WriteFile(f.t, path, content)
}

func (f *fixture) dirs() prompt.Dirs {
	return prompt.LocateDirs(f.root, f.lookupEnv)
}

// options returns Build options for the fixture with a fixed date and a
// clean repository on main.
func (f *fixture) options() prompt.Options {
	return prompt.Options{
		Root:      f.root,
		Tools:     defaultTools,
		Model:     "anthropic/claude-sonnet-4-5",
		Now:       time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC),
		LookupEnv: f.lookupEnv,
		Git:       fixedGit("main", "", nil),
	}
}

func (f *fixture) build(opts prompt.Options) prompt.Prompt {
	f.t.Helper()
	p, err := prompt.Build(context.Background(), opts)
	if err != nil {
		f.t.Fatalf("Build: %v", err)
	}
	return p
}

// defaultTools is the tool set of darman's default agent.
var defaultTools = []string{"read", "write", "edit", "glob", "grep", "list", "bash", "todo", "task", "skill"}

func fixedGit(branch, status string, err error) func(context.Context) (string, string, error) {
	return func(context.Context) (string, string, error) { return branch, status, err }
}

// logBuffer returns a logger writing text records into the returned buffer.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func partKinds(p prompt.Prompt) []string {
	var out []string
	for _, part := range p.Parts {
		out = append(out, string(part.Kind))
	}
	return out
}

func problemsText(ps []prompt.Problem) string {
	var lines []string
	for _, p := range ps {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}
