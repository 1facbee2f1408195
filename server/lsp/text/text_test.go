package text

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

func pos(line, char int) protocol.Position {
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(char)}
}

func TestOffset(t *testing.T) {
	const doc = "héllo 𝄞x\r\nsecond\rthird\n\nlast"
	c := New(doc)
	ok := []struct {
		p    protocol.Position
		want int
	}{
		{pos(0, 0), 0},
		{pos(0, 1), 1},  // after h
		{pos(0, 2), 3},  // é is two bytes, one unit
		{pos(0, 6), 7},  // before 𝄞
		{pos(0, 8), 11}, // 𝄞 is four bytes, two units
		{pos(0, 9), 12}, // end of line 0, before \r\n
		{pos(1, 0), 14},
		{pos(1, 6), 20}, // end of "second", before the lone \r
		{pos(2, 0), 21},
		{pos(3, 0), 27}, // the empty line
		{pos(4, 4), len(doc)},
	}
	for _, tc := range ok {
		got, err := c.Offset(tc.p)
		if err != nil || got != tc.want {
			t.Errorf("Offset(%d:%d) = %d, %v; want %d", tc.p.Line, tc.p.Character, got, err, tc.want)
		}
		back, err := c.Position(got)
		if err != nil || back != tc.p {
			t.Errorf("Position(%d) = %v, %v; want %v", got, back, err, tc.p)
		}
	}
	bad := []struct {
		p    protocol.Position
		text string
	}{
		{pos(0, 7), "surrogate pair"},
		{pos(0, 10), "past its end"}, // one past the end of the line: not clamped
		{pos(1, 7), "past its end"},
		{pos(5, 0), "line 5 of a document with 5 lines"},
		{pos(3, 1), "past its end"},
	}
	for _, tc := range bad {
		_, err := c.Offset(tc.p)
		if !errors.Is(err, ErrPosition) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("Offset(%d:%d) error %v, want ErrPosition mentioning %q", tc.p.Line, tc.p.Character, err, tc.text)
		}
	}
}

func TestPositionErrors(t *testing.T) {
	c := New("é\r\nx")
	for _, off := range []int{-1, 1, 3, 6} {
		if _, err := c.Position(off); !errors.Is(err, ErrPosition) {
			t.Errorf("Position(%d) = %v, want ErrPosition", off, err)
		}
	}
}

func TestInvalidUTF8CountsOneUnitPerByte(t *testing.T) {
	c := New("a\xff\xfeb")
	got, err := c.Offset(pos(0, 3))
	if err != nil || got != 3 {
		t.Errorf("Offset = %d, %v; want 3", got, err)
	}
}

func TestApply(t *testing.T) {
	c := New("one\ntwo\nthree\n")
	steps := []struct {
		r    *protocol.Range
		text string
		want string
	}{
		{&protocol.Range{Start: pos(1, 0), End: pos(1, 3)}, "TWO", "one\nTWO\nthree\n"},
		{&protocol.Range{Start: pos(0, 3), End: pos(2, 0)}, " ", "one three\n"},
		{&protocol.Range{Start: pos(1, 0), End: pos(1, 0)}, "𝄞\r\n", "one three\n𝄞\r\n"},
		{&protocol.Range{Start: pos(1, 2), End: pos(1, 2)}, "!", "one three\n𝄞!\r\n"},
		{nil, "all new", "all new"},
	}
	for i, s := range steps {
		next, err := c.Apply(s.r, s.text)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if next.String() != s.want {
			t.Fatalf("step %d: %q, want %q", i, next.String(), s.want)
		}
		if !slices.Equal(next.lines, New(s.want).lines) {
			t.Fatalf("step %d: line index %v, want %v", i, next.lines, New(s.want).lines)
		}
		c = next
	}
	if _, err := c.Apply(&protocol.Range{Start: pos(0, 3), End: pos(0, 1)}, ""); !errors.Is(err, ErrPosition) {
		t.Errorf("a backwards range: %v", err)
	}
	if _, err := c.Apply(&protocol.Range{Start: pos(0, 0), End: pos(9, 0)}, ""); !errors.Is(err, ErrPosition) {
		t.Errorf("a range past the end: %v", err)
	}
}

