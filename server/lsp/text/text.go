// Package text holds the editor's view of a document: its content with a
// line index, the conversion between LSP positions (line and UTF-16 code
// unit) and byte offsets (internal/lsppos, the converter the language
// server client shares), and incremental edits.
//
// Lines end at "\n", "\r\n" or a lone "\r", as LSP says. A position is
// checked, never clamped: a line past the end, a character past the end of
// its line, or a character that falls inside a surrogate pair is an error,
// so an editor and darman that disagree about a document find out at once
// instead of editing the wrong place. Bytes that are not valid UTF-8 count
// as one UTF-16 unit each, as the U+FFFD an editor would show for them.
//
// A Content is immutable and safe for concurrent use; Apply returns a new
// one that shares nothing mutable with the old.
package text

import (
	"errors"
	"fmt"
	"sort"

	"github.com/darman-dev/darman/internal/lsppos"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// ErrPosition is what every out-of-range or misplaced position error
// matches with errors.Is.
var ErrPosition = errors.New("position out of range")

// Content is a document's text with the byte offset of each line's start.
type Content struct {
	text  string
	lines []int // lines[i] is the offset where line i starts; lines[0] == 0
}

// New returns the content of text.
func New(text string) *Content {
	return &Content{text: text, lines: lsppos.LineStarts(text, 0, len(text), []int{0})}
}

// String returns the whole text.
func (c *Content) String() string { return c.text }

// Len is the text's length in bytes.
func (c *Content) Len() int { return len(c.text) }

// LineCount is the number of lines; an empty text, or a text that ends with
// a line end, has an empty last line.
func (c *Content) LineCount() int { return len(c.lines) }

// Line returns line i without its line end.
func (c *Content) Line(i int) (string, error) {
	if i < 0 || i >= len(c.lines) {
		return "", fmt.Errorf("%w: line %d of a document with %d lines", ErrPosition, i, len(c.lines))
	}
	return c.text[c.lines[i]:c.lineEnd(i)], nil
}

// lineEnd is the offset where line i's content ends, before its line end.
func (c *Content) lineEnd(i int) int { return lsppos.LineEnd(c.text, c.lines, i) }

// Offset converts a position to a byte offset.
func (c *Content) Offset(p protocol.Position) (int, error) {
	line := int(p.Line)
	if line >= len(c.lines) {
		return 0, fmt.Errorf("%w: line %d of a document with %d lines", ErrPosition, line, len(c.lines))
	}
	start, end := c.lines[line], c.lineEnd(line)
	want := int(p.Character)
	off, units := lsppos.Seek(c.text[start:end], want, lsppos.UTF16)
	switch {
	case units == want:
		return start + off, nil
	case start+off < end:
		return 0, fmt.Errorf("%w: line %d, character %d is inside a surrogate pair", ErrPosition, line, want)
	}
	return 0, fmt.Errorf("%w: line %d has %d UTF-16 units, character %d is past its end", ErrPosition, line, units, want)
}

// Position converts a byte offset to a position. An offset inside a UTF-8
// sequence or between "\r" and "\n" has no position and is an error.
func (c *Content) Position(offset int) (protocol.Position, error) {
	if offset < 0 || offset > len(c.text) {
		return protocol.Position{}, fmt.Errorf("%w: offset %d of a %d-byte document", ErrPosition, offset, len(c.text))
	}
	line := sort.SearchInts(c.lines, offset+1) - 1
	start, end := c.lines[line], c.lineEnd(line)
	if offset > end {
		return protocol.Position{}, fmt.Errorf("%w: offset %d is inside the line end of line %d", ErrPosition, offset, line)
	}
	units, ok := lsppos.Count(c.text[start:end], offset-start, lsppos.UTF16)
	if !ok {
		return protocol.Position{}, fmt.Errorf("%w: offset %d is inside a UTF-8 sequence", ErrPosition, offset)
	}
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(units)}, nil
}

