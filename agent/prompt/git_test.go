package prompt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

// gitRepo makes a real repository in a fresh directory, isolated from the
// machine's git configuration.
func gitRepo(t *testing.T) (dir string, git func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir = t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	git = func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=trunk"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	return dir, git
}

func buildEnv(t *testing.T, root string) string {
	t.Helper()
	p, err := prompt.Build(context.Background(), prompt.Options{Root: root, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return p.Parts[len(p.Parts)-1].Text
}

func TestGitStatusRealRepository(t *testing.T) {
	dir, git := gitRepo(t)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// No commits yet: the branch is known, the files are untracked.
	write("a.go", "package a\n")
	if env := buildEnv(t, dir); !strings.Contains(env, "- Git: branch trunk, 1 changed path:\n  ?? a.go") {
		t.Errorf("fresh repository:\n%s", env)
	}

	git("add", "a.go")
	git("commit", "-q", "-m", "first")
	if env := buildEnv(t, dir); !strings.Contains(env, "- Git: branch trunk, clean") {
		t.Errorf("clean repository:\n%s", env)
	}

	write("a.go", "package a // changed\n")
	write("b.go", "package a\n")
	env := buildEnv(t, dir)
	if !strings.Contains(env, "- Git: branch trunk, 2 changed paths:\n   M a.go\n  ?? b.go") {
		t.Errorf("changed repository:\n%s", env)
	}

	// From a subdirectory the workspace is still in the repository.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if branch, _, err := prompt.GitStatus(context.Background(), sub); err != nil || branch != "trunk" {
		t.Errorf("GitStatus from a subdirectory = %q, %v; want trunk", branch, err)
	}

	git("checkout", "-q", "--detach")
	if branch, _, err := prompt.GitStatus(context.Background(), dir); err != nil || branch != "HEAD (detached)" {
		t.Errorf("GitStatus on a detached HEAD = %q, %v", branch, err)
	}
}

func TestGitStatusOutsideRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, _, err := prompt.GitStatus(context.Background(), dir)
	if !errors.Is(err, prompt.ErrNotRepository) {
		t.Fatalf("GitStatus outside a repository: %v; want ErrNotRepository", err)
	}
	if env := buildEnv(t, dir); !strings.Contains(env, "- Git: not a repository") {
		t.Errorf("environment outside a repository:\n%s", env)
	}
}

func TestGitStatusWithoutGit(t *testing.T) {
	dir, _ := gitRepo(t)
	t.Setenv("PATH", t.TempDir())
	if _, _, err := prompt.GitStatus(context.Background(), dir); err == nil || errors.Is(err, prompt.ErrNotRepository) {
		t.Errorf("GitStatus without git on PATH: %v; want an error other than ErrNotRepository", err)
	}
	env := buildEnv(t, dir)
	if strings.Contains(env, "Git:") || !strings.Contains(env, "- Workspace root: ") {
		t.Errorf("without git the facts should leave git out and keep the rest:\n%s", env)
	}
}
