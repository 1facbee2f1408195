package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// Sync sends text as the document's content: didOpen the first time,
// didChange with the next version (the whole text) after that. Text equal
// to what the server already has sends nothing. It returns the version the
// server now holds. A change wakes every Diagnostics call waiting on an
// older version of the document, which then returns marked Superseded.
func (c *Client) Sync(ctx context.Context, uri DocumentURI, languageID string, text []byte) (int32, error) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	d := c.docs[uri]
	if d != nil && bytes.Equal(d.text, text) {
		v := d.version
		c.mu.Unlock()
		return v, nil
	}
	first := d == nil
	if first {
		d = &document{languageID: languageID}
		c.docs[uri] = d
	}
	d.version++
	d.text = bytes.Clone(text)
	d.sentSeq = c.seq
	d.sentAt = time.Now()
	d.rounds = 0
	d.resultID = ""
	version := d.version
	c.broadcastLocked()
	c.mu.Unlock()

	if first {
		if !c.caps.OpenClose {
			return version, nil
		}
		return version, c.notify(ctx, "textDocument/didOpen", protocol.DidOpenTextDocumentParams{
			TextDocument: protocol.TextDocumentItem{URI: string(uri), LanguageID: languageID, Version: version, Text: string(text)},
		})
	}
	if c.caps.Sync == 0 {
		return version, nil
	}
	return version, c.notify(ctx, "textDocument/didChange", protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: docID(uri), Version: version},
		ContentChanges: []any{protocol.TextDocumentContentChangeEventWhole{Text: string(text)}},
	})
}

// CloseDocument sends didClose and forgets the document and the
// diagnostics known for it. Closing a document that is not open does
// nothing.
func (c *Client) CloseDocument(ctx context.Context, uri DocumentURI) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	_, open := c.docs[uri]
	delete(c.docs, uri)
	delete(c.published, uri)
	c.broadcastLocked()
	c.mu.Unlock()
	if !open || !c.caps.OpenClose {
		return nil
	}
	return c.notify(ctx, "textDocument/didClose", protocol.DidCloseTextDocumentParams{TextDocument: docID(uri)})
}

// Text returns the content and version the server holds for an open
// document; ok is false when it is not open.
func (c *Client) Text(uri DocumentURI) (text []byte, version int32, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[uri]
	if d == nil {
		return nil, 0, false
	}
	return d.text, d.version, true
}

// OpenDocuments is how many documents are open in the server.
func (c *Client) OpenDocuments() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.docs)
}

// WaitOptions bounds a Diagnostics call.
type WaitOptions struct {
	// Wait is the longest time to wait for the server; zero returns what
	// is known now.
	Wait time.Duration
	// Settle is, after a set for the version arrived by push, how long to
	// wait for a further round (servers that publish a fast syntax pass
	// and then a slower type pass); each new round restarts it. Zero takes
	// the first round for the version.
	Settle time.Duration
}

// DiagnosticSet is what Diagnostics found for one version of a document.
type DiagnosticSet struct {
	URI DocumentURI
	// Version is the document version asked about: the latest one sent
	// when the call began.
	Version int32
	Items   []Diagnostic
	// Fresh says Items belong to Version or later: published for it (or,
	// when the server does not tag its publishes with versions, published
	// after it was sent) or pulled. When false, Items are the last set
	// known, possibly out of date, because Wait expired first.
	Fresh bool
	// Superseded says a newer change of the document was sent before the
	// set for Version arrived; the wait ended early.
	Superseded bool
	// Pulled says the set was asked for (textDocument/diagnostic, or
	// tsserver's diagnostic requests through typescript-language-server)
	// rather than published.
	Pulled bool
	// Rounds is how many publishes for Version arrived.
	Rounds int
	// SentAt is when Version was sent; ReceivedAt when Items arrived (zero
	// when nothing is known).
	SentAt, ReceivedAt time.Time
}

