package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestLSPShowsLanguageServers: a language server that dies at start while
// the agent edits its file is one warning in the editor, naming the server
// and why, and darman.status lists it as failed with how it ended.
func TestLSPShowsLanguageServers(t *testing.T) {
	e := newEnv(t)
	broken := e.write(filepath.Join(e.home, "bin", "broken-ls"), "#!/bin/sh\necho 'broken-ls: no toolchain configured' >&2\nexit 7\n")
	os.Chmod(broken, 0o755)
	e.write("notes.brk", "old\n")
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"notes.brk","oldString":"old","newString":"new"}`)}},
		{Text: "Edited."},
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"notes.brk","oldString":"new","newString":"newer"}`)}},
		{Text: "Edited again."},
	}})
	e.configure(`"permission": {"edit": "allow"}, "lsp": {"broken": {"command": ["` + broken + `"], "extensions": [".brk"]}}`)
	_, c, _, stderr := startLSP(t, e, "--stdio")
	c.initialize(e.workspace, nil)

	var tr struct{ SessionID, TurnID string }
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "edit the notes"}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
	}
	isFailure := func(n lspNote) bool {
		return n.Method == "window/showMessage" && n.Params != nil && strings.Contains(string(n.Params), "language server broken")
	}
	n := c.await("message about the broken language server", isFailure)
	var msg struct {
		Type    int    `json:"type"`
		Message string `json:"message"`
	}
	json.Unmarshal(n.Params, &msg)
	if msg.Type != 2 || !strings.HasPrefix(msg.Message, "language server broken failed to start, so .brk files get no diagnostics: ") ||
		!strings.Contains(msg.Message, "exited with status 7") || !strings.Contains(msg.Message, "broken-ls: no toolchain configured") {
		t.Errorf("message = %+v; want a warning naming the server, its files, its exit and its last words", msg)
	}
	c.await("the end of the turn", isIdle)

	var st struct {
		Agent struct {
			LanguageServers []struct {
				Name, State, Exit, Stderr string
				Extensions                []string
			} `json:"languageServers"`
		}
	}
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range st.Agent.LanguageServers {
		if s.Name != "broken" {
			continue
		}
		found = true
		if s.State != "failed" || s.Exit != "exited with status 7" || !strings.Contains(s.Stderr, "no toolchain configured") {
			t.Errorf("darman.status's broken server = %+v; want failed, with its exit and stderr", s)
		}
	}
	if !found {
		t.Errorf("darman.status lists no broken server: %+v", st.Agent.LanguageServers)
	}

	// A second turn edits the file again: the server is still failed, and
	// the editor is not told again.
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
		"arguments": []any{map[string]any{"prompt": "again", "sessionId": tr.SessionID}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v", err)
	}
	c.await("the end of the second turn", func(n lspNote) bool {
		return isIdle(n) && strings.Contains(string(n.Params), tr.TurnID)
	})
	var count int
	for _, n := range c.Since(0) {
		if isFailure(n) {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d messages about the broken server; want 1", count)
	}
}
