package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// trustingLSP starts darman lsp in e's workspace with a client that
// answers the trust question with *choice (and dismisses every other
// question); asked counts the trust questions.
func trustingLSP(t *testing.T, e *env, choice *atomic.Value, asked *atomic.Int32) (*lspClient, func() string) {
	cmd := exec.Command(darmanBin, "lsp")
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	c, _, stderr := runLSPAnswering(t, cmd, func(method string, params json.RawMessage) (any, error) {
		if method == "window/showMessageRequest" && strings.Contains(string(params), "configures what only a folder you trust may") {
			asked.Add(1)
			if title, _ := choice.Load().(string); title != "" {
				return map[string]string{"title": title}, nil
			}
		}
		return nil, nil
	})
	return c, stderr.String
}

func (c *lspClient) promptAndWait(t *testing.T, text string) {
	t.Helper()
	var tr struct{ SessionID, TurnID string }
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": text}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v", err)
	}
	c.await("the end of the turn", func(n lspNote) bool { return isIdle(n) && strings.Contains(string(n.Params), tr.SessionID) })
}

func shown(c *lspClient, part string) bool {
	for _, n := range c.Since(0) {
		if n.Method == "window/showMessage" && strings.Contains(string(n.Params), part) {
			return true
		}
	}
	return false
}

// A plain LSP client (Neovim, Helix, Emacs, Zed) gets one
// window/showMessageRequest with the folder's summary. "Not now" leaves
// the folder untrusted: its allow rules and hooks do not apply, and the
// one-line notice says so. darman.trust then trusts it: the agent starts
// again, the hook runs and the allow rule applies, and the record is kept
// as darman trust keeps it.
func TestLSPAsksTrustOnceAndDarmanTrustApplies(t *testing.T) {
	e := newEnv(t)
	e.distrust()
	e.userProvider(llmtest.Start(t, bashSteps(t, "echo by-rule > rule.txt")))
	e.write("darman.json", `{"permission": {"bash": "allow", "edit": "allow"},
		"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}}`)
	var choice atomic.Value
	choice.Store("Not now")
	var asked atomic.Int32
	c, stderr := trustingLSP(t, e, &choice, &asked)
	c.initialize(e.workspace, nil)
	c.await("the not-trusted notice", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "not trusted") && strings.Contains(string(n.Params), "darman.trust")
	})
	if n := asked.Load(); n != 1 {
		t.Fatalf("asked %d times, want once\n%s", n, stderr())
	}
	c.promptAndWait(t, "write rule.txt")
	if exists(filepath.Join(e.workspace, "rule.txt")) || exists(filepath.Join(e.workspace, "hook-ran")) {
		t.Fatal("the untrusted folder's allow rule or hook applied")
	}
	// darman.status shows the folder's trust and what is ignored.
	trustStatus := func() (trusted bool, ignored string) {
		var st struct {
			Agent struct {
				Trust struct {
					Trusted bool     `json:"trusted"`
					Ignored []string `json:"ignored"`
				} `json:"trust"`
			} `json:"agent"`
		}
		if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st); err != nil {
			t.Fatalf("darman.status: %v", err)
		}
		return st.Agent.Trust.Trusted, strings.Join(st.Agent.Trust.Ignored, "\n")
	}
	if trusted, ignored := trustStatus(); trusted || !strings.Contains(ignored, "hooks.SessionStart") || !strings.Contains(ignored, "permission.bash") {
		t.Errorf("darman.status of the untrusted folder: trusted %v, ignored %q", trusted, ignored)
	}

	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.trust"}, nil); err != nil {
		t.Fatalf("darman.trust: %v", err)
	}
	c.await("the trusted message", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "this folder is trusted")
	})
	c.promptAndWait(t, "write rule.txt")
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "rule.txt")); string(b) != "by-rule\n" {
		t.Errorf("trusted: the allow rule did not apply: %q\n%s", b, stderr())
	}
	if !exists(filepath.Join(e.workspace, "hook-ran")) {
		t.Error("trusted: the hook did not run")
	}
	if b, _ := os.ReadFile(e.trustFile()); !strings.Contains(string(b), `"answer": "trusted"`) {
		t.Errorf("no trust record: %s", b)
	}
	if trusted, ignored := trustStatus(); !trusted || ignored != "" {
		t.Errorf("darman.status once trusted: trusted %v, ignored %q", trusted, ignored)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("asked %d times in all, want once", n)
	}
}

// The VS Code extension sends vscode.workspace.isTrusted: false keeps the
// folder untrusted whatever darman's records say, with no question of
// darman's; the editor's later grant (darman.trust {"editor": true})
// trusts it without a record of darman's.
func TestLSPEditorTrustSignalWins(t *testing.T) {
	e := newEnv(t) // the records trust the folder
	e.userProvider(llmtest.Start(t, bashSteps(t, "echo by-rule > rule.txt")))
	e.write("darman.json", `{"permission": {"bash": "allow", "edit": "allow"}}`)
	records, _ := os.ReadFile(e.trustFile())
	var choice atomic.Value
	var asked atomic.Int32
	c, stderr := trustingLSP(t, e, &choice, &asked)
	c.initialize(e.workspace, map[string]any{"workspaceTrusted": false})
	c.await("the restricted-mode notice", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "the editor does not trust this folder")
	})
	c.promptAndWait(t, "write rule.txt")
	if exists(filepath.Join(e.workspace, "rule.txt")) {
		t.Fatal("the allow rule applied in the editor's restricted mode")
	}
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.trust", "arguments": []any{map[string]any{"editor": true}}}, nil); err != nil {
		t.Fatalf("darman.trust: %v", err)
	}
	c.await("the trusted message", func(n lspNote) bool {
		return n.Method == "window/showMessage" && strings.Contains(string(n.Params), "this folder is trusted")
	})
	c.promptAndWait(t, "write rule.txt")
	if !exists(filepath.Join(e.workspace, "rule.txt")) {
		t.Errorf("after the editor's grant the allow rule did not apply\n%s", stderr())
	}
	if asked.Load() != 0 {
		t.Error("darman asked although the editor decides")
	}
	if after, _ := os.ReadFile(e.trustFile()); string(after) != string(records) {
		t.Errorf("the editor's grant changed darman's records:\n%s", after)
	}
}
