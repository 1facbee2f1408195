package edit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/text"
)

// applyAndSave changes a file through the editor of a client that opted
// into applyEditAndSave: one workspace/applyEdit, which the client applies
// (opening a closed file in the background), saves, and only then answers.
// darman never writes such a file itself, so the editor never finds it
// changed behind its back.
//
// The edit is computed against the buffer darman knows and, when the
// client takes versioned edits, carries its version: if the user typed in
// between, the client refuses the edit rather than applying it to text it
// was not meant for, and the tool is told to read the file again.
func (w *Workspace) applyAndSave(ctx context.Context, path string, content []byte) error {
	uri := buffer.PathToURI(path)
	var (
		base    *text.Content
		version *protocol.Integer
	)
	if doc := w.docs.AtPath(path); doc != nil && doc.Lost == nil {
		uri, base, version = doc.URI, doc.Content, &doc.Version
	} else {
		disk, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !w.canCreate():
			// A new file the editor cannot create: nothing in the editor
			// holds it, so writing it cannot conflict with anything.
			return w.disk.WriteFile(ctx, path, content)
		case errors.Is(err, fs.ErrNotExist):
			base = text.New("")
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		default:
			base = text.New(string(disk))
		}
	}
	edit := base.Edit(string(content))
	label := "darman: edit " + w.Shown(path)
	params := protocol.ApplyWorkspaceEditParams{Label: &label, Edit: w.workspaceEdit(uri, path, version, edit)}
	res, err := w.client.ApplyEdit(ctx, params)
	if err != nil {
		return fmt.Errorf("the editor did not apply the edit to %s: %w", path, err)
	}
	if !res.Applied {
		reason := "no reason given"
		if res.FailureReason != nil {
			reason = *res.FailureReason
		}
		return fmt.Errorf("the editor refused the edit to %s (%s); read the file again and redo the change", path, reason)
	}
	disk, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(disk, content) {
		return fmt.Errorf("the editor applied the edit to %s but did not save it, so the file on disk is unchanged; ask the user to save it", path)
	}
	// Until the client's didChange arrives, the buffer darman holds is
	// the old one: reads go to the disk meanwhile.
	w.mu.Lock()
	w.written[path] = writeRecord{before: sha256.Sum256([]byte(base.String())), after: sha256.Sum256(content)}
	w.mu.Unlock()
	return nil
}

// applyToBuffer changes a file open in the editor through one
// workspace/applyEdit, which the client applies to the buffer without
// saving it: the edit shows where the user works, undo takes it back, and
// the user saves it. The disk is not written, so the editor never finds the
// file changed behind the buffer. The edit is computed against the buffer
// darman knows and carries its version when the client takes versioned
// edits: if the user typed in between, the client refuses it and the tool
// is told to read the file again.
func (w *Workspace) applyToBuffer(ctx context.Context, doc *buffer.Doc, path string, content []byte) error {
	version := doc.Version
	edit := doc.Content.Edit(string(content))
	label := "darman: edit " + w.Shown(path)
	params := protocol.ApplyWorkspaceEditParams{Label: &label, Edit: w.workspaceEdit(doc.URI, path, &version, edit)}
	res, err := w.client.ApplyEdit(ctx, params)
	if err != nil {
		return fmt.Errorf("the editor did not apply the edit to %s: %w", path, err)
	}
	if !res.Applied {
		reason := "no reason given"
		if res.FailureReason != nil {
			reason = *res.FailureReason
		}
		return fmt.Errorf("the editor refused the edit to %s (%s); read the file again and redo the change", path, reason)
	}
	w.mu.Lock()
	w.inBuffer[path] = bufferRecord{version: version, content: content}
	w.mu.Unlock()
	return nil
}

// canCreate reports whether the client takes workspace edits that create
// files.
func (w *Workspace) canCreate() bool {
	return w.caps.DocumentChanges && w.caps.Create
}

// workspaceEdit is edit as the client best takes it: versioned document
// changes (creating the file first when it is new) when it supports them,
// else a plain change map.
func (w *Workspace) workspaceEdit(uri, path string, version *protocol.Integer, edit protocol.TextEdit) protocol.WorkspaceEdit {
	if !w.caps.DocumentChanges {
		return protocol.WorkspaceEdit{Changes: map[protocol.DocumentUri][]protocol.TextEdit{uri: {edit}}}
	}
	var changes []any
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && w.docs.AtPath(path) == nil {
		changes = append(changes, protocol.CreateFile{Kind: "create", URI: uri})
	}
	changes = append(changes, protocol.TextDocumentEdit{
		TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: version},
		Edits:        []any{edit},
	})
	return protocol.WorkspaceEdit{DocumentChanges: changes}
}

// Shown is a path as the user reads it: relative to the root when inside.
func (w *Workspace) Shown(path string) string {
	if rel, err := filepath.Rel(w.Root(), path); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return path
}
