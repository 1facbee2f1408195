package lsp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/darman-dev/darman/agent/tool"
)

// workspace is the agent's tool.Workspace in an editor: reads see unsaved
// buffers, and writes go where the editor can cope with them (see
// ARCHITECTURE.md "Edits" and docs/protocol.md):
//
//   - for a client that opted into applyEditAndSave, through
//     workspace/applyEdit, which the client applies and saves before it
//     answers; darman never writes those files itself;
//   - otherwise to the disk, atomically, never over a buffer with unsaved
//     changes (tool.ErrUnsaved); an open, clean buffer reloads through the
//     editor's own mechanism (autoread, auto-revert).
//
// Safe for concurrent use.
type workspace struct {
	s    *Server
	disk *tool.Disk

	mu sync.Mutex
	// written remembers, per file darman wrote to the disk, the content it
	// replaced and the content it wrote, so that a buffer still showing
	// the replaced content counts as clean and stale rather than as
	// unsaved work until the editor reloads it.
	written map[string]writeRecord
}

type writeRecord struct {
	before, after [sha256.Size]byte
}

func newWorkspace(s *Server) *workspace {
	return &workspace{s: s, disk: tool.NewDisk(s.root), written: map[string]writeRecord{}}
}

// Root is the workspace root from initialize.
func (w *workspace) Root() string { return w.disk.Root() }

// ReadFile returns the editor's buffer when the file is open and its
// content is known, else the disk's content.
func (w *workspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	doc := w.s.docs.atPath(path)
	if doc == nil || doc.lost != nil {
		return w.disk.ReadFile(ctx, path)
	}
	buf := []byte(doc.content.String())
	if w.stale(path, buf) {
		return w.disk.ReadFile(ctx, path)
	}
	return buf, nil
}

// stale reports whether buf is what darman replaced on the disk and the
// disk still holds what darman wrote: the editor has not reloaded yet.
func (w *workspace) stale(path string, buf []byte) bool {
	w.mu.Lock()
	rec, ok := w.written[path]
	w.mu.Unlock()
	if !ok || sha256.Sum256(buf) != rec.before {
		return false
	}
	disk, err := os.ReadFile(path)
	return err == nil && sha256.Sum256(disk) == rec.after
}

// WriteFile writes through the editor or to the disk (see workspace).
func (w *workspace) WriteFile(ctx context.Context, path string, content []byte) error {
	if w.s.client.opt.ApplyEditAndSave {
		return w.applyAndSave(ctx, path, content)
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
func (w *workspace) Remove(ctx context.Context, path string) error {
	if _, err := w.checkClean(path); err != nil {
		return err
	}
	return w.disk.Remove(ctx, path)
}

// checkClean fails with tool.ErrUnsaved when the file is open in the
// editor with content the disk does not have, and returns the disk's
// content (nil for a new file).
func (w *workspace) checkClean(path string) ([]byte, error) {
	disk, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	doc := w.s.docs.atPath(path)
	if doc == nil {
		return disk, nil
	}
	if doc.lost != nil {
		return nil, fmt.Errorf("%s: darman does not know what the editor's buffer holds (%v): %w", path, doc.lost, tool.ErrUnsaved)
	}
	buf := []byte(doc.content.String())
	if bytes.Equal(buf, disk) || w.stale(path, buf) {
		return disk, nil
	}
	return nil, fmt.Errorf("%s: %w", path, tool.ErrUnsaved)
}
