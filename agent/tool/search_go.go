package tool

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"sync"
	"syscall"
)

// goSearcher is the searcher used where ripgrep is not installed: a walk
// of the directory tree in Go, and a parallel search of the files it finds.
type goSearcher struct{}

func (goSearcher) name() string { return "go" }

func (goSearcher) files(ctx context.Context, root, dir string) ([]string, error) {
	var out []string
	err := walkFiles(ctx, root, dir, func(abs string) error {
		out = append(out, abs)
		return nil
	})
	return out, err
}

func (goSearcher) grep(ctx context.Context, root, dir string, q *grepQuery) ([]fileHits, error) {
	m, err := compileLineMatcher(q.pattern)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		// A file named on its own is searched whatever the ignore files say.
		var buf []byte
		if h, ok := searchFile(m, q, dir, &buf); ok {
			return []fileHits{h}, nil
		}
		return nil, nil
	}
	paths := make(chan string, 256)
	var (
		mu   sync.Mutex
		hits []fileHits
		wg   sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for abs := range paths {
				if h, ok := searchFile(m, q, abs, &buf); ok {
					mu.Lock()
					hits = append(hits, h)
					mu.Unlock()
				}
			}
		}()
	}
	err = walkFiles(ctx, root, dir, func(abs string) error {
		if !q.includes(dir, abs) {
			return nil
		}
		select {
		case paths <- abs:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(paths)
	wg.Wait()
	return hits, err
}

// searchFile searches one file, reading it into *buf (reused between
// files). Binary files (any NUL byte) are skipped.
func searchFile(m *lineMatcher, q *grepQuery, abs string, buf *[]byte) (fileHits, bool) {
	data, err := readInto(abs, buf)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return fileHits{}, false
	}
	h := fileHits{abs: abs}
	h.count = m.scan(data, func(no int, line []byte) {
		if len(h.lines) < q.perFile {
			h.lines = append(h.lines, hitLine{no: no, text: string(line[:min(len(line), hitLineMax+8)])})
		}
	})
	return h, h.count > 0
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
