package lsp

import (
	"encoding/json"
	"strings"
)

// initializeParams is the part of initialize darman reads, and nothing
// else: encoding/json skips the rest. glsp's InitializeParams is not used:
// its client capabilities are anonymous structs and its progress token
// never decodes (see docs/protocol.md).
type initializeParams struct {
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
	RootPath         *string `json:"rootPath"`
	RootURI          *string `json:"rootUri"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	InitializationOptions json.RawMessage    `json:"initializationOptions"`
	Capabilities          clientCapabilities `json:"capabilities"`
}

// clientCapabilities are the capabilities darman acts on.
type clientCapabilities struct {
	Workspace struct {
		// ApplyEdit: the client applies workspace/applyEdit to its
		// buffers (not saving them).
		ApplyEdit     bool `json:"applyEdit"`
		WorkspaceEdit struct {
			DocumentChanges    bool     `json:"documentChanges"`
			ResourceOperations []string `json:"resourceOperations"`
		} `json:"workspaceEdit"`
		Configuration bool `json:"configuration"`
	} `json:"workspace"`
	Window struct {
		WorkDoneProgress bool `json:"workDoneProgress"`
		ShowDocument     *struct {
			Support bool `json:"support"`
		} `json:"showDocument"`
	} `json:"window"`
	// Experimental is read apart (see optIns): a client's own experimental
	// capabilities may have any shape.
	Experimental json.RawMessage `json:"experimental"`
}

// optIns are a client's answers to darman's custom messages, from
// capabilities.experimental.darman; each defaults to false.
type optIns struct {
	SessionUpdates    bool `json:"sessionUpdates"`
	RequestPermission bool `json:"requestPermission"`
	ApplyEditAndSave  bool `json:"applyEditAndSave"`
	OpenDiff          bool `json:"openDiff"`
	// Elicitation: answer darman/elicit (MCP servers' forms and URLs)
	// with the editor's own prompts.
	Elicitation bool `json:"elicitation"`
}

// client is what the server knows of its client after initialize. It does
// not change afterwards.
type client struct {
	name, version string
	caps          clientCapabilities
	opt           optIns
}

// nudged reports whether the client gets a log line every second while
// darman waits for its answer (Server.call): Emacs's jsonrpc needs that
// input to let an answer through. VS Code and its forks, whose
// clientInfo names them, do not, and would show the line in their
// output channel once a second.
func (c client) nudged() bool {
	for _, name := range []string{"Visual Studio Code", "code-server", "VSCodium", "Cursor", "Windsurf"} {
		if strings.HasPrefix(c.name, name) {
			return false
		}
	}
	return true
}

// progress reports whether the client shows work-done progress.
func (c client) progress() bool { return c.caps.Window.WorkDoneProgress }

// showDocument reports whether the client said it can show documents;
// clients that do not say are still asked (and may answer MethodNotFound).
func (c client) showDocument() bool {
	return c.caps.Window.ShowDocument == nil || c.caps.Window.ShowDocument.Support
}
