// Package completion is the LSP front's inline completions: the engine
// (agent/complete) over the editor's open buffers, answering LSP 3.18's
// textDocument/inlineCompletion and, for editors without it,
// textDocument/completion with the suggestion as one item.
package completion

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/rpc"
)

// Completion is the server's inline completion state, started by
// initialize (Start or Refuse). Until then, and when refused, it answers
// every request with no suggestion.
type Completion struct {
	docs *buffer.Set
	log  *slog.Logger
	// warn tells the user (window/logMessage) that the model failed.
	warn func(msg string)

	engine *complete.Engine // nil: completions are off
	items  bool
	err    error // why the configuration was refused, shown once initialized

	mu       sync.Mutex
	reported string // the last model error told to the user
}

// New is the completion state over the open buffers docs, off until
// Start; warn tells the user a model error.
func New(docs *buffer.Set, log *slog.Logger, warn func(msg string)) *Completion {
	return &Completion{docs: docs, log: log, warn: warn}
}

// Start builds the engine with o (for the workspace root), over the open
// buffers; items also offers the suggestion as a completion item. An
// engine that cannot be built refuses the completions (Err).
func (c *Completion) Start(o complete.Options, items bool, root string) {
	o.Root = root
	o.Buffers = c.buffers
	o.Logger = c.log
	e, err := complete.New(o)
	if err != nil {
		c.err = err
		return
	}
	c.engine, c.items = e, items
}

// Refuse turns the completions off for err (a configuration that cannot
// work), said by Err and Status.
func (c *Completion) Refuse(err error) { c.err = err }

// Err is why the completions are off, nil when they are on or not asked
// for.
func (c *Completion) Err() error { return c.err }

// On says whether the engine runs; Items whether its suggestions are also
// completion items.
func (c *Completion) On() bool    { return c.engine != nil }
func (c *Completion) Items() bool { return c.engine != nil && c.items }

// SetDefiner gives the engine the agent's language servers, for the
// definitions in its context.
func (c *Completion) SetDefiner(d complete.Definer) {
	if c.engine != nil && d != nil {
		c.engine.SetDefiner(d)
	}
}

// buffers are the open buffers, for the engine's snippets.
func (c *Completion) buffers() []complete.Buffer {
	known := c.docs.Known()
	out := make([]complete.Buffer, 0, len(known))
	for _, d := range known {
		out = append(out, complete.Buffer{URI: d.URI, Path: d.Path, Language: d.LanguageID, Version: d.Version, Text: d.Content.String()})
	}
	return out
}

// Changed and Closed tell the engine about the document: a change
// cancels its request in flight.
func (c *Completion) Changed(uri string) {
	if e := c.engine; e != nil {
		e.Changed(uri)
	}
}

func (c *Completion) Closed(uri string) {
	e := c.engine
	if e == nil {
		return
	}
	var last complete.Buffer
	if d := c.docs.Get(uri); d != nil && d.Lost == nil {
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

// Inline answers textDocument/inlineCompletion: at most one item,
// the model's suggestion at the cursor. No suggestion (completions off,
// an excluded file, a request superseded by a newer one) is an empty list;
// a model that fails is logged and told to the user once, and answers an
// empty list too, so that typing never brings up error popups.
func (c *Completion) Inline(ctx context.Context, raw json.RawMessage) (any, error) {
	var p inlineCompletionParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	var sel *complete.Selected
	if si := p.Context.SelectedCompletionInfo; si != nil {
		sel = &complete.Selected{Text: si.Text}
		sel.Start, sel.End = -1, -1
		if doc := c.docs.Get(p.TextDocument.URI); doc != nil && doc.Lost == nil {
			if a, b, err := doc.Content.Offsets(si.Range); err == nil {
				sel.Start, sel.End = a, b
			}
		}
	}
	began := time.Now()
	r, doc, err := c.completeAt(ctx, p.TextDocument.URI, p.Position, p.Context.TriggerKind == 1, sel)
	c.log.Debug("lsp: inline completion", "uri", p.TextDocument.URI, "line", p.Position.Line, "character", p.Position.Character,
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
func (c *Completion) completeAt(ctx context.Context, uri string, pos protocol.Position, invoked bool, sel *complete.Selected) (complete.Result, *buffer.Doc, error) {
	e := c.engine
	if e == nil {
		return complete.Result{}, nil, nil
	}
	doc := c.docs.Get(uri)
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
		c.failed(err)
		return complete.Result{}, nil, nil
	}
	return r, doc, nil
}

// failed logs a model error and tells the user when it is not the one
// told last.
func (c *Completion) failed(err error) {
	c.log.Warn("lsp: inline completion failed", "err", err)
	msg := err.Error()
	c.mu.Lock()
	same := c.reported == msg
	c.reported = msg
	c.mu.Unlock()
	if !same {
		c.warn("darman: inline completion failed: " + msg)
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

// Item answers textDocument/completion (completion.items on)
// with the suggestion as one item, for editors without inline
// completions: it replaces the word before the cursor with that word and
// the suggestion, so the editor's filtering by the typed word keeps it;
// its sortText puts it after the language server's items of equal rank,
// and the list is incomplete, so the editor asks again as the user types.
func (c *Completion) Item(ctx context.Context, raw json.RawMessage) (any, error) {
	var p completionItemParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	empty := protocol.CompletionList{IsIncomplete: true, Items: []protocol.CompletionItem{}}
	if !c.items {
		return empty, nil
	}
	invoked := p.Context == nil || p.Context.TriggerKind == 1
	r, doc, err := c.completeAt(ctx, p.TextDocument.URI, p.Position, invoked, nil)
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

// Status is darman.status's "completion": the model and the workspace's
// completion usage, apart from the agent's sessions; nil when completions
// are off.
func (c *Completion) Status() any {
	if c.err != nil {
		return map[string]any{"enabled": false, "error": c.err.Error()}
	}
	e := c.engine
	if e == nil {
		return nil
	}
	return map[string]any{"enabled": true, "items": c.items, "usage": e.Stats()}
}

func ptr[T any](v T) *T { return &v }
