package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RootSource says how the project root was chosen.
type RootSource string

const (
	// RootFromFlag: --project-root named it.
	RootFromFlag RootSource = "flag"
	// RootFromMarker: the nearest directory above the working directory
	// holding one of RootMarkers.
	RootFromMarker RootSource = "marker"
	// RootFromCwd: no marker was found; the working directory itself.
	RootFromCwd RootSource = "cwd"
)

// RootMarkers are the files and directories whose presence makes a
// directory a project root, in no particular order.
var RootMarkers = []string{"darman.json", ".darman", "go.mod", "package.json", "pyproject.toml", "Cargo.toml", ".git"}

// Root is the project every tool works in: an absolute directory with
// symlinks resolved, and how it was chosen. It is fixed for the server's
// life.
type Root struct {
	Dir    string     `json:"dir"`
	Source RootSource `json:"source"`
}

// DetectRoot picks the project root: flag when set, else the first
// directory from cwd upwards holding a marker, else cwd.
func DetectRoot(flag, cwd string) (Root, error) {
	if flag != "" {
		dir, err := realDir(flag)
		if err != nil {
			return Root{}, fmt.Errorf("%s: --project-root %s: %w", CodeProjectNotFound, flag, err)
		}
		return Root{Dir: dir, Source: RootFromFlag}, nil
	}
	start, err := realDir(cwd)
	if err != nil {
		return Root{}, fmt.Errorf("%s: the working directory %s: %w", CodeProjectNotFound, cwd, err)
	}
	for dir := start; ; {
		for _, m := range RootMarkers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return Root{Dir: dir, Source: RootFromMarker}, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return Root{Dir: start, Source: RootFromCwd}, nil
}

func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// Resolve turns a path a client gave into an absolute path inside the
// root: relative paths are taken from the root, backslashes are read as
// separators (clients on Windows send them), the result is cleaned and
// its symlinks resolved (for a file that does not exist yet, those of its
// nearest existing parent). A path that lands outside the root is refused
// with MCP-PATH-OUTSIDE-PROJECT; an empty one or one with a NUL byte with
// MCP-INVALID-INPUT.
func (r Root) Resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", toolErrorf(CodeInvalidInput, "the path is empty: give a file path relative to the project root %s", r.Dir)
	}
	if strings.ContainsRune(p, 0) {
		return "", toolErrorf(CodeInvalidInput, "the path %q contains a NUL byte", p)
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	var abs string
	switch {
	case len(slashed) >= 2 && slashed[1] == ':' && isLetter(slashed[0]):
		// A Windows drive path (C:/...) never names a file under a Unix root.
		return "", r.outside(p)
	case filepath.IsAbs(filepath.FromSlash(slashed)):
		abs = filepath.Clean(filepath.FromSlash(slashed))
	default:
		abs = filepath.Join(r.Dir, filepath.FromSlash(slashed))
	}
	if !within(r.Dir, abs) {
		return "", r.outside(p)
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", toolErrorf(CodeInvalidInput, "the path %q: %v", p, err)
	}
	if !within(r.Dir, real) {
		return "", r.outside(p)
	}
	return real, nil
}

func (r Root) outside(p string) error {
	return toolErrorf(CodeOutsideProject, "%q is outside the project root %s; give a path inside it (relative paths are taken from the root)", p, r.Dir)
}

// Rel is path relative to the root with forward slashes, as tools show
// it; a path outside the root is returned as is.
func (r Root) Rel(path string) string {
	rel, err := filepath.Rel(r.Dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// within says whether path is dir or below it; both are clean and
// absolute.
func within(dir, path string) bool {
	if path == dir {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// evalExisting resolves the symlinks of the longest existing prefix of
// path and appends the rest.
func evalExisting(path string) (string, error) {
	rest := ""
	for cur := path; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
