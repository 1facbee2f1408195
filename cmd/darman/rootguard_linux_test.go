//go:build linux

package main_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// rootGuardRun runs one `darman run` turn in a workspace that is not a
// repository (its darman.json moved to the user's config, so that no
// protected name is at the root), in which the scripted model runs each
// of commands with bash, then says "done"; args are darman run's.
func rootGuardRun(t *testing.T, e *env, commands []string, args ...string) (*llmtest.Server, string) {
	t.Helper()
	var steps []llmtest.Step
	for _, c := range commands {
		steps = append(steps, bashStep(t, map[string]any{"command": c}))
	}
	return rootGuardSteps(t, e, append(steps, llmtest.Step{Text: "done"}), nil, args...)
}

// bashStep is a step that calls bash once with input.
func bashStep(t *testing.T, input map[string]any) llmtest.Step {
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", mustJSON(t, input))}}
}

// rootGuardSteps is rootGuardRun with the model's steps given whole;
// settings (nil: none) are added to the user's configuration.
func rootGuardSteps(t *testing.T, e *env, steps []llmtest.Step, settings map[string]any, args ...string) (*llmtest.Server, string) {
	t.Helper()
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	srv := e.withModel(t, llmtest.Script{Steps: steps})
	cfg := filepath.Join(e.workspace, "darman.json")
	b, _ := os.ReadFile(cfg)
	os.Remove(cfg)
	if settings != nil {
		var user map[string]any
		if err := json.Unmarshal(b, &user); err != nil {
			t.Fatal(err)
		}
		for k, v := range settings {
			user[k] = v
		}
		b = []byte(mustJSON(t, user))
	}
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), string(b))
	out, errs, code := e.run(append([]string{"run"}, append(args, "set things up")...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if n := len(srv.ModelCalls()); n != len(steps) {
		t.Fatalf("%d model calls, want %d\nstderr: %s", n, len(steps), errs)
	}
	return srv, out
}

// TestRunQuarantinesProtectedNamesAScriptMakesAtTheRoot: with everything
// allowed by "*" (which does not answer protected_path: only a rule naming
// it does), and no one to ask, a sandboxed script makes, at
// the root of a workspace that is not a repository, protected names the
// sandbox cannot keep from being made there (the script is decoded, then
// run, so that no rule reads them). None is left in the workspace: each is in darman's quarantine,
// whole, and the model's next request says what was removed and why; a
// plain file the script made stays.
func TestRunQuarantinesProtectedNamesAScriptMakesAtTheRoot(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	made := map[string]string{ // name -> a file in it ("" the name is the file)
		".envrc":        "",
		".husky":        "pre-commit",
		".vscode":       "settings.json",
		".git":          "config",
		".mcp.json":     "",
		".devcontainer": "devcontainer.json",
		"opencode.json": "",
		"darman.json":   "",
	}
	var script []string
	for name, file := range made {
		if file == "" {
			script = append(script, "echo planted > "+name)
		} else {
			script = append(script, "mkdir "+name+" && echo planted > "+name+"/"+file)
		}
	}
	script = append(script, "echo kept > notes.txt", "echo SCRIPT-RAN")
	// Decoded, then run: the permission checks read no name of it.
	hidden := base64.StdEncoding.EncodeToString([]byte(strings.Join(script, "\n")))
	srv, _ := rootGuardRun(t, e, []string{"echo " + hidden + " | base64 -d > s.sh && bash s.sh"}, "--allow", "*")
	result := lastToolResult(t, srv.ModelCalls()[1].Body)
	if !strings.Contains(result, "SCRIPT-RAN") {
		t.Fatalf("the script did not run:\n%s", result)
	}
	boxes, _ := filepath.Glob(filepath.Join(e.dataDir(), "quarantine", "*"))
	for name, file := range made {
		if _, err := os.Lstat(filepath.Join(e.workspace, name)); err == nil {
			t.Errorf("%s is still in the workspace", name)
		}
		found := false
		for _, box := range boxes {
			b, err := os.ReadFile(filepath.Join(box, name, file))
			if err == nil && strings.TrimSpace(string(b)) == "planted" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not in the quarantine (%v)", name, boxes)
		}
		if !strings.Contains(result, "created "+name) {
			t.Errorf("the model is not told of %s:\n%s", name, result)
		}
	}
	if !strings.Contains(result, "protected_path") || !strings.Contains(result, "quarantine") {
		t.Errorf("the model is not told why or where:\n%s", result)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || strings.TrimSpace(string(b)) != "kept" {
		t.Errorf("notes.txt: %q, %v", b, err)
	}
}

// TestRunKeepsGitInitWhenProtectedPathIsAllowed: git init in a workspace
// that is not a repository makes .git/ at the root; allowed by a rule
// naming protected_path, it stays, a working repository, and the model
// hears that it was kept.
func TestRunKeepsGitInitWhenProtectedPathIsAllowed(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	e := newEnv(t)
	srv, _ := rootGuardRun(t, e, []string{"git init -q && echo INIT-DONE"}, "--allow", "bash:*", "--allow", "protected_path")
	result := lastToolResult(t, srv.ModelCalls()[1].Body)
	if !strings.Contains(result, "INIT-DONE") || !strings.Contains(result, "created .git/") || !strings.Contains(result, "allowed keeping it") {
		t.Errorf("the result:\n%s", result)
	}
	cmd := exec.Command("git", "rev-parse", "--git-dir")
	cmd.Dir = e.workspace
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != ".git" {
		t.Errorf("the workspace is not the repository git init made: %v: %s", err, out)
	}
	if boxes, _ := filepath.Glob(filepath.Join(e.dataDir(), "quarantine", "*")); len(boxes) != 0 {
		t.Errorf("something was quarantined: %v", boxes)
	}
}

// TestRunsGitStatusWithoutThePlantedConfigsPrograms: a repository whose
// .git/config names programs (core.fsmonitor, and the clean filter
// .gitattributes chooses for a changed file), as a command could have
// planted: darman's own git status at the next start (for the system
// prompt) runs neither, and still reads the status.
func TestRunsGitStatusWithoutThePlantedConfigsPrograms(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	e := newEnv(t)
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.workspace
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "trunk")
	e.write("a.txt", "one\n")
	e.write(".gitattributes", "a.txt filter=planted\n")
	git("add", "a.txt", ".gitattributes")
	git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one")
	fsmonitor := filepath.Join(e.home, "FSMONITOR-RAN")
	filter := filepath.Join(e.home, "FILTER-RAN")
	git("config", "core.fsmonitor", "touch "+fsmonitor+"; false")
	git("config", "filter.planted.clean", "touch "+filter+"; cat")
	e.write("a.txt", "two\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hello"}}})
	out, errs, code := e.run("run", "hi")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, marker := range []string{fsmonitor, filter} {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("darman's git status ran a planted program: %s exists", marker)
		}
	}
	calls := srv.ModelCalls()
	if len(calls) == 0 || !strings.Contains(string(calls[0].Body), "trunk") {
		t.Errorf("the system prompt lacks the branch")
	}
}