// Diagnostics returns the diagnostics for the document's current version.
// With pull diagnostics (offered or registered by the server), or from
// typescript-language-server through its tsserver pass-through command
// (see pullTSServer), it asks; otherwise, or when the asking fails, it
// waits for the server's publish of that version, then opts.Settle for
// further rounds while any work-done progress begun since the change is
// still running. When opts.Wait ends
// first it returns the last known set, not Fresh. A newer Sync of the
// document ends the wait at once (Superseded). The error is non-nil only
// when the document was never synced, ctx ended or the connection closed;
// the set is filled in as far as it is known even then.
func (c *Client) Diagnostics(ctx context.Context, uri DocumentURI, opts WaitOptions) (DiagnosticSet, error) {
	c.mu.Lock()
	d := c.docs[uri]
	if d == nil {
		c.mu.Unlock()
		return DiagnosticSet{URI: uri}, fmt.Errorf("%w: %s", ErrNotOpen, uri)
	}
	want, sentSeq, sentAt := d.version, d.sentSeq, d.sentAt
	c.mu.Unlock()

	wctx, cancel := context.WithTimeout(ctx, opts.Wait)
	defer cancel()
	// A server may register pull diagnostics after initialization, even
	// while this call waits for a publish; each wake-up looks again.
	pullTried := false
	tryPull := func() (DiagnosticSet, bool, error) {
		c.mu.Lock()
		pull := !pullTried && (c.pullEnabledLocked() || c.tsserverPullLocked()) && opts.Wait > 0
		c.mu.Unlock()
		if !pull {
			return DiagnosticSet{}, false, nil
		}
		pullTried = true
		set, err := c.pull(wctx, uri, d, want, sentAt)
		if err == nil || errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return set, true, err
		}
		if errors.Is(err, errNotTSServer) {
			c.mu.Lock()
			c.tsserverBroken = true
			c.mu.Unlock()
		}
		c.log.Debug("pull diagnostics failed; waiting for a publish instead", "uri", uri, "err", err)
		return DiagnosticSet{}, false, nil
	}

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if set, done, err := tryPull(); done {
			return set, err
		}
		c.mu.Lock()
		set := DiagnosticSet{URI: uri, Version: want, SentAt: sentAt}
		p := c.published[uri]
		if p != nil {
			set.Items, set.ReceivedAt, set.Pulled = p.items, p.at, p.pulled
		}
		if cur := c.docs[uri]; cur != d || cur.version != want {
			c.mu.Unlock()
			set.Superseded = true
			return set, nil
		}
		set.Rounds = d.rounds
		set.Fresh = p != nil && p.seq > sentSeq && (p.version == nil || *p.version >= want)
		busy := c.busyLocked(sentAt)
		ch := c.changed
		c.mu.Unlock()

		var settled <-chan time.Time
		if set.Fresh {
			quiet := time.Until(set.ReceivedAt.Add(opts.Settle))
			if quiet <= 0 && !busy {
				return set, nil
			}
			if quiet > 0 {
				if timer == nil {
					timer = time.NewTimer(quiet)
				} else {
					timer.Reset(quiet)
				}
				settled = timer.C
			}
		}
		select {
		case <-ch:
		case <-settled:
			if !busy {
				return set, nil
			}
		case <-c.Done():
			return set, c.wrap("textDocument/publishDiagnostics", ErrClosed)
		case <-wctx.Done():
			if err := ctx.Err(); err != nil {
				return set, err
			}
			return set, nil
		}
	}
}

