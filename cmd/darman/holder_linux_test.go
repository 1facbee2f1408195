//go:build linux

package main_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestRunKeepsProtectedPathsFromAScript: through darman run, with every
// bash command allowed, a script the permission layer cannot read (it is
// decoded, then run) tries to write .git/hooks, .git/config and
// darman.json in a git workspace. The kernel refuses, whoever darman runs
// as (an unprivileged darman starts it in the workspace's namespace
// holder); a write elsewhere in the workspace works, and how commands end
// (an exit code, SIGKILL, timeout's 124) reaches the model.
func TestRunKeepsProtectedPathsFromAScript(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	e := newEnv(t)
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	if out, err := exec.Command("git", "init", "-q", e.workspace).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	config, _ := os.ReadFile(filepath.Join(e.workspace, ".git", "config"))
	script := base64.StdEncoding.EncodeToString([]byte(strings.Join([]string{
		"echo evil > .git/hooks/x && echo WROTE-HOOK",
		"echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config && echo WROTE-CONFIG",
		`echo '{"hooks":1}' > darman.json && echo WROTE-DARMAN-JSON`,
		"echo ok > inside.txt && echo WROTE-INSIDE",
		"exit 3",
	}, "\n")))
	commands := []string{
		"echo " + script + " | base64 -d > s.sh && bash s.sh",
		"kill -9 $$",
		"timeout 0.2 sleep 5",
	}
	var steps []llmtest.Step
	for _, c := range commands {
		steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", mustJSON(t, map[string]string{"command": c}))}})
	}
	steps = append(steps, llmtest.Step{Text: "done"})
	srv := e.withModel(t, llmtest.Script{Steps: steps}) // writes darman.json
	darmanJSON, err := os.ReadFile(filepath.Join(e.workspace, "darman.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.run("run", "--allow", "bash:*", "--allow", "edit", "try things")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != len(steps) {
		t.Fatalf("%d model calls, want %d", len(calls), len(steps))
	}
	first := lastToolResult(t, calls[1].Body)
	for _, bad := range []string{"WROTE-HOOK", "WROTE-CONFIG", "WROTE-DARMAN-JSON"} {
		if strings.Contains(first, bad) {
			t.Errorf("%s:\n%s", bad, first)
		}
	}
	if !strings.Contains(first, "WROTE-INSIDE") || !strings.Contains(first, "Exit code 3.") {
		t.Errorf("the script's result:\n%s", first)
	}
	if body := lastToolResult(t, calls[2].Body); !strings.Contains(body, "killed by signal") {
		t.Errorf("kill -9 $$:\n%s", body)
	}
	if body := lastToolResult(t, calls[3].Body); !strings.Contains(body, "Exit code 124.") {
		t.Errorf("timeout:\n%s", body)
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, ".git", "config")); string(b) != string(config) {
		t.Errorf(".git/config changed:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, ".git", "hooks", "x")); err == nil {
		t.Error("a hook was written")
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "darman.json")); string(b) != string(darmanJSON) {
		t.Errorf("darman.json = %q", b)
	}
}
