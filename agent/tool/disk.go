package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/darman-dev/darman/internal/fsafe"
)

// Disk is the Workspace of the headless front: files are read from and
// written to the disk directly. Writes are atomic (a temporary file in the
// same directory, renamed over the target), keep the mode of the file they
// replace, write through a symbolic link to its target, and create missing
// parent directories. Disk has no editor, so it never reports ErrUnsaved.
// A Disk is safe for concurrent use.
type Disk struct {
	root string
}

// NewDisk returns the Disk workspace rooted at root, made absolute.
func NewDisk(root string) *Disk {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &Disk{root: filepath.Clean(root)}
}

// Root returns the workspace's absolute root directory.
func (d *Disk) Root() string { return d.root }

func (d *Disk) abs(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.root, path)
	}
	return filepath.Clean(path)
}

// ReadFile returns the file's content on disk.
func (d *Disk) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.ReadFile(d.abs(path))
}

// WriteFile replaces the file's content atomically.
func (d *Disk) WriteFile(ctx context.Context, path string, content []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	target := d.abs(path)
	if fsafe.Within(d.root, target) {
		// Inside the workspace: never led out of it by a link, and a link
		// inside it is written through (it stays a link).
		if _, err := fsafe.WriteFile(d.root, target, content); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		return nil
	}
	// Outside (the tool asked for it): write through a link, so the link
	// stays a link, with the same atomic writer rooted at the file's own
	// directory.
	if real, err := filepath.EvalSymlinks(target); err == nil {
		target = real
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	if _, err := fsafe.WriteFile(dir, target, content); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	return nil
}

// Remove deletes the file from the disk.
func (d *Disk) Remove(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Remove(d.abs(path))
}
