package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// The tests in this file run darman lsp, the real binary, under real
// editors. They are skipped, saying how to install the editor, when it is
// not there.

var (
	buildOnce sync.Once
	darmanBin string
	buildErr  error
)

// darman builds the darman binary once for the package's tests.
func darman(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "darman-editors-")
		if err != nil {
			buildErr = err
			return
		}
		darmanBin = filepath.Join(dir, "darman")
		out, err := exec.Command("go", "build", "-o", darmanBin, "../../cmd/darman").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ../cmd/darman: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return darmanBin
}

// editorWorkspace is a Go module that does not build until darman fixes
// it, with darman configured to use the scripted model: read main.go, fix
// it with an edit, run go build, answer. The edit and go build need the
// user's permission (darman's default rules).
type editorWorkspace struct {
	root, home string
	model      *llmtest.Server
	env        []string
}

const brokenMain = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(undefinedGreeting)\n}\n"

func newEditorWorkspace(t *testing.T) *editorWorkspace {
	t.Helper()
	home := t.TempDir()
	root := filepath.Join(home, "hello")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte(brokenMain), 0o644)
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	model := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: args(map[string]string{"path": "main.go"})}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "edit", Arguments: args(map[string]string{"path": "main.go", "oldString": "undefinedGreeting", "newString": `"hello from darman"`})}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: args(map[string]string{"command": "go build ./..."})}}},
		{Text: "main.go builds now."},
	}})
	config := fmt.Sprintf(`{"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
		"retry": {"maxAttempts": 1}}`, model.URL)
	os.WriteFile(filepath.Join(root, "darman.json"), []byte(config), 0o644)
	// The workspace is the test's own: its user trusts it, so its
	// darman.json may name the provider.
	real, _ := filepath.EvalSymlinks(root)
	os.MkdirAll(filepath.Join(home, ".config", "darman"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "darman", "trust.json"),
		[]byte(`{"folders": [{"path": "`+real+`", "answer": "trusted", "at": "2026-12-01T00:00:00Z"}]}`), 0o644)
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"GOCACHE=" + strings.TrimSpace(string(gocache)),
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
	}
	return &editorWorkspace{root: root, home: home, model: model, env: env}
}

// goBuildSawTheEdit reports whether the agent's go build, run after the
// edit, succeeded: it only can if the edit was on disk.
func (w *editorWorkspace) goBuildSawTheEdit(t *testing.T) {
	t.Helper()
	calls := w.model.ModelCalls()
	if len(calls) < 4 {
		t.Fatalf("the model was called %d times, want 4 (read, edit, go build, answer)", len(calls))
	}
	body := string(calls[3].Body)
	if !strings.Contains(body, "Exit code 0.") {
		i := strings.LastIndex(body, "tool_result")
		t.Errorf("go build did not succeed after the edit:\n%s", body[max(i-100, 0):min(i+600, len(body))])
	}
}

func results(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the editor wrote no results: %v", err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		out[k] = append(out[k], v)
	}
	return out
}

