// Package fsafe writes files inside a root directory without being led out
// of it by symbolic links: every writer of darman (the agent's edit tools
// through the disk workspace, darman mcp's rename_symbol) goes through
// [WriteFile].
//
// Right before writing, the path's real location is worked out (every
// existing component's links resolved, the missing rest appended). One
// that leaves the root is refused with an [*OutsideError], whatever the
// path looked like. A link whose target is inside the root is written
// through: the target gets the new content and the link stays a link
// (Written.Through says so). The write itself goes through an [os.Root] of
// the root's real directory, so a parent directory swapped for a link
// between the check and the write cannot lead the write out either.
package fsafe

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// OutsideError is a write refused because the file's real location is
// outside the root.
type OutsideError struct {
	Path string // as asked
	Real string // where it leads
	Root string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s resolves to %s, outside %s (through a symbolic link); it was not written", e.Path, e.Real, e.Root)
}

// Written says what a WriteFile did.
type Written struct {
	// Real is the file that got the content.
	Real string
	// Through is set when path was (or passed through) a symbolic link:
	// Real is its target, and the link was left in place.
	Through bool
}

// Resolve returns the real location of path: the longest existing prefix
// with its links resolved, then the rest.
func Resolve(path string) (string, error) {
	path = filepath.Clean(path)
	rest := ""
	for cur := path; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if target, lerr := os.Readlink(cur); lerr == nil {
			// A link to something missing: its target is where a write
			// would land.
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return Resolve(filepath.Join(target, rest))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Within reports whether path is dir or below it (both clean and
// absolute).
func Within(dir, path string) bool {
	if path == dir {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Check works out where writing path (absolute) would land, and refuses,
// with an *OutsideError, a path inside root whose real location is not.
func Check(root, path string) (Written, error) {
	realRoot, err := Resolve(root)
	if err != nil {
		return Written{}, err
	}
	real, err := Resolve(path)
	if err != nil {
		return Written{}, err
	}
	if !Within(realRoot, real) {
		return Written{}, &OutsideError{Path: path, Real: real, Root: root}
	}
	lexical := filepath.Join(realRoot, relTo(root, path))
	return Written{Real: real, Through: real != lexical}, nil
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return rel
}

// WriteFile replaces path's content (creating it and its missing parent
// directories) atomically: a temporary file beside the real target,
// renamed over it, keeping an existing file's mode. path must be inside
// root (after resolving links); a symbolic link inside root is written
// through. Only regular files are written.
func WriteFile(root, path string, content []byte) (Written, error) {
	root, path = filepath.Clean(root), filepath.Clean(path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	w, err := Check(root, path)
	if err != nil {
		return w, err
	}
	realRoot, err := Resolve(root)
	if err != nil {
		return w, err
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return w, err
	}
	defer r.Close()
	rel := relTo(realRoot, w.Real)

	var mode fs.FileMode
	exists := false
	switch info, err := r.Lstat(rel); {
	case err == nil && !info.Mode().IsRegular():
		return w, fmt.Errorf("%s is not a regular file", w.Real)
	case err == nil:
		mode, exists = info.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), true
	case !errors.Is(err, fs.ErrNotExist):
		return w, err
	}
	dir := filepath.Dir(rel)
	if err := r.MkdirAll(dir, 0o777); err != nil {
		return w, err
	}
	tmp, tmpRel, err := createTemp(r, dir, filepath.Base(rel))
	if err != nil {
		return w, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			r.Remove(tmpRel)
		}
	}()
	if _, err := tmp.Write(content); err != nil {
		return w, err
	}
	if exists {
		if err := tmp.Chmod(mode); err != nil {
			return w, fmt.Errorf("keep its mode: %w", err)
		}
	}
	if err := tmp.Sync(); err != nil {
		return w, err
	}
	if err := tmp.Close(); err != nil {
		return w, err
	}
	if err := r.Rename(tmpRel, rel); err != nil {
		return w, err
	}
	ok = true
	return w, nil
}

// createTemp makes a new, empty file in dir (relative to r), named after
// base, with mode 0666 so that the umask decides a new file's permissions.
func createTemp(r *os.Root, dir, base string) (*os.File, string, error) {
	for range 10 {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(dir, "."+base+".darman-"+hex.EncodeToString(b[:])+".tmp")
		f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("could not make a temporary file")
}
