// Package buffer holds the LSP front's view of the editor's open buffers:
// each as the client last described it (didOpen, didChange, didSave), by
// URI and by path, and the conversion between file: URIs and paths.
package buffer

import (
	"sync"

	"github.com/darman-dev/darman/server/lsp/text"
)

// Doc is an editor buffer as the client last described it. A Doc never
// changes once stored: a change stores a new one, so readers take it
// without holding a lock.
type Doc struct {
	URI        string
	Path       string // "" when the URI is not a file
	LanguageID string
	Version    int32
	Content    *text.Content
	// Lost is set when a change could not be applied: the buffer's
	// content is unknown until the client sends it whole again (a full
	// change, or closing and opening it), and readers use the disk.
	Lost error
}

// Set holds the open buffers, by URI and by path. Safe for concurrent use.
type Set struct {
	mu     sync.RWMutex
	byURI  map[string]*Doc
	byPath map[string]*Doc
}

// NewSet is an empty set.
func NewSet() *Set {
	return &Set{byURI: map[string]*Doc{}, byPath: map[string]*Doc{}}
}

// Get is the open buffer of uri, or nil.
func (d *Set) Get(uri string) *Doc {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byURI[uri]
}

// AtPath is the open buffer of a file, or nil.
func (d *Set) AtPath(path string) *Doc {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byPath[path]
}

// Put stores doc, in place of its URI's (and path's) last one.
func (d *Set) Put(doc *Doc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byURI[doc.URI] = doc
	if doc.Path != "" {
		d.byPath[doc.Path] = doc
	}
}

// Remove forgets uri's buffer (closed).
func (d *Set) Remove(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc := d.byURI[uri]; doc != nil {
		delete(d.byURI, uri)
		if d.byPath[doc.Path] == doc {
			delete(d.byPath, doc.Path)
		}
	}
}

// Known are the open buffers whose content is known (not Lost).
func (d *Set) Known() []*Doc {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]*Doc, 0, len(d.byURI))
	for _, doc := range d.byURI {
		if doc.Lost == nil {
			out = append(out, doc)
		}
	}
	return out
}
