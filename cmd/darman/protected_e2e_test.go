package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestRunKeepsGitPointersAndOtherToolsFiles: issue 31's finding 4. The
// model, with edit and every command allowed, points .git/commondir at a
// git directory whose core.fsmonitor leaves a marker (through the write
// tool and through a redirection), and writes the files other agents,
// editors and hook managers run. Each is refused without a terminal to
// ask, none is written, and neither darman's own git status nor the
// user's next one runs the fsmonitor.
func TestRunKeepsGitPointersAndOtherToolsFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	evil := func(t *testing.T, dir string) {
		t.Helper()
		for _, args := range [][]string{{"init", "-q", "--bare", dir}, {"-C", dir, "config", "core.bare", "false"},
			{"-C", dir, "config", "core.fsmonitor", "touch " + marker + "; false"}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
	}
	// The attack works on this git: a repository whose commondir names
	// such a directory runs its fsmonitor on git status.
	control := t.TempDir()
	exec.Command("git", "init", "-q", control).Run()
	evil(t, filepath.Join(control, "evil"))
	os.WriteFile(filepath.Join(control, ".git", "commondir"), []byte("../evil\n"), 0o644)
	exec.Command("git", "-C", control, "status").Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git status did not run the fsmonitor of the commondir's git directory (%v): the test proves nothing here", err)
	}
	os.Remove(marker)

	e := newEnv(t)
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	if out, err := exec.Command("git", "init", "-q", e.workspace).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	evil(t, filepath.Join(e.workspace, "evil"))
	writes := []string{".git/commondir", ".git/objects/info/alternates", ".git/info/attributes", ".husky/pre-commit",
		".pre-commit-config.yaml", ".devcontainer/devcontainer.json", ".cursor/mcp.json", ".zed/settings.json",
		".gemini/settings.json", "opencode.json", ".claude/skills/deploy/SKILL.md"}
	var calls []llmtest.ToolCall
	for i, p := range writes {
		args, _ := json.Marshal(map[string]string{"path": p, "content": "../evil\n"})
		calls = append(calls, llmtest.ToolCall{ID: "w" + string(rune('a'+i)), Name: "write", Arguments: args})
	}
	calls = append(calls,
		llmtest.ToolCall{ID: "echo", Name: "bash", Arguments: json.RawMessage(`{"command":"echo ../evil > .git/commondir"}`)},
		llmtest.ToolCall{ID: "printf", Name: "bash", Arguments: json.RawMessage(`{"command":"printf 'evil\\n' | tee .git/commondir"}`)},
		llmtest.ToolCall{ID: "cp", Name: "bash", Arguments: json.RawMessage(`{"command":"echo evil > c && cp c .git/commondir"}`)},
		llmtest.ToolCall{ID: "status", Name: "bash", Arguments: json.RawMessage(`{"command":"git status"}`)},
	)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{ToolCalls: calls}, {Text: "done"}}})
	out, errs, code := e.run("run", "--allow", "edit", "--allow", "bash:*", "set things up")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	results := toolResults(t, srv)
	for _, p := range writes {
		if _, err := os.Lstat(filepath.Join(e.workspace, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	for id, res := range results {
		if id != "status" && !strings.Contains(res, "protected_path") {
			t.Errorf("%s: the refusal did not name protected_path:\n%s", id, res)
		}
	}
	if _, err := os.Stat(filepath.Join(e.workspace, ".git", "commondir")); err == nil {
		t.Errorf(".git/commondir was written")
	}
	if out, err := exec.Command("git", "-C", e.workspace, "status").CombinedOutput(); err != nil {
		t.Errorf("git status after the run: %v: %s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the attacker's fsmonitor ran")
	}
}
