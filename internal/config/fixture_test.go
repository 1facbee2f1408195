package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/testenv"
)

// fixture is a workspace (a git repository root) in a temporary directory,
// a user config directory and a fake environment.
type fixture struct {
	t    testing.TB
	root string // the workspace root; holds .git
	user string // the user config directory
	home string
	env  map[string]string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, root: t.TempDir(), user: t.TempDir(), home: t.TempDir()}
	f.env = map[string]string{"HOME": f.home, "XDG_DATA_HOME": filepath.Join(f.home, "data")}
	if err := os.Mkdir(filepath.Join(f.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// write creates a file under the workspace root (or at an absolute path).
func (f *fixture) write(path, content string) string {
	f.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.root, path)
	}
	return testenv.WriteFile(f.t, path, content)
}

func (f *fixture) writeUser(content string) string {
	f.t.Helper()
	return f.write(filepath.Join(f.user, "config.json"), content)
}

func (f *fixture) lookup(name string) (string, bool) {
	v, ok := f.env[name]
	return v, ok
}

// options load the fixture's workspace as a trusted one; trust_test.go
// loads it untrusted.
func (f *fixture) options(flags config.Flags) config.Options {
	return config.Options{WorkspaceRoot: f.root, LookupEnv: f.lookup, UserConfigDir: f.user, Flags: flags, Trust: trustAll}
}

func trustAll(config.Workspace) bool { return true }

func (f *fixture) load() (*config.Loaded, error) {
	return config.Load(f.options(config.Flags{}))
}

func (f *fixture) mustLoad() *config.Loaded {
	f.t.Helper()
	l, err := f.load()
	if err != nil {
		f.t.Fatalf("Load: %v", err)
	}
	return l
}
