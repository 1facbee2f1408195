// Package edit is the LSP front's tool.Workspace: the agent's reads see
// the editor's unsaved buffers (server/lsp/internal/buffer), and its
// writes go where the editor can cope with them, through
// workspace/applyEdit or to the disk. The server gives it the open
// buffers, a Client to send workspace/applyEdit on, and what the client
// said it takes (Caps).
package edit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
)

// Client is the editor as the workspace writes through it.
type Client interface {
	// ApplyEdit sends one workspace/applyEdit and waits for its answer.
	ApplyEdit(ctx context.Context, params protocol.ApplyWorkspaceEditParams) (protocol.ApplyWorkspaceEditResponse, error)
}

// Caps are what the client said at initialize about edits.
type Caps struct {
	// AndSave: the client opted into applyEditAndSave.
	AndSave bool
	// ApplyEdit: capabilities.workspace.applyEdit.
	ApplyEdit bool
	// DocumentChanges: workspaceEdit.documentChanges (versioned edits).
	DocumentChanges bool
	// Create: workspaceEdit.resourceOperations has "create".
	Create bool
}

// Workspace is the agent's tool.Workspace in an editor: reads see unsaved
// buffers, and writes go where the editor can cope with them (see
// ARCHITECTURE.md "Edits" and docs/protocol.md):
//
//   - for a client that opted into applyEditAndSave, through
//     workspace/applyEdit, which the client applies and saves before it
//     answers; darman never writes those files itself;
//   - for another client that takes workspace/applyEdit, a file open in it
//     is changed in its buffer by workspace/applyEdit, not saved: the user
//     sees the edit, undoes it, saves it; darman never writes that file
//     behind the buffer (an editor that does not reload, such as Helix,
//     would then refuse to save it). Files that are not open go to the
//     disk;
//   - otherwise to the disk, atomically, never over a buffer with unsaved
//     changes (tool.ErrUnsaved); an open, clean buffer reloads through the
//     editor's own mechanism (autoread, auto-revert).
//
// Safe for concurrent use.
type Workspace struct {
	docs   *buffer.Set
	client Client
	caps   Caps
	disk   *tool.Disk

	mu sync.Mutex
	// written remembers, per file darman wrote to the disk, the content it
	// replaced and the content it wrote, so that a buffer still showing
	// the replaced content counts as clean and stale rather than as
	// unsaved work until the editor reloads it.
	written map[string]writeRecord
	// inBuffer remembers, per file changed in the editor's buffer and not
	// saved, the content darman put there and the buffer's version then:
	// until the client's didChange arrives, reads see that content.
	inBuffer map[string]bufferRecord
}

type bufferRecord struct {
	version int32
	content []byte
}

type writeRecord struct {
	before, after [sha256.Size]byte
}

// New is the workspace at root over the editor's open buffers docs.
func New(root string, docs *buffer.Set, client Client, caps Caps) *Workspace {
	return &Workspace{docs: docs, client: client, caps: caps, disk: tool.NewDisk(root),
		written: map[string]writeRecord{}, inBuffer: map[string]bufferRecord{}}
}

// Root is the workspace root from initialize.
func (w *Workspace) Root() string { return w.disk.Root() }

// ReadFile returns the editor's buffer when the file is open and its
// content is known, else the disk's content.
func (w *Workspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	doc := w.docs.AtPath(path)
	if doc == nil || doc.Lost != nil {
		return w.disk.ReadFile(ctx, path)
	}
	w.mu.Lock()
	rec, ok := w.inBuffer[path]
	w.mu.Unlock()
	if ok && rec.version == doc.Version {
		return rec.content, nil
	}
	buf := []byte(doc.Content.String())
	if w.stale(path, buf) {
		return w.disk.ReadFile(ctx, path)
	}
	return buf, nil
}

// InBuffer reports whether the last change to path is in the editor's
// buffer and not saved yet (tool.Buffers): commands that read the disk
// see it once the user saves.
func (w *Workspace) InBuffer(path string) bool {
	doc := w.docs.AtPath(path)
	if doc == nil || doc.Lost != nil {
		return false
	}
	w.mu.Lock()
	rec, ok := w.inBuffer[path]
	w.mu.Unlock()
	if !ok {
		return false
	}
	buf := []byte(doc.Content.String())
	if rec.version == doc.Version {
		buf = rec.content // the client's didChange is still on its way
	}
	disk, err := os.ReadFile(path)
	return err != nil || !bytes.Equal(disk, buf)
}

// stale reports whether buf is what darman replaced on the disk and the
// disk still holds what darman wrote: the editor has not reloaded yet.
func (w *Workspace) stale(path string, buf []byte) bool {
	w.mu.Lock()
	rec, ok := w.written[path]
	w.mu.Unlock()
	if !ok || sha256.Sum256(buf) != rec.before {
		return false
	}
	disk, err := os.ReadFile(path)
	return err == nil && sha256.Sum256(disk) == rec.after
}

// WriteFile writes through the editor or to the disk (see Workspace).
func (w *Workspace) WriteFile(ctx context.Context, path string, content []byte) error {
	if w.caps.AndSave {
		return w.applyAndSave(ctx, path, content)
	}
	if doc := w.docs.AtPath(path); doc != nil && doc.Lost == nil && w.caps.ApplyEdit {
		return w.applyToBuffer(ctx, doc, path, content)
	}
	before, err := w.checkClean(path)
	if err != nil {
		return err
	}
	if err := w.disk.WriteFile(ctx, path, content); err != nil {
		return err
	}
	w.mu.Lock()
	w.written[path] = writeRecord{before: sha256.Sum256(before), after: sha256.Sum256(content)}
	w.mu.Unlock()
	return nil
}

// Remove deletes a file from the disk, unless the editor holds unsaved
// changes to it.
func (w *Workspace) Remove(ctx context.Context, path string) error {
	if _, err := w.checkClean(path); err != nil {
		return err
	}
	return w.disk.Remove(ctx, path)
}

// checkClean fails with tool.ErrUnsaved when the file is open in the
// editor with content the disk does not have, and returns the disk's
// content (nil for a new file).
func (w *Workspace) checkClean(path string) ([]byte, error) {
	disk, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	doc := w.docs.AtPath(path)
	if doc == nil {
		return disk, nil
	}
	if doc.Lost != nil {
		return nil, fmt.Errorf("%s: darman does not know what the editor's buffer holds (%v): %w", path, doc.Lost, tool.ErrUnsaved)
	}
	buf := []byte(doc.Content.String())
	if bytes.Equal(buf, disk) || w.stale(path, buf) {
		return disk, nil
	}
	return nil, fmt.Errorf("%s: %w", path, tool.ErrUnsaved)
}
