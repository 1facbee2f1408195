package tool

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
)

// FileTimes remembers, for one session, which files the model has seen and
// what they held then, so that write does not overwrite a file the model
// never read, or one that changed since it read it (the user edited it, a
// command rewrote it). The zero value is ready to use; it is safe for
// concurrent use. The agent loop makes one per session.
type FileTimes struct {
	mu    sync.Mutex
	files map[string]stamp
}

// stamp is what a file was when the model last saw it.
type stamp struct {
	read    time.Time // when it was read
	modTime time.Time // its modification time on disk then; zero if it had none
	size    int64
	hash    [sha256.Size]byte
}

// Record notes that the model has seen content as the file at path (an
// absolute path): it read it, or wrote it.
func (f *FileTimes) Record(path string, content []byte) {
	s := stamp{read: time.Now(), size: int64(len(content)), hash: sha256.Sum256(content)}
	if info, err := os.Stat(path); err == nil {
		s.modTime = info.ModTime()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = make(map[string]stamp)
	}
	f.files[path] = s
}

// Check reports whether the model may overwrite the file at path, whose
// content is now current: it must have seen the file, and the file must
// hold what it saw. The error says what to do instead.
func (f *FileTimes) Check(path string, current []byte) error {
	f.mu.Lock()
	s, ok := f.files[path]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s already exists and you have not read it in this session: read it first, then write it", path)
	}
	if s.size == int64(len(current)) && s.hash == sha256.Sum256(current) {
		return nil
	}
	what := "its content differs from what you last saw"
	if info, err := os.Stat(path); err == nil && !info.ModTime().Equal(s.modTime) {
		what = fmt.Sprintf("it was modified at %s, after you read it at %s", info.ModTime().Format(time.TimeOnly), s.read.Format(time.TimeOnly))
	}
	return fmt.Errorf("%s has changed since you read it (%s): read it again and redo your change on what it holds now", path, what)
}