// Range converts byte offsets to a range.
func (c *Content) Range(start, end int) (protocol.Range, error) {
	s, err := c.Position(start)
	if err != nil {
		return protocol.Range{}, err
	}
	e, err := c.Position(end)
	if err != nil {
		return protocol.Range{}, err
	}
	return protocol.Range{Start: s, End: e}, nil
}

// Offsets converts a range to byte offsets; its end must not come before
// its start.
func (c *Content) Offsets(r protocol.Range) (start, end int, err error) {
	if start, err = c.Offset(r.Start); err != nil {
		return 0, 0, err
	}
	if end, err = c.Offset(r.End); err != nil {
		return 0, 0, err
	}
	if end < start {
		return 0, 0, fmt.Errorf("%w: the range ends (%d:%d) before it starts (%d:%d)", ErrPosition,
			r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
	}
	return start, end, nil
}

// End is the position just past the last character.
func (c *Content) End() protocol.Position {
	p, _ := c.Position(len(c.text))
	return p
}

// Replace returns the content with the bytes [start, end) replaced by
// text. The offsets must be valid (as Offsets returns them).
func (c *Content) Replace(start, end int, text string) (*Content, error) {
	if start < 0 || end < start || end > len(c.text) {
		return nil, fmt.Errorf("%w: bytes %d to %d of a %d-byte document", ErrPosition, start, end, len(c.text))
	}
	next := c.text[:start] + text + c.text[end:]
	delta := len(text) - (end - start)

	// Lines that start at or before rescan keep their offsets: their line
	// ends lie wholly before the edit. rescan is the start of the line
	// before the edited one, so that a "\r" just before the edit that now
	// meets a "\n" at its start is seen.
	line := sort.SearchInts(c.lines, start+1) - 1
	rescan := c.lines[max(line-1, 0)]
	keep := sort.SearchInts(c.lines, rescan+1)
	lines := make([]int, 0, len(c.lines)+4)
	lines = append(lines, c.lines[:keep]...)
	// Lines that start within (rescan, newEnd+1] are found again.
	newEnd := start + len(text)
	lines = lsppos.LineStarts(next, rescan, min(newEnd+1, len(next)), lines)
	// Lines that started two or more bytes past the old end keep their
	// line ends, which are untouched text, and move by delta.
	for _, s := range c.lines[sort.SearchInts(c.lines, end+2):] {
		lines = append(lines, s+delta)
	}
	return &Content{text: next, lines: lines}, nil
}

// Apply applies one change of a didChange notification: with a range it
// replaces that range, without one it replaces the whole text.
func (c *Content) Apply(r *protocol.Range, text string) (*Content, error) {
	if r == nil {
		return New(text), nil
	}
	start, end, err := c.Offsets(*r)
	if err != nil {
		return nil, err
	}
	return c.Replace(start, end, text)
}

// Edit returns one edit that turns c into next: the smallest run of whole
// lines that differ, so that an editor keeps its marks, folds and undo
// history on the lines around it.
func (c *Content) Edit(next string) protocol.TextEdit {
	old := c.text
	prefix := 0
	for prefix < len(old) && prefix < len(next) && old[prefix] == next[prefix] {
		prefix++
	}
	// Back to the start of the line the difference is on.
	start := c.lines[sort.SearchInts(c.lines, prefix+1)-1]

	suffix := 0
	for suffix < len(old)-start && suffix < len(next)-start &&
		old[len(old)-1-suffix] == next[len(next)-1-suffix] {
		suffix++
	}
	// Forward to the start of a line in old, so the edit ends at a line
	// start (or at the end of the text).
	end := len(old) - suffix
	if end < len(old) {
		l := sort.SearchInts(c.lines, end)
		if l < len(c.lines) {
			end = c.lines[l]
		} else {
			end = len(old)
		}
	}
	// The same tail comes off next: it lies within the common suffix.
	tail := len(old) - end
	r, _ := c.Range(start, end) // line starts are always valid positions
	return protocol.TextEdit{Range: r, NewText: next[start : len(next)-tail]}
}
