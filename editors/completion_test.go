package editors

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// The tests in this file run the real darman lsp, configured with a
// completion model (the scripted model server: the one fake), under real
// editors, through the helpers as a user installs them.

var (
	buildOnce sync.Once
	darmanBin string
	buildErr  error
)

// darman builds the darman binary once for the package's tests
// (DARMAN_TEST_BIN: a directory that already holds it).
func darman(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if dir := os.Getenv("DARMAN_TEST_BIN"); dir != "" {
			darmanBin = filepath.Join(dir, "darman")
			return
		}
		dir, err := os.MkdirTemp("", "darman-editors-")
		if err == nil {
			darmanBin, err = testenv.Build("github.com/darman-dev/darman/cmd/darman", dir)
		}
		buildErr = err
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return darmanBin
}

// suggestion is what the scripted completion model answers.
const suggestion = "Println(greeting)"

// completionMain has non-ASCII before the cursor on line 7 (UTF-16
// columns differ from bytes there) and after it on line 6.
const completionMain = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tgreeting := \"héllo\"\n\t_ = \"é\"; fmt.\n}\n"

// otherMain is where the model suggests several lines (its requests hold
// otherMarker), at the end of line 5, an indented empty line.
const (
	otherMarker = "several lines here"
	otherMain   = "package main\n\nfunc other() {\n\t// " + otherMarker + "\n\t\n}\n"
	multiline   = "a := 1\n\tb := a + 1\n\t_ = b"
)

type completionWorkspace struct {
	root, home string
	model      *llmtest.Server
	env        []string
}

// newCompletionWorkspace writes a Go module whose darman.json sets a
// completion model on the chat path (a chat model filling the hole, which
// darman asks over the Anthropic Messages API) and, with items, the
// completion-item path for editors without inline completions. With
// stall, the model's first call stalls until darman gives up on it.
func newCompletionWorkspace(t *testing.T, items, stall bool) *completionWorkspace {
	t.Helper()
	home := t.TempDir()
	root := filepath.Join(home, "hello")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte(completionMain), 0o644)
	os.WriteFile(filepath.Join(root, "other.go"), []byte(otherMain), 0o644)
	// The first call stalls until darman gives up on it, writing "stalled"
	// when it arrives and "gone" when darman closed its connection, for
	// the editor's script to wait on; the others answer the suggestion.
	var n atomic.Int32
	model := llmtest.Start(t, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if strings.Contains(string(c.Body), otherMarker) {
			return llmtest.Step{Text: multiline}
		}
		if !stall || n.Add(1) > 1 {
			return llmtest.Step{Text: suggestion}
		}
		os.WriteFile(filepath.Join(home, "stalled"), nil, 0o644)
		// The stalled answer ends when darman closes the connection (the
		// server closes ClientGone, then Done) or when the server stops
		// (Done alone). Not a select on both: on a loaded machine this
		// goroutine may first run after both are closed, and a select
		// then picks either, missing darman's close half the time.
		go func() {
			<-c.Done()
			select {
			case <-c.ClientGone():
				os.WriteFile(filepath.Join(home, "gone"), nil, 0o644)
			default:
			}
		}()
		return llmtest.Step{Text: suggestion, Faults: []llmtest.Fault{{Kind: llmtest.FaultStall}}}
	}})
	config := fmt.Sprintf(`{"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
		"retry": {"maxAttempts": 1},
		"completion": {"model": "anthropic/claude-haiku-4-5", "items": %t}}`, model.URL, items)
	os.WriteFile(filepath.Join(root, "darman.json"), []byte(config), 0o644)
	// The workspace is the test's own: its user trusts it.
	real, _ := filepath.EvalSymlinks(root)
	os.MkdirAll(filepath.Join(home, ".config", "darman"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "darman", "trust.json"), []byte(trustRecord(real)), 0o644)
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		// darman's log, shown when the test fails.
		"DARMAN_LOG_LEVEL=debug",
		"DARMAN_LOG_FILE=" + filepath.Join(home, "darman.log"),
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "darman.log"))
			t.Logf("darman's log:\n%s", b)
		}
	})
	return &completionWorkspace{root: root, home: home, model: model, env: env}
}