// pull asks for the document's diagnostics with textDocument/diagnostic,
// or, from a server that does not answer it, with tsserver's requests
// (see pullTSServer).
func (c *Client) pull(ctx context.Context, uri DocumentURI, d *document, want int32, sentAt time.Time) (DiagnosticSet, error) {
	c.mu.Lock()
	standard := c.pullEnabledLocked()
	params := map[string]any{"textDocument": map[string]any{"uri": uri}}
	if d.resultID != "" {
		params["previousResultId"] = d.resultID
	}
	c.mu.Unlock()
	var rep documentDiagnosticReport
	var err error
	if standard {
		err = c.call(ctx, "textDocument/diagnostic", params, &rep)
	} else {
		rep.Items, err = c.pullTSServer(ctx, uri)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	set := DiagnosticSet{URI: uri, Version: want, SentAt: sentAt}
	prev := c.published[uri]
	if prev != nil {
		set.Items, set.ReceivedAt, set.Pulled = prev.items, prev.at, prev.pulled
	}
	if err != nil {
		return set, err
	}
	canonicalRelated(rep.Items)
	items := rep.Items
	switch {
	case rep.Kind == "unchanged" && prev != nil:
		items = prev.items
	case rep.Kind == "unchanged":
		return set, fmt.Errorf("textDocument/diagnostic: the server answered \"unchanged\" but darman has no earlier result")
	case items == nil:
		items = []Diagnostic{}
	}
	if len(items) > c.opts.MaxItems {
		items = items[:c.opts.MaxItems]
	}
	v := want
	c.seq++
	now := time.Now()
	c.published[uri] = &published{version: &v, items: items, seq: c.seq, at: now, pulled: true}
	c.broadcastLocked()
	set.Items, set.ReceivedAt, set.Pulled, set.Fresh = items, now, true, true
	if cur := c.docs[uri]; cur != d || cur.version != want {
		set.Superseded = true
		return set, nil
	}
	d.resultID = rep.ResultID
	return set, nil
}

// PullOthers asks for the diagnostics of every open document not in
// skip, when the server can be asked (as Diagnostics does), and keeps each
// set as that document's latest, where Published finds it: after an edit,
// the errors it caused in other open documents. A server that only
// publishes is not asked; it publishes for other documents itself. A
// failure is logged and leaves the document its last set.
func (c *Client) PullOthers(ctx context.Context, skip map[DocumentURI]bool) {
	type open struct {
		uri     DocumentURI
		d       *document
		version int32
		sentAt  time.Time
	}
	c.mu.Lock()
	var docs []open
	if c.pullEnabledLocked() || c.tsserverPullLocked() {
		for uri, d := range c.docs {
			if !skip[uri] {
				docs = append(docs, open{uri, d, d.version, d.sentAt})
			}
		}
	}
	c.mu.Unlock()
	for _, o := range docs {
		_, err := c.pull(ctx, o.uri, o.d, o.version, o.sentAt)
		if err == nil {
			continue
		}
		c.log.Debug("pulling another document's diagnostics failed", "uri", o.uri, "err", err)
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return
		}
	}
}

func (c *Client) pullEnabledLocked() bool {
	if c.caps.PullDiagnostics {
		return true
	}
	for _, m := range c.registered {
		if m == "textDocument/diagnostic" {
			return true
		}
	}
	return false
}

// busyLocked reports whether work-done progress that began after since is
// still running.
func (c *Client) busyLocked(since time.Time) bool {
	for _, began := range c.progress {
		if !began.Before(since) {
			return true
		}
	}
	return false
}

// Published is the last diagnostic set the server gave for one document.
type Published struct {
	URI DocumentURI
	// Version is the document version the server said the set is for;
	// nil when it did not say.
	Version *int32
	Items   []Diagnostic
	// Seq orders sets by arrival across the connection; compare it with
	// Seq() taken earlier to tell what arrived since.
	Seq        uint64
	ReceivedAt time.Time
}

// Published returns every document's last set; the Items slices are
// shared and must not be modified.
func (c *Client) Published() []Published {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Published, 0, len(c.published))
	for uri, p := range c.published {
		out = append(out, Published{URI: uri, Version: p.version, Items: p.items, Seq: p.seq, ReceivedAt: p.at})
	}
	return out
}

// Changed returns a channel closed at the next change of state: a set
// published or pulled, a document synced, progress begun or ended, the
// connection closed. Take a new one after each wake-up.
func (c *Client) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Seq is the arrival counter of the latest diagnostic set.
func (c *Client) Seq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// FilesChanged tells the server about files changed on disk with
// workspace/didChangeWatchedFiles, when it registered for them (darman
// declares dynamic registration, so a server that did not register does
// not want them). It reports whether it sent anything.
func (c *Client) FilesChanged(ctx context.Context, events []FileEvent) (bool, error) {
	c.mu.Lock()
	want := false
	for _, m := range c.registered {
		if m == "workspace/didChangeWatchedFiles" {
			want = true
		}
	}
	c.mu.Unlock()
	if !want || len(events) == 0 {
		return false, nil
	}
	return true, c.notify(ctx, "workspace/didChangeWatchedFiles", protocol.DidChangeWatchedFilesParams{Changes: events})
}
