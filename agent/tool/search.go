package tool

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// searcher finds files and lines for glob, grep and list. Two implement
// it, ripgrep and a Go walk, and they give the same results: the same
// files (see ignore.go), the same matching lines.
type searcher interface {
	// files returns the absolute paths of the files under dir.
	files(ctx context.Context, root, dir string) ([]string, error)
	// grep returns the files under dir (or dir itself, if it is a file)
	// with lines matching q.
	grep(ctx context.Context, root, dir string, q *grepQuery) ([]fileHits, error)
	name() string
}

// grepQuery is what grep looks for.
type grepQuery struct {
	pattern string // RE2 syntax
	// include, when set, keeps only the files whose path relative to the
	// searched directory it matches.
	include    *wildcard
	includeRaw string
	// perFile bounds the lines kept per file; all are counted.
	perFile int
}

// fileHits is one file's matching lines.
type fileHits struct {
	abs   string
	lines []hitLine
	count int
	mtime time.Time
}

type hitLine struct {
	no   int
	text string
}

// hitLineMax bounds a matching line as grep keeps it.
const hitLineMax = 500

// pickSearcher returns the ripgrep searcher when rg can be used, else the
// Go one.
func pickSearcher(opts Options) searcher {
	if opts.NoRipgrep {
		return goSearcher{}
	}
	path := opts.Ripgrep
	if path == "" {
		p, err := exec.LookPath("rg")
		if err != nil {
			return goSearcher{}
		}
		path = p
	}
	return ripgrep{path: path}
}

// within reports whether abs is root or lies under it.
func within(root, abs string) bool {
	return abs == root || strings.HasPrefix(abs, root+string(filepath.Separator))
}

// byNewest sorts paths by modification time, newest first, then by path;
// files that cannot be stat'ed go last.
func byNewest(paths []string) []string {
	type stamped struct {
		path string
		mod  time.Time
	}
	s := make([]stamped, len(paths))
	for i, p := range paths {
		s[i].path = p
		if info, err := os.Stat(p); err == nil {
			s[i].mod = info.ModTime()
		}
	}
	slices.SortFunc(s, func(a, b stamped) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return cmp.Compare(a.path, b.path)
	})
	for i := range s {
		paths[i] = s[i].path
	}
	return paths
}

// sortHits orders grep's files newest first, then by path.
func sortHits(hits []fileHits) {
	for i := range hits {
		if info, err := os.Stat(hits[i].abs); err == nil {
			hits[i].mtime = info.ModTime()
		}
	}
	slices.SortFunc(hits, func(a, b fileHits) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return cmp.Compare(a.abs, b.abs)
	})
}

// includes applies grep's include filter to a file found under dir.
func (q *grepQuery) includes(dir, abs string) bool {
	if q.include == nil {
		return true
	}
	rel := abs
	if r, ok := strings.CutPrefix(abs, dir+string(filepath.Separator)); ok {
		rel = r
	} else if abs == dir {
		rel = filepath.Base(abs)
	}
	return q.include.match(rel)
}
