package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestRunPromptHasTheRepositoryState: darman run gathers git's facts
// while the rest of it starts (beside the store's open and the sandbox's
// probe); the first request still states the branch and the changed
// files as git status gives them at the start.
func TestRunPromptHasTheRepositoryState(t *testing.T) {
	e := newEnv(t)
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	e.write("calc.go", "package calc\n")
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.workspace
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "trunk")
	git("add", "calc.go")
	git("commit", "-qm", "start")
	e.write("calc.go", "package calc\n\nvar X = 1\n")
	e.write("notes.txt", "new\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Seen."}}})
	out, errs, code := e.run("run", "--format", "json", "what changed?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) == 0 {
		t.Fatal("no model request")
	}
	system := calls[0].Get("system").String()
	for _, want := range []string{"Git: branch trunk", " M calc.go", "?? notes.txt"} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
}