// hidden is a command line that decodes script and runs it: the
// permission checks read no name of it.
func hidden(script string) string {
	return "echo " + base64.StdEncoding.EncodeToString([]byte(script)) + " | base64 -d > s.sh && bash s.sh"
}

// envrcQuarantined checks that .envrc is gone from the workspace and
// kept whole in the quarantine.
func envrcQuarantined(t *testing.T, e *env) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(e.workspace, ".envrc")); err == nil {
		t.Errorf(".envrc is at the workspace root: %q", b)
	}
	kept, _ := filepath.Glob(filepath.Join(e.dataDir(), "quarantine", "*", ".envrc"))
	if len(kept) != 1 {
		t.Fatalf(".envrc in the quarantine: %v", kept)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || !strings.Contains(string(b), "MARKER") {
		t.Errorf("the quarantined .envrc: %q, %v", b, err)
	}
}

// envrcPayload is what the hostile scripts write into .envrc: what a
// direnv (or a shell's prompt hook) would run.
const envrcPayload = "echo 'touch MARKER' > .envrc"

// TestRunQuarantinesAProtectedNameABackgroundJobMakesLate: a background
// job makes .envrc after the call that started it returned, while the
// model thinks (no command runs then); the model's next call reads the
// job's output. .envrc ends in the quarantine, not at the root (moved
// when the job ended), and that call's result tells the model.
func TestRunQuarantinesAProtectedNameABackgroundJobMakesLate(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	read := llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash_output", `{"job_id":"job-1"}`)}, Delay: llmtest.Duration(time.Second)}
	srv, _ := rootGuardSteps(t, e, []llmtest.Step{
		bashStep(t, map[string]any{"command": hidden("sleep 1; " + envrcPayload + "; echo JOB-DONE"), "run_in_background": true}),
		read,
		{Text: "done"},
	}, nil, "--allow", "*")
	envrcQuarantined(t, e)
	result := lastToolResult(t, srv.ModelCalls()[2].Body)
	if !strings.Contains(result, "JOB-DONE") || !strings.Contains(result, "created .envrc") {
		t.Errorf("the job had not ended, or the model is not told:\n%s", result)
	}
}

// TestRunQuarantinesAProtectedNameAnEscapeeMakesAfterTheLastCall: a
// command starts a process that leaves its session (setsid), which makes
// .envrc while the model answers its last step, after every tool call's
// look. When darman ends, the sandbox kills what is left and the last
// look moves .envrc aside.
func TestRunQuarantinesAProtectedNameAnEscapeeMakesAfterTheLastCall(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	escape := "setsid sh -c \"sleep 1; " + envrcPayload + "\" </dev/null >/dev/null 2>&1 & echo STARTED"
	rootGuardSteps(t, e, []llmtest.Step{
		bashStep(t, map[string]any{"command": hidden(escape)}),
		{Text: "done", Chunks: 1, Delay: llmtest.Duration(3 * time.Second)},
	}, nil, "--allow", "*")
	envrcQuarantined(t, e)
}

// TestRunQuarantinesAProtectedNameAnUnsandboxedCommandMakes: with the
// sandbox off by the user's own configuration, a command that makes
// .envrc at the root is looked after as a sandboxed one is.
func TestRunQuarantinesAProtectedNameAnUnsandboxedCommandMakes(t *testing.T) {
	e := newEnv(t)
	srv, _ := rootGuardSteps(t, e, []llmtest.Step{
		bashStep(t, map[string]any{"command": hidden(envrcPayload + "; echo SCRIPT-RAN")}),
		{Text: "done"},
	}, map[string]any{"sandbox": map[string]any{"mode": "off"}}, "--allow", "*")
	result := lastToolResult(t, srv.ModelCalls()[1].Body)
	if !strings.Contains(result, "SCRIPT-RAN") || !strings.Contains(result, "created .envrc") {
		t.Errorf("the result:\n%s", result)
	}
	envrcQuarantined(t, e)
}
