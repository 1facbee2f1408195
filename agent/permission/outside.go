package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/darman-dev/darman/internal/winpath"
)

// Outside reports whether path lies outside the workspace root once symlinks
// are resolved. A relative path is taken from root. The file need not exist:
// the longest existing prefix of path is resolved and the rest appended, so a
// file about to be created under a symlinked directory is judged by where
// that directory really is. root must exist.
func Outside(root, path string) (bool, error) {
	realRoot, realPath, err := resolve(root, path)
	if err != nil {
		return false, err
	}
	return !within(realRoot, realPath), nil
}

// resolve returns root and path with symlinks resolved.
func resolve(root, path string) (realRoot, realPath string, err error) {
	if root == "" {
		return "", "", errors.New("the workspace root is empty")
	}
	if path == "" {
		return "", "", errors.New("the path is empty")
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", "", fmt.Errorf("make the workspace root %s absolute: %w", root, err)
	}
	realRoot, err = filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", "", fmt.Errorf("resolve the workspace root: %w", err)
	}
	if !filepath.IsAbs(path) {
		// Not filepath.Join: cleaning "link/.." before resolving link
		// would skip where the link leads.
		path = absRoot + string(filepath.Separator) + path
	}
	prefix, rest := path, ""
	for {
		real, err := filepath.EvalSymlinks(prefix)
		if err == nil {
			return realRoot, filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", "", fmt.Errorf("resolve %s: %w", path, err)
		}
		dir, base := splitLast(prefix)
		if dir == prefix {
			return "", "", fmt.Errorf("resolve %s: %w", path, err)
		}
		prefix, rest = dir, filepath.Join(base, rest)
	}
}

// splitLast splits an absolute path before its last element without
// cleaning it.
func splitLast(p string) (dir, base string) {
	vol := filepath.VolumeName(p)
	trimmed := strings.TrimRight(p[len(vol):], `/`+string(filepath.Separator))
	i := strings.LastIndexAny(trimmed, `/`+string(filepath.Separator))
	if i < 0 {
		return p, ""
	}
	dir = trimmed[:i]
	if dir == "" {
		dir = string(filepath.Separator)
	}
	return vol + dir, trimmed[i+1:]
}

// within reports whether path is root or below it; both are clean and
// absolute.
func within(root, path string) bool {
	if runtime.GOOS == "windows" {
		// Without case, \\?\ forms and all.
		return winpath.Within(root, path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// isDir reports whether path is an existing directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
