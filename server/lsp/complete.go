package lsp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/rpc"
)

// CompletionConfig is the inline completion setup Options.Completion
// finds in a workspace's configuration.
type CompletionConfig struct {
	// Options are the engine's; the server fills in Buffers.
	Options complete.Options
	// Items also offers the suggestion as a textDocument/completion item,
	// for editors without inline completions.
	Items bool
}

// completion is the server's inline completion state, set by initialize.
type completion struct {
	engine *complete.Engine // nil: completions are off
	items  bool
	err    error // why the configuration was refused, shown once initialized

	mu       sync.Mutex
	reported string // the last model error told to the user
}

// setupCompletion builds the completion engine from the workspace's
// configuration, while initialize is answered: Options.Completion must not
// wait for the network.
func (s *Server) setupCompletion(ctx context.Context, setup Setup) {
	if s.opts.Completion == nil {
		return
	}
	cfg, err := s.opts.Completion(ctx, setup)
	if err != nil {
		s.complete.err = err
		s.log.Warn("lsp: inline completions are off", "err", err)
		return
	}
	if cfg == nil {
		return
	}
	o := cfg.Options
	o.Root = s.root
	o.Buffers = s.completionBuffers
	o.Logger = s.log
	e, err := complete.New(o)
	if err != nil {
		s.complete.err = err
		return
	}
	s.complete.engine, s.complete.items = e, cfg.Items
}

// completionBuffers are the open buffers, for the engine's snippets.
func (s *Server) completionBuffers() []complete.Buffer {
	known := s.docs.Known()
	out := make([]complete.Buffer, 0, len(known))
	for _, d := range known {
		out = append(out, complete.Buffer{URI: d.URI, Path: d.Path, Language: d.LanguageID, Version: d.Version, Text: d.Content.String()})
	}
	return out
}

// useAgentForCompletion gives the engine the agent's language servers.
func (s *Server) useAgentForCompletion(a *Agent) {
	if e := s.complete.engine; e != nil && a.Definitions != nil {
		e.SetDefiner(a.Definitions)
	}
}

// completionCapabilities adds inlineCompletionProvider (LSP 3.18) and, when
// the items are on, completionProvider to darman's capabilities. Without
// a completion engine the answer is initialize's as before.
func (s *Server) completionCapabilities(res initResult) initResult {
	if s.complete.engine == nil {
		return res
	}
	if s.complete.items {
		res.Capabilities.CompletionProvider = &completionOptions{ResolveProvider: false}
	}
	res.Capabilities.InlineCompletionProvider = true
	return res
}

// completionChanged and completionClosed tell the engine about the
// document: a change cancels its request in flight.
func (s *Server) completionChanged(uri string) {
	if e := s.complete.engine; e != nil {
		e.Changed(uri)
	}
}

func (s *Server) completionClosed(uri string) {
	e := s.complete.engine
	if e == nil {
		return
	}
	var last complete.Buffer
	if d := s.docs.Get(uri); d != nil && d.Lost == nil {
		last = complete.Buffer{URI: d.URI, Path: d.Path, Language: d.LanguageID, Version: d.Version, Text: d.Content.String()}
	}
	e.Closed(uri, last)
}

// inlineCompletionParams are LSP 3.18's InlineCompletionParams.
type inlineCompletionParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position               `json:"position"`
	Context      struct {
		// TriggerKind: 1 Invoked, 2 Automatic.
		TriggerKind            int `json:"triggerKind"`
		SelectedCompletionInfo *struct {
			Range protocol.Range `json:"range"`
			Text  string         `json:"text"`
		} `json:"selectedCompletionInfo"`
	} `json:"context"`
}

// inlineCompletionItem is LSP 3.18's InlineCompletionItem.
type inlineCompletionItem struct {
	InsertText string          `json:"insertText"`
	FilterText string          `json:"filterText,omitempty"`
	Range      *protocol.Range `json:"range,omitempty"`
}

type inlineCompletionList struct {
	Items []inlineCompletionItem `json:"items"`
}

// inlineCompletion answers textDocument/inlineCompletion: at most one item,
// the model's suggestion at the cursor. No suggestion (completions off,
// an excluded file, a request superseded by a newer one) is an empty list;
// a model that fails is logged and told to the user once, and answers an
// empty list too, so that typing never brings up error popups.
func (s *Server) inlineCompletion(ctx context.Context, raw json.RawMessage) (any, error) {
	var p inlineCompletionParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	var sel *complete.Selected
	if si := p.Context.SelectedCompletionInfo; si != nil {
		sel = &complete.Selected{Text: si.Text}
		sel.Start, sel.End = -1, -1
		if doc := s.docs.Get(p.TextDocument.URI); doc != nil && doc.Lost == nil {
			if a, b, err := doc.Content.Offsets(si.Range); err == nil {
				sel.Start, sel.End = a, b
			}
		}
	}
	began := time.Now()
	r, doc, err := s.completeAt(ctx, p.TextDocument.URI, p.Position, p.Context.TriggerKind == 1, sel)
	s.log.Debug("lsp: inline completion", "uri", p.TextDocument.URI, "line", p.Position.Line, "character", p.Position.Character,
		"invoked", p.Context.TriggerKind == 1, "source", r.Source, "reason", r.Reason, "chars", len(r.Text), "err", err, "took", time.Since(began))
	if err != nil || r.Text == "" {
		return inlineCompletionList{Items: []inlineCompletionItem{}}, err
	}
	rng, rerr := doc.Content.Range(r.Start, r.End)
	if rerr != nil {
		return nil, rerr
	}
	return inlineCompletionList{Items: []inlineCompletionItem{{InsertText: r.Text, Range: &rng}}}, nil
}