// run runs an editor with the workspace's environment and returns the
// key=value lines its script wrote to $OUT.
func (w *completionWorkspace) run(t *testing.T, editor string, args ...string) map[string][]string {
	t.Helper()
	helper, _ := filepath.Abs(".")
	out := filepath.Join(w.home, "results")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, editor, args...)
	cmd.Dir = w.root
	cmd.Env = append(w.env, "DARMAN_BIN="+darman(t), "WORKSPACE="+w.root, "OUT="+out,
		"MARKER_DIR="+w.home, "HELPER_DIR="+filepath.Join(helper, "nvim"), "EMACS_HELPER_DIR="+filepath.Join(helper, "emacs"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(editor), err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the editor wrote no results: %v\n%s", err, stderr.String())
	}
	r := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		r[k] = append(r[k], v)
	}
	if len(r["error"]) > 0 {
		t.Fatalf("the script failed: %v\n%s", r, stderr.String())
	}
	return r
}

func expect(t *testing.T, r map[string][]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// TestNeovimInlineCompletion: in a headless Neovim 0.7.2 with the helper
// (darman.start{completion = true}), a request the model stalls on is
// cancelled by moving the cursor, and darman closes the model's
// connection; then entering insert mode at the end of a line shows darman's suggestion as an extmark at the cursor, typing its
// first letters keeps the rest on screen, <Tab> inserts it and puts the
// cursor after it; in the middle of a line the suggestion covers the rest
// of the line and <C-]> dismisses it without changing the text. The model
// saw the code before the cursor.
func TestNeovimInlineCompletion(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("Neovim is not installed (apt-get install -y neovim): skipping the inline completion test")
	}
	script, _ := filepath.Abs("testdata/nvim/complete.lua")
	w := newCompletionWorkspace(t, false, true)
	r := w.run(t, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	t.Logf("Neovim saw: %v", r)
	line7 := "\t_ = \"é\"; fmt."
	expect(t, r, map[string]string{
		"provider":                "true",
		"model_connection_closed": "true",
		"stall_ghost":             "none",
		// row 6, byte column 15 (UTF-16 column 14): the end of line 7.
		"ghost":         fmt.Sprintf("6:%d:%s", len(line7), suggestion),
		"mode":          "i",
		"typed_through": fmt.Sprintf("6:%d:%s", len(line7)+3, strings.TrimPrefix(suggestion, "Pri")),
		"accepted":      line7 + suggestion,
		"after_accept":  "none",
		"cursor":        fmt.Sprintf("7,%d", len(line7+suggestion)),
		// After `greeting :=`, over ` "héllo"` (padded to cover it).
		"mid_ghost": "5:12:" + suggestion + " \"héllo\"",
		"dismissed": "\tgreeting := \"héllo\"",
		// row 4, column 1, then two virtual lines.
		"multi_ghost":    "4:1:a := 1|\tb := a + 1|\t_ = b",
		"multi_accepted": "\ta := 1|\tb := a + 1|\t_ = b",
		"multi_cursor":   "7,6",
		"modified":       "true",
		"stopped":        "true",
	})
	calls := w.model.ModelCalls()
	if len(calls) == 0 {
		t.Fatal("the completion model was never asked")
	}
	if body := string(calls[0].Body); !strings.Contains(body, "greeting := ") || !strings.Contains(body, "claude-haiku-4-5") {
		t.Errorf("the first completion request lacks the code before the cursor or the completion model:\n%s", body)
	}
}

// TestEmacsCompletionItem: with completion.items, Emacs 28 with eglot 1.9
// (batch mode) and the helper (darman.el) lists darman's suggestion as a
// completion item at the end of a line, and completion-at-point inserts it.
func TestEmacsCompletionItem(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("Emacs is not installed (apt-get install -y emacs-nox elpa-eglot): skipping the completion item test")
	}
	script, _ := filepath.Abs("testdata/emacs/complete.el")
	w := newCompletionWorkspace(t, true, false)
	// Not emacs -Q: Debian's startup file is what loads eglot.
	r := w.run(t, emacs, "--batch", "-l", script)
	t.Logf("Emacs saw: %v", r)
	expect(t, r, map[string]string{
		"connected": "true",
		"provider":  "true",
		"items":     suggestion,
		"line":      "\t_ = \"é\"; fmt." + suggestion,
		"stopped":   "true",
	})
}

// trustRecord is the user's trust record for folder, as darman trust
// writes it.
func trustRecord(folder string) string {
	return `{"folders": [{"path": "` + folder + `", "answer": "trusted", "at": "2026-12-01T00:00:00Z"}]}`
}
