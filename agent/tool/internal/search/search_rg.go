package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/darman-dev/darman/internal/child"
)

// rg is the Searcher that runs rg, with the flags that make it follow
// the rules of ignore.go: hidden files searched, .git skipped, .gitignore
// read with or without a repository, no global or per-repository excludes,
// .darmanignore as an ignore file of the lowest precedence, no
// configuration file, no transcoding.
type rg struct {
	path string
}

func (rg) Name() string { return "rg" }

// command prepares rg to search dir: from the root, with dir relative to
// it, when dir is inside the workspace (so .darmanignore's patterns apply
// relative to the root), else from dir itself.
func (r rg) command(root, dir string, args ...string) *exec.Cmd {
	base := []string{"--no-config", "--hidden", "--no-require-git", "--no-ignore-global", "--no-ignore-exclude",
		"--glob", "!.git", "--no-messages", "--encoding", "none"}
	cwd := dir
	var target []string
	if within(root, dir) {
		cwd = root
		if _, err := os.Stat(filepath.Join(root, ".darmanignore")); err == nil {
			base = append(base, "--ignore-file", filepath.Join(root, ".darmanignore"))
		}
		if dir != root {
			target = []string{"--", dir[len(root)+1:]}
		}
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		cwd, target = filepath.Dir(dir), []string{"--", filepath.Base(dir)}
	}
	cmd := exec.Command(r.path, append(append(base, args...), target...)...)
	cmd.Dir = cwd
	return cmd
}

// run runs cmd until ctx ends and passes its output to read, which must
// consume it. rg runs as a child (see internal/child), so that a search
// of a large tree does not go on after darman has died, in darman's
// session (child.Options.SameSession: its arguments are darman's, it runs
// nothing of the workspace, and a session of its own made it slower). rg exits 1 when
// nothing matched; only exit code 2 is a failure.
func run(ctx context.Context, cmd *exec.Cmd, read func(io.Reader) error) error {
	p, err := child.Start(cmd, child.Options{Name: "rg", SameSession: true})
	if err != nil {
		return fmt.Errorf("run rg: %w", err)
	}
	defer p.Stdout.Close()
	var stderr bytes.Buffer
	var stderrRead sync.WaitGroup
	stderrRead.Go(func() { stderr.ReadFrom(p.Stderr) })
	defer p.Stderr.Close()
	stop := context.AfterFunc(ctx, func() { p.Stop(0) })
	readErr := read(p.Stdout)
	io.Copy(io.Discard, p.Stdout)
	<-p.Exited() // its own end, or Stop's once ctx has ended
	stop()
	p.Stop(0)
	stderrRead.Wait()
	code, signal := p.ExitCode()
	switch {
	case readErr != nil:
		return readErr
	case signal == "" && (code == 0 || code == 1):
		return nil
	}
	return fmt.Errorf("rg: %v: %s", p.State(), strings.TrimSpace(stderr.String()))
}

// Grep asks rg for each file's count of matching lines only: the lines
// themselves are wanted for the newest files alone (Query.Lines), and a
// big tree's every line through the pipe and parsed cost the tool more
// than rg's search. Those files' lines are then read in Go, with the
// matcher that gives the Go search the same lines as rg.
func (r rg) Grep(ctx context.Context, root, dir string, q *Query) ([]FileHits, error) {
	pattern, err := rustRegex(q.Pattern)
	if err != nil {
		return nil, err
	}
	m, err := compileLineMatcher(q.Pattern)
	if err != nil {
		return nil, err
	}
	args := []string{"--count", "--with-filename", "--null", "--color", "never", "--regexp", pattern}
	postFilter := q.Include != nil
	if q.Include != nil && !strings.Contains(q.IncludeRaw, "/") && !strings.Contains(q.IncludeRaw, ":") {
		// A name-only include is a file type: rg applies types after the
		// ignore files, as Go does, where --glob would override them.
		args = append(args, "--type-add", "darman:"+q.IncludeRaw, "--type", "darman")
		postFilter = false
	}
	cmd := r.command(root, dir, args...)
	var hits []FileHits
	err = run(ctx, cmd, func(rd io.Reader) error {
		br := bufio.NewReaderSize(rd, 64<<10)
		prefix := cmd.Dir + string(filepath.Separator)
		for {
			line, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				long := append([]byte(nil), line...)
				for errors.Is(err, bufio.ErrBufferFull) {
					line, err = br.ReadSlice('\n')
					long = append(long, line...)
				}
				line = long
			}
			// path NUL count; anything else is a note, such as "path:
			// WARNING: stopped searching binary file after match".
			path, num, ok := bytes.Cut(bytes.TrimSuffix(line, []byte{'\n'}), []byte{0})
			if n, nerr := strconv.Atoi(string(num)); ok && nerr == nil && n > 0 {
				abs := prefix + string(path)
				if bytes.HasPrefix(path, []byte("./")) || bytes.HasPrefix(path, []byte("../")) {
					abs = filepath.Join(cmd.Dir, string(path))
				}
				hits = append(hits, FileHits{Abs: abs, Count: n})
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	// rg decides a file is binary by a NUL byte in what it has read so
	// far (its first read is 64 KiB); the Go search, by a NUL anywhere.
	// Agree with the latter.
	// One stat per file, on every core, serves this and SortHits.
	binary := make([]bool, len(hits))
	forEachParallel(len(hits), func(i int) {
		info, err := os.Stat(hits[i].Abs)
		if err != nil {
			return
		}
		hits[i].Mtime = info.ModTime()
		binary[i] = info.Size() > 32<<10 && hasNUL(hits[i].Abs)
	})
	kept := hits[:0]
	for i, h := range hits {
		if postFilter && !q.Includes(dir, h.Abs) || binary[i] {
			continue
		}
		kept = append(kept, h)
	}
	SortHits(kept)
	var buf []byte
	for i, lines := 0, 0; i < len(kept) && lines < q.Lines; i++ {
		if h, ok := searchFile(m, q, kept[i].Abs, &buf); ok {
			kept[i].Lines = h.Lines
			lines += len(h.Lines)
		}
	}
	return kept, nil
}

// hasNUL reports whether a file (larger than rg's first read) holds a
// NUL byte.
func hasNUL(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if bytes.IndexByte(buf[:n], 0) >= 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}
