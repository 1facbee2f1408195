package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// handler answers what the server sends. It runs on the connection's read
// goroutine, one message at a time, so publishes are seen in the order the
// server sent them; every branch is quick and never waits on the server.
type handler struct{ c *Client }

func (h handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		h.notification(req.Method, params)
		return
	}
	result, rpcErr := h.request(req.Method, params)
	if rpcErr != nil {
		conn.ReplyWithError(ctx, req.ID, rpcErr)
		return
	}
	conn.Reply(ctx, req.ID, result)
}

// request answers the server→client requests darman declared support for,
// and the ones servers send regardless.
func (h handler) request(method string, params json.RawMessage) (any, *jsonrpc2.Error) {
	c := h.c
	switch method {
	case "workspace/configuration":
		var p protocol.ConfigurationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(err)
		}
		out := make([]json.RawMessage, len(p.Items))
		for i, item := range p.Items {
			section := ""
			if item.Section != nil {
				section = *item.Section
			}
			out[i] = settingsSection(c.opts.Settings, section)
		}
		return out, nil
	case "workspace/workspaceFolders":
		root := URIFromPath(c.opts.Root)
		return []protocol.WorkspaceFolder{{URI: string(root), Name: lastElem(c.opts.Root)}}, nil
	case "client/registerCapability":
		var p protocol.RegistrationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c.mu.Lock()
		for _, r := range p.Registrations {
			c.registered[r.ID] = r.Method
		}
		c.broadcastLocked() // a wait for a publish may now pull instead
		c.mu.Unlock()
		return nil, nil
	case "client/unregisterCapability":
		var p protocol.UnregistrationParams // "unregisterations", as the specification spells it
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c.mu.Lock()
		for _, r := range p.Unregisterations {
			delete(c.registered, r.ID)
		}
		c.mu.Unlock()
		return nil, nil
	case "window/workDoneProgress/create":
		return nil, nil
	case "window/showMessageRequest":
		var p protocol.ShowMessageRequestParams
		json.Unmarshal(params, &p)
		c.log.Info("language server asked a question; darman takes no action", "message", p.Message)
		return nil, nil
	case "workspace/diagnostic/refresh":
		// Pulled results may be out of date: forget them, so the next
		// Diagnostics pulls again.
		c.mu.Lock()
		for _, d := range c.docs {
			d.resultID = ""
		}
		for _, p := range c.published {
			if p.pulled {
				p.seq = 0
			}
		}
		c.broadcastLocked()
		c.mu.Unlock()
		return nil, nil
	case "workspace/applyEdit":
		// Not declared: darman never lets a language server edit files.
		reason := "darman does not apply edits from language servers"
		return protocol.ApplyWorkspaceEditResponse{Applied: false, FailureReason: &reason}, nil
	}
	if strings.HasSuffix(method, "/refresh") {
		// semanticTokens, inlayHint, codeLens, inlineValue: nothing to
		// refresh, and servers send them even when not declared.
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "darman does not handle " + method}
}

func (h handler) notification(method string, params json.RawMessage) {
	c := h.c
	switch method {
	case "textDocument/publishDiagnostics":
		var p PublishDiagnosticsParams
		if err := json.Unmarshal(params, &p); err != nil {
			c.log.Warn("language server sent diagnostics darman cannot read", "err", err)
			return
		}
		canonicalRelated(p.Diagnostics)
		c.recordPublish(p)
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		token := string(bytes.TrimSpace(p.Token))
		c.mu.Lock()
		switch p.Value.Kind {
		case "begin":
			c.progress[token] = time.Now()
		case "end":
			delete(c.progress, token)
		}
		c.broadcastLocked()
		c.mu.Unlock()
		if c.opts.OnNotice != nil {
			c.opts.OnNotice(Notice{Method: method, Message: p.Value.Message, Token: token, Kind: p.Value.Kind, Title: p.Value.Title})
		}
	case "window/logMessage", "window/showMessage":
		var p protocol.LogMessageParams // window/showMessage's params have the same shape
		if json.Unmarshal(params, &p) != nil {
			return
		}
		level := slogLevel(p.Type)
		if method == "window/logMessage" {
			level = slog.LevelDebug // a server's own log is detail to darman
		}
		c.log.Log(context.Background(), level, "language server: "+p.Message)
		if c.opts.OnNotice != nil {
			c.opts.OnNotice(Notice{Method: method, Type: p.Type, Message: p.Message})
		}
	}
}

func (c *Client) recordPublish(p PublishDiagnosticsParams) {
	if len(p.Diagnostics) > c.opts.MaxItems {
		c.log.Warn("language server published more diagnostics than darman keeps", "uri", p.URI, "count", len(p.Diagnostics), "kept", c.opts.MaxItems)
		p.Diagnostics = p.Diagnostics[:c.opts.MaxItems]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, known := c.published[p.URI]
	if !known && len(c.published) >= c.opts.MaxDocuments {
		if _, open := c.docs[p.URI]; !open {
			return
		}
	}
	d := c.docs[p.URI]
	if prev := c.published[p.URI]; d != nil && prev != nil && prev.version != nil && *prev.version <= d.version {
		// A set known to be for a version of the open document (pulled,
		// or published tagged) is not replaced by one for an older
		// version, nor, while it is for the current version, by one
		// without a version: typescript-language-server's own pass,
		// begun before the last change, publishes so after darman pulled
		// the new version.
		older := p.Version != nil && *p.Version < *prev.version
		untagged := p.Version == nil && *prev.version == d.version
		if older || untagged {
			return
		}
	}
	c.seq++
	items := p.Diagnostics
	if items == nil {
		items = []Diagnostic{}
	}
	c.published[p.URI] = &published{version: p.Version, items: items, seq: c.seq, at: time.Now()}
	if d != nil && (p.Version == nil || *p.Version >= d.version) {
		d.rounds++
	}
	c.broadcastLocked()
}

func slogLevel(t MessageType) slog.Level {
	switch t {
	case MessageError:
		return slog.LevelError
	case MessageWarning:
		return slog.LevelWarn
	case MessageInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// settingsSection walks a dotted section path into the settings object;
// an empty section is the whole object. Missing parts answer null.
func settingsSection(settings json.RawMessage, section string) json.RawMessage {
	null := json.RawMessage("null")
	if len(settings) == 0 {
		return null
	}
	cur := settings
	if section == "" {
		return cur
	}
	for _, part := range strings.Split(section, ".") {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return null
		}
		next, ok := obj[part]
		if !ok {
			return null
		}
		cur = next
	}
	return cur
}

func invalidParams(err error) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
}

func lastElem(path string) string {
	path = strings.TrimRight(path, `/\`)
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
