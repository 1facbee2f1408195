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
// Outline reads it before asking) the server would answer the same.
// package_api asks every file of a package each time; on Go's src one
// outline request per file made it ten times slower than gopls mcp's
// answer from the package in memory.
type outlines struct {
	mu    sync.Mutex
	files map[string]outline
}

// outline is one file's cached outline.
type outline struct {
	c    *lsp.Client
	text []byte
	syms []Symbol
}

// maxOutlines bounds the cache: a package_api of the largest packages
// of Go's src, a few times over.
const maxOutlines = 2000

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

// put keeps c's outline of path's text.
func (o *outlines) put(c *lsp.Client, path string, text []byte, syms []Symbol) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files == nil {
		o.files = map[string]outline{}
	}
	if _, ok := o.files[path]; !ok && len(o.files) >= maxOutlines {
		for k := range o.files { // any one: the cache only saves requests
			delete(o.files, k)
			break
		}
	}
	o.files[path] = outline{c: c, text: text, syms: append([]Symbol(nil), syms...)}
}
