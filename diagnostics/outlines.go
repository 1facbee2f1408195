package diagnostics

import (
	"bytes"
	"sync"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// outlines keeps the last outline of each file a server gave, with the
// text it describes: a file's outline depends on nothing but its text,
// so while the same server process (a restart is a new client) has the
// same text for it (unchanged on disk, or the open document unchanged:
// Outline reads it before asking) the server would answer the same. A
// file not open in the server and read from disk is not even read again
// while its identity on disk (fileID) stays.
// package_api asks every file of a package each time; on Go's src one
// outline request per file made it ten times slower than gopls mcp's
// answer from the package in memory.
type outlines struct {
	mu    sync.Mutex
	files map[string]outline
	bytes int // of the texts kept
}

// outline is one file's cached outline.
type outline struct {
	c    *lsp.Client
	text []byte
	syms []Symbol
	// id is the file's on disk when the text is the disk's, read between
	// two stats that agree; zero otherwise.
	id fileID
}

// fileID is a file's identity and the marks of its last change (see
// fileIDOf).
type fileID struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// Bounds of the cache: the texts of a few hundred files of Go's src
// (about 30 KB each), a package_api of its largest packages a few times
// over.
const (
	maxOutlines     = 2000
	maxOutlineBytes = 16 << 20
)

// get is the outline c gave of path when it had text, if cached: a
// copy of its top level, which callers may sort.
func (o *outlines) get(c *lsp.Client, path string, text []byte) ([]Symbol, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	got, ok := o.files[path]
	if !ok || got.c != c || !bytes.Equal(got.text, text) {
		return nil, false
	}
	return append([]Symbol(nil), got.syms...), true
}

// unchanged is the outline c gave of path, and its text, when the file on
// disk is still the one it was read from (id): no read needed.
func (o *outlines) unchanged(c *lsp.Client, path string, id fileID) ([]Symbol, []byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	got, ok := o.files[path]
	if !ok || got.c != c || got.id == (fileID{}) || got.id != id {
		return nil, nil, false
	}
	return append([]Symbol(nil), got.syms...), got.text, true
}

// put keeps c's outline of path's text, read from the disk's file id when
// that is not zero.
func (o *outlines) put(c *lsp.Client, path string, text []byte, syms []Symbol, id fileID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files == nil {
		o.files = map[string]outline{}
	}
	if old, ok := o.files[path]; ok {
		o.bytes -= len(old.text)
		delete(o.files, path)
	}
	for k, old := range o.files { // any ones: the cache only saves requests
		if len(o.files) < maxOutlines && o.bytes+len(text) <= maxOutlineBytes {
			break
		}
		o.bytes -= len(old.text)
		delete(o.files, k)
	}
	o.files[path] = outline{c: c, text: text, syms: append([]Symbol(nil), syms...), id: id}
	o.bytes += len(text)
}
