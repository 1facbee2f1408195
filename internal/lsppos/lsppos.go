// Package lsppos is darman's one converter between byte offsets in a text
// and LSP positions: where the lines start (they end at "\n", "\r\n" or a
// lone "\r", as the specification says) and how many units a line's
// characters count, in UTF-16 code units (LSP's default), UTF-8 bytes or
// UTF-32 runes. Bytes that are not valid UTF-8 count as one unit each, as
// the U+FFFD an editor shows for them.
//
// Both sides of darman's LSP use it: the server's documents
// (server/lsp/text), which refuse a position that is not on their text,
// and the language-server client (diagnostics/lsp), which clamps one as
// the specification tells a client to. The functions are pure.
package lsppos

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Encoding is the unit in which a position's character counts.
type Encoding int

const (
	// UTF16 counts UTF-16 code units: the LSP default. A rune outside the
	// Basic Multilingual Plane (an emoji) counts two.
	UTF16 Encoding = iota
	// UTF8 counts bytes.
	UTF8
	// UTF32 counts runes.
	UTF32
)

func (e Encoding) String() string {
	switch e {
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	}
	return "utf-16"
}

// LineStarts appends to starts the offsets in (from, to] of text where a
// line starts: just after "\n", or after a "\r" not followed by "\n".
func LineStarts(text string, from, to int, starts []int) []int {
	if part := text[from:to]; strings.IndexByte(part, '\r') < 0 {
		// Only "\n" ends lines: found a word at a time, several times
		// faster on a big file than the loop below (the language-server
		// client maps every file a workspace symbol search names).
		starts = slices.Grow(starts, strings.Count(part, "\n"))
		for off := 0; ; {
			i := strings.IndexByte(part[off:], '\n')
			if i < 0 {
				return starts
			}
			off += i + 1
			starts = append(starts, from+off)
		}
	}
	for i := from; i < to; i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// LineEnd is the offset where line i of text ends, before its line break;
// starts are the text's line starts, starts[0] == 0.
func LineEnd(text string, starts []int, i int) int {
	if i+1 >= len(starts) {
		return len(text)
	}
	end := starts[i+1] - 1 // the '\n' or lone '\r'
	if end > starts[i] && text[end] == '\n' && text[end-1] == '\r' {
		end--
	}
	return end
}

// Seek walks one line's text (without its line break) to character want:
// off is where the count reaches want, or the start of the rune whose
// units would pass it, or len(line) when the line is shorter; units is the
// count at off, so units == want exactly when want falls on a rune's start
// or the line's end.
func Seek(line string, want int, enc Encoding) (off, units int) {
	for off < len(line) && units < want {
		r, size := utf8.DecodeRuneInString(line[off:])
		n := runeUnits(r, size, enc)
		if units+n > want {
			break
		}
		units += n
		off += size
	}
	return off, units
}

// Count is how many units the runes of line that start before n count;
// ok is false when n falls inside a rune.
func Count(line string, n int, enc Encoding) (units int, ok bool) {
	off := 0
	for off < n {
		r, size := utf8.DecodeRuneInString(line[off:])
		if off+size > n {
			return units, false
		}
		units += runeUnits(r, size, enc)
		off += size
	}
	return units, true
}

// runeUnits is how many units of enc one decoded rune of size bytes takes.
func runeUnits(r rune, size int, enc Encoding) int {
	switch enc {
	case UTF8:
		return size
	case UTF32:
		return 1
	}
	if r >= 0x10000 {
		return 2
	}
	return 1
}
