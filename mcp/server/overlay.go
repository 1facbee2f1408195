package server

import (
	"context"
	"os"
	"sync"
)

// overlay is the pool's file reader: the disk, except for files a tool
// is formatting from text a client sent, which read as that text for the
// duration of the call. Calls on one path are serialized by lock.
type overlay struct {
	mu    sync.Mutex
	texts map[string]string
	locks sync.Map // path -> *sync.Mutex
}

func newOverlay() *overlay { return &overlay{texts: map[string]string{}} }

func (o *overlay) ReadFile(_ context.Context, path string) ([]byte, error) {
	o.mu.Lock()
	text, ok := o.texts[path]
	o.mu.Unlock()
	if ok {
		return []byte(text), nil
	}
	return os.ReadFile(path)
}

// Overlaid says whether path reads as a client's text rather than the
// disk's (diagnostics.Overlay).
func (o *overlay) Overlaid(path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.texts[path]
	return ok
}

// with makes path read as text while fn runs.
func (o *overlay) with(path, text string, fn func() error) error {
	l, _ := o.locks.LoadOrStore(path, &sync.Mutex{})
	l.(*sync.Mutex).Lock()
	defer l.(*sync.Mutex).Unlock()
	o.mu.Lock()
	o.texts[path] = text
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.texts, path)
		o.mu.Unlock()
	}()
	return fn()
}
