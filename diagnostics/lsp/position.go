package lsp

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/darman-dev/darman/internal/lsppos"
)

// Encoding is the unit in which a Position's Character counts: UTF16 (the
// LSP default, what a server uses when it does not say otherwise), UTF8
// (bytes) or UTF32 (runes).
type Encoding = lsppos.Encoding

// The encodings a server may choose.
const (
	UTF16 = lsppos.UTF16
	UTF8  = lsppos.UTF8
	UTF32 = lsppos.UTF32
)

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
// positions (internal/lsppos, the converter darman's LSP server shares),
// and to the 1-based line and rune column people read. Lines end at "\n",
// "\r\n" or a lone "\r", as the specification says. A Mapper is
// immutable and safe for concurrent use.
type Mapper struct {
	content string
	// starts holds the offset where each line begins.
	starts []int
}

// NewMapper indexes content's lines.
func NewMapper(content []byte) *Mapper {
	text := string(content)
	return &Mapper{content: text, starts: lsppos.LineStarts(text, 0, len(text), []int{0})}
}

// Content returns the text the Mapper indexes.
func (m *Mapper) Content() []byte { return []byte(m.content) }

// Lines is the number of lines; text ending in a line break has an empty
// last line.
func (m *Mapper) Lines() int { return len(m.starts) }

// Line is the text of 0-based line i without its line break; empty past
// the last line.
func (m *Mapper) Line(i int) string {
	if i < 0 || i >= len(m.starts) {
		return ""
	}
	return m.content[m.starts[i]:m.lineEnd(i)]
}

// lineEnd is the offset just past line i's text, before its line break.
func (m *Mapper) lineEnd(i int) int { return lsppos.LineEnd(m.content, m.starts, i) }

// Offset converts a position to a byte offset. A character past the end of
// its line means the end of the line (the specification's rule); a position
// inside a UTF-16 surrogate pair or a multi-byte sequence rounds down to
// the start of the rune. A line past the last one is an error.
func (m *Mapper) Offset(p Position, enc Encoding) (int, error) {
	if int64(p.Line) >= int64(len(m.starts)) {
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", p.Line, len(m.starts))
	}
	start, end := m.starts[p.Line], m.lineEnd(int(p.Line))
	off, _ := lsppos.Seek(m.content[start:end], int(p.Character), enc)
	return start + off, nil
}

// Position converts a byte offset to a position. An offset inside a line
// break is the end of its line; an offset inside a multi-byte rune rounds
// down to the rune's start.
func (m *Mapper) Position(offset int, enc Encoding) (Position, error) {
	line, off, err := m.locate(offset)
	if err != nil {
		return Position{}, err
	}
	start := m.starts[line]
	units, _ := lsppos.Count(m.content[start:m.lineEnd(line)], off-start, enc)
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
