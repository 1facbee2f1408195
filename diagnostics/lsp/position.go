package lsp

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Encoding is the unit in which a Position's Character counts.
type Encoding int

const (
	// UTF16 counts UTF-16 code units: the LSP default, and what a server
	// uses when it does not say otherwise. A rune outside the Basic
	// Multilingual Plane (an emoji) counts two.
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

// ParseEncoding reads a positionEncoding value; empty means UTF-16.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "", "utf-16":
		return UTF16, nil
	case "utf-8":
		return UTF8, nil
	case "utf-32":
		return UTF32, nil
	}
	return UTF16, fmt.Errorf("the server chose position encoding %q, which darman did not offer (it offers utf-16, utf-8, utf-32)", s)
}

// Mapper converts between byte offsets in one document's content and LSP
// positions, and to the 1-based line and rune column people read. Lines end
// at "\n", "\r\n" or a lone "\r", as the specification says. A Mapper is
// immutable and safe for concurrent use.
type Mapper struct {
	content []byte
	// starts holds the offset where each line begins.
	starts []int
}

// NewMapper indexes content's lines. content must not change afterwards.
func NewMapper(content []byte) *Mapper {
	starts := []int{0}
	for i := 0; i < len(content); i++ {
		switch content[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(content) && content[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &Mapper{content: content, starts: starts}
}

// Content returns the text the Mapper indexes.
func (m *Mapper) Content() []byte { return m.content }

// Lines is the number of lines; text ending in a line break has an empty
// last line.
func (m *Mapper) Lines() int { return len(m.starts) }

// lineEnd is the offset just past line i's text, before its line break.
func (m *Mapper) lineEnd(i int) int {
	if i+1 >= len(m.starts) {
		return len(m.content)
	}
	end := m.starts[i+1] - 1 // the '\n' or lone '\r'
	if end > m.starts[i] && m.content[end] == '\n' && m.content[end-1] == '\r' {
		end--
	}
	return end
}

// Offset converts a position to a byte offset. A character past the end of
// its line means the end of the line (the specification's rule); a position
// inside a UTF-16 surrogate pair or a multi-byte sequence rounds down to
// the start of the rune. A line past the last one is an error.
func (m *Mapper) Offset(p Position, enc Encoding) (int, error) {
	if int64(p.Line) >= int64(len(m.starts)) {
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", p.Line, len(m.starts))
	}
	start, end := m.starts[p.Line], m.lineEnd(int(p.Line))
	want := int(p.Character)
	units := 0
	for off := start; off < end; {
		if units >= want {
			return off, nil
		}
		r, size := utf8.DecodeRune(m.content[off:end])
		units += runeUnits(r, size, enc)
		if units > want {
			return off, nil
		}
		off += size
	}
	return end, nil
}

// Position converts a byte offset to a position. An offset inside a line
// break is the end of its line; an offset inside a multi-byte rune rounds
// down to the rune's start.
func (m *Mapper) Position(offset int, enc Encoding) (Position, error) {
	line, off, err := m.locate(offset)
	if err != nil {
		return Position{}, err
	}
	units := 0
	for o := m.starts[line]; o < off; {
		r, size := utf8.DecodeRune(m.content[o:off])
		units += runeUnits(r, size, enc)
		o += size
	}
	return Position{Line: uint32(line), Character: uint32(units)}, nil
}

// locate finds offset's line and clamps it out of a line break and to a
// rune start.
func (m *Mapper) locate(offset int) (line, off int, err error) {
	if offset < 0 || offset > len(m.content) {
		return 0, 0, fmt.Errorf("offset %d is outside the document (%d bytes)", offset, len(m.content))
	}
	line = sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > offset }) - 1
	start, end := m.starts[line], m.lineEnd(line)
	off = min(offset, end)
	for off > start && off < end && !utf8.RuneStart(m.content[off]) {
		off--
	}
	return line, off, nil
}

// runeUnits is how many units of enc one decoded rune takes.
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

// LineColumn converts a byte offset to the 1-based line and 1-based column
// people read, the column counting runes.
func (m *Mapper) LineColumn(offset int) (line, column int, err error) {
	p, err := m.Position(offset, UTF32)
	if err != nil {
		return 0, 0, err
	}
	return int(p.Line) + 1, int(p.Character) + 1, nil
}

// OffsetOf converts a 1-based line and rune column to a byte offset, with
// the same clamping as Offset.
func (m *Mapper) OffsetOf(line, column int) (int, error) {
	if line < 1 || column < 1 {
		return 0, fmt.Errorf("line %d, column %d: lines and columns start at 1", line, column)
	}
	return m.Offset(Position{Line: uint32(line - 1), Character: uint32(column - 1)}, UTF32)
}

// ApplyEdits returns the content with edits applied. The edits' ranges
// refer to the original content and must not overlap, as the
// specification requires of one TextEdit[]; edits at the same position
// apply in the order given.
func (m *Mapper) ApplyEdits(edits []TextEdit, enc Encoding) ([]byte, error) {
	type span struct {
		start, end, order int
		text              string
	}
	spans := make([]span, 0, len(edits))
	for i, e := range edits {
		s, err := m.Offset(e.Range.Start, enc)
		if err != nil {
			return nil, fmt.Errorf("edit %d start: %w", i, err)
		}
		end, err := m.Offset(e.Range.End, enc)
		if err != nil {
			return nil, fmt.Errorf("edit %d end: %w", i, err)
		}
		if end < s {
			return nil, fmt.Errorf("edit %d ends before it starts", i)
		}
		spans = append(spans, span{s, end, i, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var out []byte
	last := 0
	for i, s := range spans {
		if s.start < last {
			return nil, fmt.Errorf("edits %d and %d overlap", spans[i-1].order, s.order)
		}
		out = append(out, m.content[last:s.start]...)
		out = append(out, s.text...)
		last = s.end
	}
	return append(out, m.content[last:]...), nil
}
