package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/text"
	"github.com/darman-dev/darman/server/rpc"
)

func (s *Server) didOpen(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	item := p.TextDocument
	doc := &buffer.Doc{URI: item.URI, LanguageID: item.LanguageID, Version: item.Version, Content: text.New(item.Text)}
	if path, err := buffer.URIToPath(item.URI); err == nil {
		doc.Path = path
	}
	s.docs.Put(doc)
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
	old := s.docs.Get(uri)
	if old == nil {
		return fmt.Errorf("didChange for %s, which is not open", uri)
	}
	doc := *old
	doc.Version = p.TextDocument.Version
	for i, change := range p.ContentChanges {
		var err error
		switch c := change.(type) {
		case protocol.TextDocumentContentChangeEventWhole:
			doc.Content, doc.Lost = text.New(c.Text), nil
		case protocol.TextDocumentContentChangeEvent:
			if doc.Lost != nil {
				continue // nothing to apply an edit to until a whole text comes
			}
			doc.Content, err = doc.Content.Apply(c.Range, c.Text)
		default:
			err = fmt.Errorf("unknown change type %T", change)
		}
		if err != nil {
			doc.Lost = fmt.Errorf("change %d of version %d: %w", i+1, doc.Version, err)
			s.log.Error("lsp: a change does not fit the buffer; reading the file from disk until the editor sends it whole", "uri", uri, "err", doc.Lost)
			s.logMessage(protocol.MessageTypeError, fmt.Sprintf("darman lost track of %s (%v); it reads the file from disk until the buffer is reopened", uri, doc.Lost))
		}
	}
	s.docs.Put(&doc)
	s.complete.Changed(uri)
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
	old := s.docs.Get(p.TextDocument.URI)
	if old == nil {
		return errors.New("didSave for a document that is not open")
	}
	doc := *old
	doc.Content, doc.Lost = text.New(*p.Text), nil
	s.docs.Put(&doc)
	return nil
}

func (s *Server) didClose(_ context.Context, raw json.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	s.complete.Closed(p.TextDocument.URI)
	s.docs.Remove(p.TextDocument.URI)
	return nil
}