// The line index stays right when an edit joins or splits a "\r\n".
func TestReplaceAcrossCRLF(t *testing.T) {
	cases := []struct{ doc, insert string }{
		{"a\rb", "\n"},    // "\r" + "\n" becomes one line end
		{"a\r\nb", "x"},   // split between \r and \n (by offsets)
		{"a\r", "\nb\r"},  // at the end
		{"\r\r\r", "\n"},  // runs of lone CRs
		{"x\ny\r", "\r"},  // after the last line end
		{"\n\n\n", "\r"},  // CR before LF at a line start
		{"ab\r\ncd", ""},  // deletion
		{"", "a\r\nb\rc"}, // into nothing
	}
	for _, tc := range cases {
		old := New(tc.doc)
		for start := 0; start <= len(tc.doc); start++ {
			for end := start; end <= len(tc.doc); end++ {
				next, err := old.Replace(start, end, tc.insert)
				if err != nil {
					t.Fatal(err)
				}
				if want := New(next.String()).lines; !slices.Equal(next.lines, want) {
					t.Errorf("%q[%d:%d] = %q: lines %v, want %v", tc.doc, start, end, tc.insert, next.lines, want)
				}
			}
		}
	}
}

func TestEdit(t *testing.T) {
	cases := []struct {
		old, next string
		want      protocol.TextEdit
	}{
		{"a\nb\nc\n", "a\nB\nc\n", protocol.TextEdit{Range: protocol.Range{Start: pos(1, 0), End: pos(2, 0)}, NewText: "B\n"}},
		{"a\nb\n", "a\nb\nc\n", protocol.TextEdit{Range: protocol.Range{Start: pos(2, 0), End: pos(2, 0)}, NewText: "c\n"}},
		{"same", "same", protocol.TextEdit{Range: protocol.Range{Start: pos(0, 0), End: pos(0, 0)}}},
		{"x", "", protocol.TextEdit{Range: protocol.Range{Start: pos(0, 0), End: pos(0, 1)}}},
	}
	for _, tc := range cases {
		got := New(tc.old).Edit(tc.next)
		if got != tc.want {
			t.Errorf("Edit(%q → %q) = %+v, want %+v", tc.old, tc.next, got, tc.want)
		}
		if applied := mustApply(t, tc.old, got); applied != tc.next {
			t.Errorf("applying the edit gives %q, want %q", applied, tc.next)
		}
	}
}

func mustApply(t *testing.T, old string, e protocol.TextEdit) string {
	t.Helper()
	c, err := New(old).Apply(&e.Range, e.NewText)
	if err != nil {
		t.Fatalf("the edit %+v does not apply to %q: %v", e, old, err)
	}
	return c.String()
}

// reference positions: every (line, character) that is a valid position,
// with its offset, computed independently of the Content code.
func referencePositions(doc string) map[protocol.Position]int {
	out := map[protocol.Position]int{}
	line, lineStart := 0, 0
	for i := 0; i <= len(doc); {
		// collect the line's content
		end := i
		for end < len(doc) && doc[end] != '\n' && doc[end] != '\r' {
			end++
		}
		units := 0
		for j := lineStart; ; {
			out[pos(line, units)] = j
			if j >= end {
				break
			}
			r, size := utf8.DecodeRuneInString(doc[j:end])
			units += len(utf16.Encode([]rune{r}))
			j += size
		}
		if end >= len(doc) {
			break
		}
		if doc[end] == '\r' && end+1 < len(doc) && doc[end+1] == '\n' {
			end++
		}
		i = end + 1
		line++
		lineStart = i
	}
	return out
}

func TestAgainstReference(t *testing.T) {
	for _, doc := range []string{"", "a", "é𝄞\r\n\r\n", "\r", "x\ry\nz\r\n", "\xff\xc3"} {
		checkAgainstReference(t, doc)
	}
}

func checkAgainstReference(t *testing.T, doc string) {
	t.Helper()
	c := New(doc)
	ref := referencePositions(doc)
	byOffset := map[int]protocol.Position{}
	for p, off := range ref {
		got, err := c.Offset(p)
		if err != nil || got != off {
			t.Fatalf("%q: Offset(%d:%d) = %d, %v; want %d", doc, p.Line, p.Character, got, err, off)
		}
		byOffset[off] = p
	}
	for off := -1; off <= len(doc)+1; off++ {
		p, err := c.Position(off)
		want, ok := byOffset[off]
		if ok != (err == nil) || ok && p != want {
			t.Fatalf("%q: Position(%d) = %v, %v; want %v (valid: %v)", doc, off, p, err, want, ok)
		}
	}
	// Positions just past each line's end are errors.
	for l := 0; l < c.LineCount(); l++ {
		last := 0
		for p := range ref {
			if int(p.Line) == l && int(p.Character) > last {
				last = int(p.Character)
			}
		}
		if _, err := c.Offset(pos(l, last+1)); !errors.Is(err, ErrPosition) {
			t.Fatalf("%q: Offset(%d:%d), past the line's end, = %v", doc, l, last+1, err)
		}
	}
	if _, err := c.Offset(pos(c.LineCount(), 0)); !errors.Is(err, ErrPosition) {
		t.Fatalf("%q: a line past the end was accepted", doc)
	}
}