// TestNeovim runs a prompt that edits a file from a headless Neovim 0.7.2,
// then the same from the "fix this problem" code action,
// on both edit paths: plain vim.lsp.start_client (Neovim takes
// workspace/applyEdit: the edit lands in the buffer unsaved, and the person
// saves it before allowing go build) and the shipped helper
// (editors/nvim/darman.lua: applyEditAndSave, session updates, permissions
// with vim.ui.select). Either way the buffer shows the change, u undoes it,
// :w writes with no "file has changed" prompt, and the agent's go build
// saw the edit.
func TestNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("Neovim is not installed (apt-get install -y neovim): skipping the Neovim tests")
	}
	bin := darman(t)
	script, _ := filepath.Abs("testdata/nvim/edit.lua")
	helper, _ := filepath.Abs("../../editors/nvim")
	for _, mode := range []string{"plain", "helper", "codeaction"} {
		t.Run(mode, func(t *testing.T) {
			w := newEditorWorkspace(t)
			out := filepath.Join(w.home, "results")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
			cmd.Dir = w.root
			cmd.Env = append(w.env, "DARMAN_BIN="+bin, "WORKSPACE="+w.root, "MODE="+mode, "OUT="+out, "HELPER_DIR="+helper)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("nvim: %v\n%s", err, stderr.String())
			}
			r := results(t, out)
			t.Logf("Neovim saw: %v", r)
			if len(r["error"]) > 0 || len(r["prompt_error"]) > 0 {
				t.Fatalf("the script failed: %v\n%s", r, stderr.String())
			}
			want := map[string]string{"buffer_changed": "true", "modified": "false", "undo_restores": "true", "write_ok": "true", "stopped": "true"}
			if mode == "helper" {
				want["state"] = "idle"
			} else {
				want["progress_end"] = "done"
			}
			for k, v := range want {
				if got := r[k]; len(got) != 1 || got[0] != v {
					t.Errorf("%s = %v, want %s", k, got, v)
				}
			}
			if len(r["asked"]) != 2 {
				t.Errorf("the user was asked %d times (%v), want 2: the edit and go build", len(r["asked"]), r["asked"])
			}
			w.goBuildSawTheEdit(t)
			if mode != "codeaction" {
				return
			}
			// The action's prompt held the diagnostic; Neovim 0.7.2 shows
			// no documents, so it was told where the transcript is.
			if first := string(w.model.ModelCalls()[0].Body); !strings.Contains(first, "undefined: undefinedGreeting") || !strings.Contains(first, "UndeclaredName") {
				t.Errorf("the fix prompt lacks the diagnostic:\n%s", first)
			}
			if len(r["transcript"]) != 1 {
				t.Fatalf("transcript paths logged: %v, want one", r["transcript"])
			}
			b, err := os.ReadFile(r["transcript"][0])
			if err != nil || !strings.Contains(string(b), "main.go builds now.") {
				t.Errorf("transcript %q: %v", b, err)
			}
		})
	}
}

// TestEmacs runs the same prompt from Emacs 28 with eglot 1.9 in batch
// mode, plain (the edit lands in the buffer through workspace/applyEdit,
// and the person saves it before allowing go build) and with the shipped
// snippet (editors/emacs/darman.el, applyEditAndSave): eglot connects, lists the code actions of a
// selection, runs darman.prompt with eglot-execute-command, answers the
// permissions through completing-read, and the edit lands.
func TestEmacs(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("Emacs is not installed (apt-get install -y emacs-nox elpa-eglot): skipping the eglot tests")
	}
	bin := darman(t)
	script, _ := filepath.Abs("testdata/emacs/edit.el")
	helper, _ := filepath.Abs("../../editors/emacs")
	for _, mode := range []string{"plain", "snippet"} {
		t.Run(mode, func(t *testing.T) {
			w := newEditorWorkspace(t)
			out := filepath.Join(w.home, "results")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// Not emacs -Q: Debian's startup file is what loads eglot.
			cmd := exec.CommandContext(ctx, emacs, "--batch", "-l", script)
			cmd.Dir = w.root
			cmd.Env = append(w.env, "DARMAN_BIN="+bin, "WORKSPACE="+w.root, "MODE="+mode, "OUT="+out, "HELPER_DIR="+helper)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("emacs: %v\n%s", err, stderr.String())
			}
			r := results(t, out)
			t.Logf("Emacs saw: %v", r)
			if len(r["error"]) > 0 {
				t.Fatalf("the script failed: %v\n%s", r, stderr.String())
			}
			want := map[string]string{"connected": "true", "state": "idle", "buffer_changed": "true", "modified": "false", "stopped": "true"}
			for k, v := range want {
				if got := r[k]; len(got) != 1 || got[0] != v {
					t.Errorf("%s = %v, want %s", k, got, v)
				}
			}
			if a := r["actions"]; len(a) != 1 || !strings.Contains(a[0], "darman: explain") {
				t.Errorf("code actions %v, want the selection's", a)
			}
			if len(r["asked"]) != 2 {
				t.Errorf("the user was asked %v, want the edit and go build", r["asked"])
			}
			if got, _ := os.ReadFile(filepath.Join(w.root, "main.go")); !strings.Contains(string(got), "hello from darman") {
				t.Errorf("the edit did not land on disk: %s", got)
			}
			w.goBuildSawTheEdit(t)
		})
	}
}
