package complete

import (
	"hash/maphash"
	"strings"
)

// The prefix cache: per document, the last suggestions with the prefix
// they were made for, so that typing through a shown suggestion (the
// prefix grows by what the suggestion starts with) answers from memory.
// A document's cache holds at most cacheEntries suggestions of at most
// maxSuggestion bytes each, plus a fixed 40 bytes of key per entry: it
// never holds the document's text.
const (
	cacheEntries  = 8
	maxSuggestion = 4096
	// keyTail and keyHead are how much of the prefix's end and the
	// suffix's start an entry's key hashes (with the prefix's length).
	keyTail = 2048
	keyHead = 256
)

type cacheEntry struct {
	prefixLen  int
	prefixHash uint64 // of the keyTail bytes before prefixLen
	suffixHash uint64 // of the keyHead bytes of the suffix
	text       string
}

// docCache is one document's entries, the newest last.
type docCache struct {
	entries []cacheEntry
}

var cacheSeed = maphash.MakeSeed()

func tailHash(text string, end int) uint64 {
	return maphash.String(cacheSeed, text[max(0, end-keyTail):end])
}

func headHash(text string, start int) uint64 {
	return maphash.String(cacheSeed, text[start:min(len(text), start+keyHead)])
}

// lookup finds a suggestion made at an earlier cursor of this text whose
// start the user has typed since: what is left of it. ok is false when
// none fits.
func (c *docCache) lookup(text string, offset int) (rest string, ok bool) {
	if c == nil {
		return "", false
	}
	var sh uint64
	shDone := false
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		typed := offset - e.prefixLen
		if typed < 0 || typed >= len(e.text) {
			continue
		}
		if !strings.HasPrefix(e.text, text[e.prefixLen:offset]) {
			continue
		}
		if !shDone {
			sh, shDone = headHash(text, offset), true
		}
		if sh != e.suffixHash || tailHash(text, e.prefixLen) != e.prefixHash {
			continue
		}
		return e.text[typed:], true
	}
	return "", false
}

// store keeps a suggestion made at offset.
func (c *docCache) store(text string, offset int, suggestion string) {
	if suggestion == "" || len(suggestion) > maxSuggestion {
		return
	}
	e := cacheEntry{prefixLen: offset, prefixHash: tailHash(text, offset), suffixHash: headHash(text, offset), text: suggestion}
	if len(c.entries) >= cacheEntries {
		copy(c.entries, c.entries[1:])
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(c.entries, e)
}
