package lsp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMapperOffsetAndPosition(t *testing.T) {
	// "a😀b" : the emoji is 4 bytes, 2 UTF-16 units, 1 rune.
	text := "x\r\na😀b\rlast\n"
	m := NewMapper([]byte(text))
	if got := m.Lines(); got != 4 {
		t.Fatalf("Lines = %d, want 4 (CRLF, lone CR and a final LF each end a line)", got)
	}
	bOffset := strings.Index(text, "b")
	tests := []struct {
		name string
		pos  Position
		enc  Encoding
		want int
	}{
		{"line start after CRLF", Position{Line: 1, Character: 0}, UTF16, 3},
		{"after surrogate pair utf-16", Position{Line: 1, Character: 3}, UTF16, bOffset},
		{"after emoji utf-8", Position{Line: 1, Character: 5}, UTF8, bOffset},
		{"after emoji utf-32", Position{Line: 1, Character: 2}, UTF32, bOffset},
		{"inside surrogate pair rounds down", Position{Line: 1, Character: 2}, UTF16, 4},
		{"inside utf-8 sequence rounds down", Position{Line: 1, Character: 3}, UTF8, 4},
		{"past line end clamps before CR", Position{Line: 1, Character: 99}, UTF16, bOffset + 1},
		{"past CRLF line end clamps before CR", Position{Line: 0, Character: 5}, UTF16, 1},
		{"line after lone CR", Position{Line: 2, Character: 2}, UTF16, bOffset + 4},
		{"empty last line", Position{Line: 3, Character: 0}, UTF16, len(text)},
	}
	for _, tt := range tests {
		got, err := m.Offset(tt.pos, tt.enc)
		if err != nil || got != tt.want {
			t.Errorf("%s: Offset(%v, %v) = %d, %v; want %d", tt.name, tt.pos, tt.enc, got, err, tt.want)
		}
	}
	if _, err := m.Offset(Position{Line: 4}, UTF16); err == nil {
		t.Error("Offset past the last line: no error")
	}

	posTests := []struct {
		offset int
		enc    Encoding
		want   Position
	}{
		{bOffset, UTF16, Position{Line: 1, Character: 3}},
		{bOffset, UTF8, Position{Line: 1, Character: 5}},
		{bOffset, UTF32, Position{Line: 1, Character: 2}},
		{2, UTF16, Position{Line: 0, Character: 1}}, // between CR and LF: end of line 0
		{5, UTF16, Position{Line: 1, Character: 1}}, // inside the emoji: its start
		{len(text), UTF16, Position{Line: 3, Character: 0}},
	}
	for _, tt := range posTests {
		got, err := m.Position(tt.offset, tt.enc)
		if err != nil || got != tt.want {
			t.Errorf("Position(%d, %v) = %v, %v; want %v", tt.offset, tt.enc, got, err, tt.want)
		}
	}
	if _, err := m.Position(len(text)+1, UTF16); err == nil {
		t.Error("Position past the end: no error")
	}
	line, col, err := m.LineColumn(bOffset)
	if err != nil || line != 2 || col != 3 {
		t.Errorf("LineColumn(b) = %d:%d, %v; want 2:3", line, col, err)
	}
	if off, err := m.OffsetOf(2, 3); err != nil || off != bOffset {
		t.Errorf("OffsetOf(2, 3) = %d, %v; want %d", off, err, bOffset)
	}
	if _, err := m.OffsetOf(0, 1); err == nil {
		t.Error("OffsetOf(0, 1): no error for a zero line")
	}
}

func TestApplyEdits(t *testing.T) {
	m := NewMapper([]byte("héllo\r\nwörld\n"))
	out, err := m.ApplyEdits([]TextEdit{
		{Range: Range{Start: Position{Line: 1, Character: 0}, End: Position{Line: 1, Character: 5}}, NewText: "there"},
		{Range: Range{Start: Position{Line: 0, Character: 1}, End: Position{Line: 0, Character: 2}}, NewText: "e"},
		{Range: Range{Start: Position{Line: 0, Character: 0}, End: Position{Line: 0, Character: 0}}, NewText: ">"},
	}, UTF16)
	if err != nil || string(out) != ">hello\r\nthere\n" {
		t.Fatalf("ApplyEdits = %q, %v", out, err)
	}
	_, err = m.ApplyEdits([]TextEdit{
		{Range: Range{Start: Position{Line: 0, Character: 0}, End: Position{Line: 0, Character: 3}}},
		{Range: Range{Start: Position{Line: 0, Character: 2}, End: Position{Line: 0, Character: 4}}},
	}, UTF16)
	if err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("overlapping edits: err = %v, want an overlap error", err)
	}
}

// FuzzMapperRoundTrip checks that every rune boundary survives a trip
// through a position in each encoding, and that nothing panics.
func FuzzMapperRoundTrip(f *testing.F) {
	f.Add("a😀b\r\nc\rd\n", 3)
	f.Add("\r\r\n\n", 1)
	f.Add("\xff\xfe x", 2)
	f.Fuzz(func(t *testing.T, text string, offset int) {
		m := NewMapper([]byte(text))
		for _, enc := range []Encoding{UTF16, UTF8, UTF32} {
			p, err := m.Position(offset, enc)
			if offset < 0 || offset > len(text) {
				if err == nil {
					t.Fatalf("Position(%d) of %d bytes: no error", offset, len(text))
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := m.Offset(p, enc)
			if err != nil {
				t.Fatalf("Offset(%v): %v", p, err)
			}
			if back > offset {
				t.Fatalf("%v: offset %d → %v → %d moved forward", enc, offset, p, back)
			}
			if utf8.ValidString(text) && utf8.RuneStart(byteAt(text, offset)) && !inLineBreak(text, offset) && back != offset {
				t.Fatalf("%v: rune boundary %d → %v → %d", enc, offset, p, back)
			}
		}
	})
}

func byteAt(s string, i int) byte {
	if i >= len(s) {
		return 0
	}
	return s[i]
}

func inLineBreak(s string, i int) bool {
	return i > 0 && i < len(s) && s[i] == '\n' && s[i-1] == '\r'
}