// completeAt runs the engine at a position of an open document.
func (s *Server) completeAt(ctx context.Context, uri string, pos protocol.Position, invoked bool, sel *complete.Selected) (complete.Result, *buffer.Doc, error) {
	e := s.complete.engine
	if e == nil {
		return complete.Result{}, nil, nil
	}
	doc := s.docs.Get(uri)
	if doc == nil {
		return complete.Result{}, nil, rpc.InvalidParams("%s is not open: completions need the buffer (send didOpen first)", uri)
	}
	if doc.Lost != nil {
		return complete.Result{}, nil, nil
	}
	off, err := doc.Content.Offset(pos)
	if err != nil {
		return complete.Result{}, nil, rpc.InvalidParams("position: %v", err)
	}
	if sel != nil && (sel.Start < 0 || sel.End < 0) {
		sel = nil
	}
	r, err := e.Complete(ctx, complete.Request{URI: uri, Path: doc.Path, Language: doc.LanguageID,
		Text: doc.Content.String(), Offset: off, Invoked: invoked, Selected: sel})
	if err != nil {
		if ctx.Err() != nil {
			return complete.Result{}, nil, err
		}
		s.completionFailed(err)
		return complete.Result{}, nil, nil
	}
	return r, doc, nil
}

// completionFailed logs a model error and tells the user when it is not
// the one told last.
func (s *Server) completionFailed(err error) {
	s.log.Warn("lsp: inline completion failed", "err", err)
	msg := err.Error()
	s.complete.mu.Lock()
	same := s.complete.reported == msg
	s.complete.reported = msg
	s.complete.mu.Unlock()
	if !same {
		s.logMessage(protocol.MessageTypeWarning, "darman: inline completion failed: "+msg)
	}
}

// completionItemParams are textDocument/completion's.
type completionItemParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position               `json:"position"`
	Context      *struct {
		TriggerKind int `json:"triggerKind"`
	} `json:"context"`
}

// completionItem answers textDocument/completion (completion.items on)
// with the suggestion as one item, for editors without inline
// completions: it replaces the word before the cursor with that word and
// the suggestion, so the editor's filtering by the typed word keeps it;
// its sortText puts it after the language server's items of equal rank,
// and the list is incomplete, so the editor asks again as the user types.
func (s *Server) completionItem(ctx context.Context, raw json.RawMessage) (any, error) {
	var p completionItemParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	empty := protocol.CompletionList{IsIncomplete: true, Items: []protocol.CompletionItem{}}
	if !s.complete.items {
		return empty, nil
	}
	invoked := p.Context == nil || p.Context.TriggerKind == 1
	r, doc, err := s.completeAt(ctx, p.TextDocument.URI, p.Position, invoked, nil)
	if err != nil || r.Text == "" {
		return empty, err
	}
	text := doc.Content.String()
	ws := r.Start
	for ws > 0 && isWordByte(text[ws-1]) {
		ws--
	}
	word := text[ws:r.Start]
	rng, err := doc.Content.Range(ws, r.End)
	if err != nil {
		return nil, err
	}
	label := firstLineOf(r.Text)
	if len(label) > 60 {
		label = label[:57] + "…"
	}
	kind := protocol.CompletionItemKindText
	format := protocol.InsertTextFormatPlainText
	item := protocol.CompletionItem{
		Label:            word + label,
		Kind:             &kind,
		Detail:           ptr("darman"),
		Documentation:    protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: "```\n" + word + r.Text + "\n```"},
		SortText:         ptr("~darman"),
		FilterText:       ptr(word + r.Text),
		InsertTextFormat: &format,
		TextEdit:         protocol.TextEdit{Range: rng, NewText: word + r.Text},
	}
	return protocol.CompletionList{IsIncomplete: true, Items: []protocol.CompletionItem{item}}, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// completionStatus is darman.status's "completion": the model and the
// workspace's completion usage, apart from the agent's sessions; nil when
// completions are off.
func (s *Server) completionStatus() any {
	if s.complete.err != nil {
		return map[string]any{"enabled": false, "error": s.complete.err.Error()}
	}
	e := s.complete.engine
	if e == nil {
		return nil
	}
	return map[string]any{"enabled": true, "items": s.complete.items, "usage": e.Stats()}
}
