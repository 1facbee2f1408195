package search

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// ignoreNames are the entries whose presence changes a directory's frame.
var ignoreNames = map[string]bool{".rgignore": true, ".ignore": true, ".gitignore": true, ".git": true}

// walkCheckEvery is how many entries of a directory the walk hands on
// between two looks at whether it was cancelled.
const walkCheckEvery = 64

// walkFile is a file the walk found, handed to its callback while the
// directory holding it is open.
type walkFile struct {
	Abs  string
	name string
	dir  *os.File
}

// ModTime stats the file through its open directory (no lookup of the
// whole path again); the zero time if it cannot be stat'ed.
func (f walkFile) ModTime() time.Time {
	return modTimeAt(f.dir, f.name, f.Abs)
}

// walkFiles calls fn with every file under dir that the ignore rules keep
// (see ignore.go), in no particular order, from several goroutines at once
// (a directory at a time each, on every core): worker, below
// runtime.GOMAXPROCS(0), says which, so fn may keep what it gathers per
// worker without a lock. dir itself is walked even if a rule above it
// ignores it. It stops at the first error fn returns, or when ctx is done;
// directories it cannot read are skipped.
func walkFiles(ctx context.Context, root, dir string, fn func(worker int, f walkFile) error) error {
	w := &walker{ig: newIgnorer(root), fn: fn, ctx: ctx}
	w.cond = sync.NewCond(&w.mu)
	w.stack = []walkDir{{dir, ancestorFrames(dir)}}
	var wg sync.WaitGroup
	for i := range runtime.GOMAXPROCS(0) {
		wg.Go(func() { w.work(i) })
	}
	wg.Wait()
	if w.err != nil {
		return w.err
	}
	return ctx.Err()
}

// walkDir is a directory still to list, with the frame of its parent.
type walkDir struct {
	dir    string
	parent *ignoreFrame
}

// walker is the state the workers of walkFiles share: the directories
// still to list, and how many workers are listing one (more may come from
// those).
type walker struct {
	ig  *ignorer
	fn  func(int, walkFile) error
	ctx context.Context

	mu    sync.Mutex
	cond  *sync.Cond
	stack []walkDir
	busy  int
	done  bool
	err   error
}

func (w *walker) work(worker int) {
	var subdirs []walkDir
	w.mu.Lock()
	for {
		for len(w.stack) == 0 && w.busy > 0 && !w.done {
			w.cond.Wait()
		}
		if w.done || len(w.stack) == 0 {
			w.done = true
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		it := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.busy++
		w.mu.Unlock()

		subdirs = subdirs[:0]
		err := w.ctx.Err()
		if err == nil {
			subdirs, err = w.list(worker, it, subdirs)
		}

		w.mu.Lock()
		w.busy--
		if err != nil && w.err == nil {
			w.err, w.done = err, true
		}
		w.stack = append(w.stack, subdirs...)
		switch {
		case len(subdirs) > 1:
			w.cond.Broadcast()
		case len(subdirs) == 1:
			w.cond.Signal()
		case w.busy == 0 && len(w.stack) == 0:
			w.cond.Broadcast() // the walk is over: wake the waiting
		}
	}
}

// list reads one directory: its files go to fn, its directories to the
// returned subdirs.
func (w *walker) list(worker int, it walkDir, subdirs []walkDir) ([]walkDir, error) {
	f, err := os.Open(it.dir)
	if err != nil {
		return subdirs, nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return subdirs, nil
	}
	var names map[string]bool
	for _, e := range entries {
		if ignoreNames[e.Name()] {
			if names == nil {
				names = make(map[string]bool, 4)
			}
			names[e.Name()] = true
		}
	}
	if names == nil {
		names = map[string]bool{}
	}
	frame := loadFrame(it.dir, it.parent, names)
	for i, e := range entries {
		// A cancelled walk stops inside a big directory too, not after it:
		// grep reads every file handed on.
		if i%walkCheckEvery == walkCheckEvery-1 {
			if err := w.ctx.Err(); err != nil {
				return subdirs, err
			}
		}
		name := e.Name()
		t := e.Type()
		if name == ".git" || t&fs.ModeSymlink != 0 || !t.IsDir() && !t.IsRegular() {
			continue
		}
		abs := it.dir + string(filepath.Separator) + name
		if it.dir == string(filepath.Separator) {
			abs = it.dir + name
		}
		if w.ig.ignored(frame, abs, t.IsDir()) {
			continue
		}
		if t.IsDir() {
			subdirs = append(subdirs, walkDir{abs, frame})
			continue
		}
		if err := w.fn(worker, walkFile{Abs: abs, name: name, dir: f}); err != nil {
			return subdirs, err
		}
	}
	return subdirs, nil
}
