package lsp_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

func TestInitializeResult(t *testing.T) {
	e := start(t, options{noInitialize: true})
	c := e.client
	var res struct {
		Capabilities struct {
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
			} `json:"textDocumentSync"`
			CodeActionProvider struct {
				CodeActionKinds []string `json:"codeActionKinds"`
				ResolveProvider bool     `json:"resolveProvider"`
			} `json:"codeActionProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			Experimental struct {
				Darman struct {
					ProtocolVersion int `json:"protocolVersion"`
				} `json:"darman"`
			} `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	// Before initialize, requests are refused with ServerNotInitialized.
	var jerr *jsonrpc2.Error
	if err := c.command("darman.status", nil, nil); !errors.As(err, &jerr) || jerr.Code != -32002 {
		t.Errorf("a command before initialize: %v, want code -32002", err)
	}
	c.MustCall("initialize", map[string]any{"rootUri": "file://" + e.root, "capabilities": map[string]any{}}, &res)
	caps := res.Capabilities
	if !caps.TextDocumentSync.OpenClose || caps.TextDocumentSync.Change != 2 {
		t.Errorf("textDocumentSync %+v, want open/close and incremental changes", caps.TextDocumentSync)
	}
	for _, kind := range []string{"quickfix", "refactor.rewrite", "source"} {
		if !slices.Contains(caps.CodeActionProvider.CodeActionKinds, kind) {
			t.Errorf("code action kinds %v lack %s", caps.CodeActionProvider.CodeActionKinds, kind)
		}
	}
	want := []string{"darman.cancel", "darman.command.list", "darman.command.run", "darman.model.list", "darman.permission.answer", "darman.prompt",
		"darman.session.delete", "darman.session.fork", "darman.session.image", "darman.session.list", "darman.session.load", "darman.session.new", "darman.session.rename",
		"darman.status", "darman.transcript.open", "darman.trust", "darman.turn.apply", "darman.turn.redo", "darman.turn.revert"}
	if !slices.Equal(caps.ExecuteCommandProvider.Commands, want) {
		t.Errorf("commands %v, want %v", caps.ExecuteCommandProvider.Commands, want)
	}
	if caps.Experimental.Darman.ProtocolVersion != 1 || res.ServerInfo.Name != "darman" || res.ServerInfo.Version != "test" {
		t.Errorf("experimental %+v, serverInfo %+v", caps.Experimental, res.ServerInfo)
	}
	c.Notify("initialized", map[string]any{})

	var status struct {
		Root  string `json:"root"`
		Agent struct {
			State string `json:"state"`
			Model string `json:"model"`
		} `json:"agent"`
	}
	deadline := time.Now().Add(wait)
	for status.Agent.State != "ready" && time.Now().Before(deadline) {
		c.mustCommand("darman.status", nil, &status)
	}
	if status.Root != e.root || status.Agent.Model != testModel {
		t.Errorf("status %+v, want root %s and model %s", status, e.root, testModel)
	}
	if code := e.shutdown(); code != 0 {
		t.Errorf("exit status after shutdown and exit: %d, want 0", code)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	e := start(t, options{})
	e.client.Notify("exit", nil)
	select {
	case code := <-e.exit:
		e.exit <- code
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return after exit")
	}
}

// The editor going away (stdin closed) without shutdown or exit stops the
// running turn cleanly: it is recorded as cancelled.
func TestEndOfInputStopsTurns(t *testing.T) {
	e := start(t, options{
		script: stall(),
		optIns: map[string]bool{"sessionUpdates": true},
	})
	tr := e.prompt("think for a long time")
	e.client.Await(0, "the turn running", isState("running"))
	e.conn.Close()
	select {
	case code := <-e.exit:
		e.exit <- code
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return at the end of input")
	}
	msgs, err := e.store.Messages(t.Context(), agentID(tr.SessionID))
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1].Message
	if last.Finish != "cancelled" {
		t.Errorf("the turn was stored as %q, want cancelled", last.Finish)
	}
}

func TestWorkspaceFolders(t *testing.T) {
	e := start(t, options{})
	other := t.TempDir()
	e.client.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []map[string]string{{"uri": "file://" + other, "name": "other"}}, "removed": []any{}}})
	var status struct {
		Folders []string `json:"folders"`
	}
	e.client.mustCommand("darman.status", nil, &status)
	if !slices.Equal(status.Folders, []string{e.root, other}) {
		t.Errorf("folders %v, want %v", status.Folders, []string{e.root, other})
	}
	var raw json.RawMessage
	e.client.mustCommand("darman.status", nil, &raw)
}
