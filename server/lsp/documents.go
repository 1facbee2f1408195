package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/lsp/text"
	"github.com/darman-dev/darman/server/rpc"
)

// document is an editor buffer as the client last described it. A document
// value never changes once stored: a change stores a new one, so readers
// take it without holding a lock.
type document struct {
	uri        string
	path       string // "" when the URI is not a file
	languageID string
	version    int32
	content    *text.Content
	// lost is set when a change could not be applied: the buffer's
	// content is unknown until the client sends it whole again (a full
	// change, or closing and opening it), and readers use the disk.
	lost error
}

// documents are the open buffers, by URI and by path. Safe for concurrent
// use.
type documents struct {
	mu     sync.RWMutex
	byURI  map[string]*document
	byPath map[string]*document
}

func newDocuments() *documents {
	return &documents{byURI: map[string]*document{}, byPath: map[string]*document{}}
}

func (d *documents) get(uri string) *document {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byURI[uri]
}

// atPath returns the open buffer of a file, or nil.
func (d *documents) atPath(path string) *document {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byPath[path]
}

func (d *documents) put(doc *document) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byURI[doc.uri] = doc
	if doc.path != "" {
		d.byPath[doc.path] = doc
	}
}

func (d *documents) remove(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc := d.byURI[uri]; doc != nil {
		delete(d.byURI, uri)
		if d.byPath[doc.path] == doc {
			delete(d.byPath, doc.path)
		}
	}
}

func (s *Server) didOpen(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	item := p.TextDocument
	doc := &document{uri: item.URI, languageID: item.LanguageID, version: item.Version, content: text.New(item.Text)}
	if path, err := uriToPath(item.URI); err == nil {
		doc.path = path
	}
	s.docs.put(doc)
	return nil
}

// didChange applies the changes in order. A change that does not fit the
// buffer (a position past its end) means darman and the editor disagree:
// the document is marked lost and the user is told, rather than guessing.
func (s *Server) didChange(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidChangeTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	uri := p.TextDocument.URI
	old := s.docs.get(uri)
	if old == nil {
		return fmt.Errorf("didChange for %s, which is not open", uri)
	}
	doc := *old
	doc.version = p.TextDocument.Version
	for i, change := range p.ContentChanges {
		var err error
		switch c := change.(type) {
		case protocol.TextDocumentContentChangeEventWhole:
			doc.content, doc.lost = text.New(c.Text), nil
		case protocol.TextDocumentContentChangeEvent:
			if doc.lost != nil {
				continue // nothing to apply an edit to until a whole text comes
			}
			doc.content, err = doc.content.Apply(c.Range, c.Text)
		default:
			err = fmt.Errorf("unknown change type %T", change)
		}
		if err != nil {
			doc.lost = fmt.Errorf("change %d of version %d: %w", i+1, doc.version, err)
			s.log.Error("lsp: a change does not fit the buffer; reading the file from disk until the editor sends it whole", "uri", uri, "err", doc.lost)
			s.logMessage(protocol.MessageTypeError, fmt.Sprintf("darman lost track of %s (%v); it reads the file from disk until the buffer is reopened", uri, doc.lost))
		}
	}
	s.docs.put(&doc)
	s.completionChanged(uri)
	return nil
}

func (s *Server) didSave(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidSaveTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	if p.Text == nil {
		return nil
	}
	old := s.docs.get(p.TextDocument.URI)
	if old == nil {
		return errors.New("didSave for a document that is not open")
	}
	doc := *old
	doc.content, doc.lost = text.New(*p.Text), nil
	s.docs.put(&doc)
	return nil
}

func (s *Server) didClose(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	s.completionClosed(p.TextDocument.URI)
	s.docs.remove(p.TextDocument.URI)
	return nil
}
