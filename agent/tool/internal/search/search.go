// Package search is the engine behind the glob, grep and list tools: a
// Searcher finds the files under a directory and the lines that match a
// pattern. Two implement it, ripgrep and a Go walk, and they give the same
// results — the same files (ignore.go: .gitignore, .ignore, .rgignore and
// .darmanignore), the same matching lines (regex.go turns RE2 into
// ripgrep's syntax; prefilter.go finds candidate lines fast in Go) — so a
// machine without rg sees what one with it sees. Start at Pick.
package search

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Searcher finds files and lines for glob, grep and list. Its methods are
// safe for concurrent use.
type Searcher interface {
	// Files returns the absolute paths of the files under dir, which is
	// root or below it.
	Files(ctx context.Context, root, dir string) ([]string, error)
	// Grep returns the files under dir (or dir itself, if it is a file)
	// with lines matching q.
	Grep(ctx context.Context, root, dir string, q *Query) ([]FileHits, error)
	// Name is "rg" or "go", for the tools' metadata.
	Name() string
}

// NameFilter is a Searcher that can keep only the files whose name
// matches a glob itself, on its side of the pipe: glob's "*.go" need not
// bring every file of a big tree over to be matched.
type NameFilter interface {
	// FilesNamed is Files of the files whose name (the last element)
	// matches name, a glob without "/"; the caller still matches what
	// it gets.
	FilesNamed(ctx context.Context, root, dir, name string) ([]string, error)
}

// Query is what grep looks for.
type Query struct {
	Pattern string // RE2 syntax
	// Include, when set, keeps only the files whose path relative to the
	// searched directory it matches; IncludeRaw is its glob as written.
	Include    *Wildcard
	IncludeRaw string
	// PerFile bounds the lines kept per file; all are counted.
	PerFile int
}

// FileHits is one file's matching lines.
type FileHits struct {
	Abs   string
	Lines []HitLine // at most Query.PerFile
	Count int       // every matching line
	Mtime time.Time // set by SortHits, or by the search that stat'ed the file
}

// HitLine is a matching line and its number, from 1. Text is cut a little
// past HitLineMax bytes.
type HitLine struct {
	No   int
	Text string
}

// HitLineMax bounds a matching line as grep keeps it.
const HitLineMax = 500

// Pick returns the ripgrep searcher when rg can be used (at ripgrep, or
// found on PATH when ripgrep is ""), else the Go one; noRipgrep picks the
// Go one always.
func Pick(ripgrep string, noRipgrep bool) Searcher {
	if noRipgrep {
		return Go{}
	}
	path := ripgrep
	if path == "" {
		p, err := exec.LookPath("rg")
		if err != nil {
			return Go{}
		}
		path = p
	}
	return rg{path: path}
}

// within reports whether abs is root or lies under it.
func within(root, abs string) bool {
	return abs == root || strings.HasPrefix(abs, root+string(filepath.Separator))
}

// ByNewest sorts paths by modification time, newest first, then by path;
// files that cannot be stat'ed go last.
func ByNewest(paths []string) []string {
	type stamped struct {
		path string
		mod  time.Time
	}
	s := make([]stamped, len(paths))
	forEachParallel(len(paths), func(i int) {
		s[i].path = paths[i]
		if info, err := os.Stat(paths[i]); err == nil {
			s[i].mod = info.ModTime()
		}
	})
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

// SortHits orders grep's files newest first, then by path. A file whose
// Mtime is set is not looked at again.
func SortHits(hits []FileHits) {
	forEachParallel(len(hits), func(i int) {
		if !hits[i].Mtime.IsZero() {
			return
		}
		if info, err := os.Stat(hits[i].Abs); err == nil {
			hits[i].Mtime = info.ModTime()
		}
	})
	slices.SortFunc(hits, func(a, b FileHits) int {
		if c := b.Mtime.Compare(a.Mtime); c != 0 {
			return c
		}
		return cmp.Compare(a.Abs, b.Abs)
	})
}

// forEachParallel calls fn(i) for every i below n, on every core: the
// stats of a sort by time, which on a tree of 100,000 files cost more than
// the walk that found them when made one after another.
func forEachParallel(n int, fn func(i int)) {
	const chunk = 512
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}

// Includes applies grep's include filter to a file found under dir.
func (q *Query) Includes(dir, abs string) bool {
	if q.Include == nil {
		return true
	}
	rel := abs
	if r, ok := strings.CutPrefix(abs, dir+string(filepath.Separator)); ok {
		rel = r
	} else if abs == dir {
		rel = filepath.Base(abs)
	}
	return q.Include.Match(rel)
}
