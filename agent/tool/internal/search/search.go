// Package search is the engine behind the glob, grep and list tools: the
// Go walk finds the files under a directory, and a Searcher the lines that
// match a pattern. Two implement it, ripgrep and the Go walk, and they
// give the same results — the same files (ignore.go: .gitignore, .ignore,
// .rgignore and .darmanignore), the same matching lines (regex.go turns RE2 into
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

// Searcher finds the lines grep looks for. Its methods are safe for
// concurrent use. glob and list take their files from the Go walk
// (Go.Files, Go.FilesStamped) whichever Searcher grep uses: in darman's
// process it is cheaper than ripgrep's list (docs/benchmarks.md).
type Searcher interface {
	// Grep returns the files under dir (or dir itself, if it is a file)
	// with lines matching q.
	Grep(ctx context.Context, root, dir string, q *Query) ([]FileHits, error)
	// Name is "rg" or "go", for the tools' metadata.
	Name() string
}

// Query is what grep looks for.
type Query struct {
	Pattern string // RE2 syntax
	// Include, when set, keeps only the files whose path relative to the
	// searched directory it matches; IncludeRaw is its glob as written.
	Include    *Wildcard
	IncludeRaw string
	// Lines bounds the lines kept per file; all are counted. A Searcher
	// may keep lines only for the first files in SortHits's order that
	// hold Lines in all: the tools show no more.
	Lines int
}

// FileHits is one file's matching lines.
type FileHits struct {
	Abs   string
	Lines []HitLine // at most Query.Lines
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

// Stamped is a file and its modification time.
type Stamped struct {
	Abs   string
	Mtime time.Time // zero when the file could not be stat'ed
}

// newer is the order of Newest: the newest first, then by path.
func newer(a, b Stamped) int {
	if c := b.Mtime.Compare(a.Mtime); c != 0 {
		return c
	}
	return cmp.Compare(a.Abs, b.Abs)
}

// Newest returns the n first of files in the order newest first, then by
// path (files that could not be stat'ed last), reordering files. Only
// those n are sorted: the others are passed over with one comparison each
// against the n-th kept so far, most of them.
func Newest(files []Stamped, n int) []Stamped {
	if n <= 0 {
		return nil
	}
	if len(files) <= 4*n {
		slices.SortFunc(files, newer)
		return files[:min(n, len(files))]
	}
	// files[:n] is a heap with the last (oldest) of the n newest seen on
	// top; a newer file takes its place.
	top := files[:n]
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(top, i)
	}
	for i := n; i < len(files); i++ {
		if newer(files[i], top[0]) < 0 {
			top[0], files[i] = files[i], top[0]
			siftDown(top, 0)
		}
	}
	slices.SortFunc(top, newer)
	return top
}

// siftDown restores Newest's heap (the last in its order on top) below i.
func siftDown(h []Stamped, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && newer(h[c+1], h[c]) > 0 {
			c++
		}
		if newer(h[c], h[i]) <= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
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
