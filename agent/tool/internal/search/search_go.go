package search

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
	"syscall"
)

// Go is the Searcher used where ripgrep is not installed: a walk
// of the directory tree in Go, and a parallel search of the files it finds.
type Go struct{}

func (Go) Name() string { return "go" }

func (Go) Files(ctx context.Context, root, dir string) ([]string, error) {
	per := make([][]string, runtime.GOMAXPROCS(0))
	err := walkFiles(ctx, root, dir, func(w int, f walkFile) error {
		per[w] = append(per[w], f.Abs)
		return nil
	})
	return slices.Concat(per...), err
}

// FilesStamped is Files of the files keep keeps, each with its
// modification time, taken as the walk finds it (the zero time for a file
// that cannot be stat'ed).
func (Go) FilesStamped(ctx context.Context, root, dir string, keep func(abs string) bool) ([]Stamped, error) {
	per := make([][]Stamped, runtime.GOMAXPROCS(0))
	err := walkFiles(ctx, root, dir, func(w int, f walkFile) error {
		if keep(f.Abs) {
			per[w] = append(per[w], Stamped{f.Abs, f.ModTime()})
		}
		return nil
	})
	return slices.Concat(per...), err
}

func (Go) Grep(ctx context.Context, root, dir string, q *Query) ([]FileHits, error) {
	m, err := compileLineMatcher(q.Pattern)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		// A file named on its own is searched whatever the ignore files say.
		var buf []byte
		if h, ok := searchFile(m, q, dir, &buf); ok {
			return []FileHits{h}, nil
		}
		return nil, nil
	}
	// The walk's workers search the files of the directory each lists.
	workers := runtime.GOMAXPROCS(0)
	per := make([][]FileHits, workers)
	bufs := make([][]byte, workers)
	err = walkFiles(ctx, root, dir, func(w int, f walkFile) error {
		if !q.Includes(dir, f.Abs) {
			return nil
		}
		if h, ok := searchFile(m, q, f.Abs, &bufs[w]); ok {
			h.Mtime = f.ModTime() // for SortHits, from the open directory
			per[w] = append(per[w], h)
		}
		return nil
	})
	return slices.Concat(per...), err
}

// searchFile searches one file, reading it into *buf (reused between
// files). Binary files (any NUL byte) are skipped.
func searchFile(m *lineMatcher, q *Query, abs string, buf *[]byte) (FileHits, bool) {
	data, err := readInto(abs, buf)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return FileHits{}, false
	}
	h := FileHits{Abs: abs}
	h.Count = m.scan(data, func(no int, line []byte) {
		if len(h.Lines) < q.Lines {
			h.Lines = append(h.Lines, HitLine{No: no, Text: string(line[:min(len(line), HitLineMax+8)])})
		}
	})
	return h, h.Count > 0
}

// readInto reads a whole file into *buf, growing it as needed. It uses
// the system calls directly: grep reads thousands of files, and an
// *os.File's set-up (poller, finalizer) would cost more than the reading.
func readInto(path string, buf *[]byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if cap(*buf) < 64<<10 {
		*buf = make([]byte, 0, 64<<10)
	}
	b := (*buf)[:0]
	for {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		b = b[:len(b)+n]
		// A regular file's short read is its end: no second call to see 0.
		if n == 0 || len(b) < cap(b) {
			break
		}
		b = append(b, 0)[:len(b)]
	}
	*buf = b
	return b, nil
}
