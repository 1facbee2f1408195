package lsppos

import (
	"slices"
	"strings"
	"testing"
)

// TestSeekAndCount walks lines with an emoji (two UTF-16 units, four
// bytes, one rune), an accented letter and a byte that is not UTF-8.
func TestSeekAndCount(t *testing.T) {
	line := "a😀é\xffz" // a:1 😀:4 bytes é:2 bytes \xff:1 z:1
	seeks := []struct {
		want      int
		enc       Encoding
		off, unit int
	}{
		{0, UTF16, 0, 0},
		{1, UTF16, 1, 1},
		{2, UTF16, 1, 1}, // inside the surrogate pair: stops before the emoji
		{3, UTF16, 5, 3},
		{5, UTF16, 8, 5}, // the invalid byte counts one
		{6, UTF16, 9, 6}, // the end of the line
		{9, UTF16, 9, 6}, // past it
		{3, UTF8, 1, 1},  // inside the emoji's bytes
		{5, UTF8, 5, 5},
		{2, UTF32, 5, 2},
		{5, UTF32, 9, 5},
	}
	for _, s := range seeks {
		if off, units := Seek(line, s.want, s.enc); off != s.off || units != s.unit {
			t.Errorf("Seek(%d, %v) = %d, %d; want %d, %d", s.want, s.enc, off, units, s.off, s.unit)
		}
	}
	counts := []struct {
		n     int
		enc   Encoding
		units int
		ok    bool
	}{
		{0, UTF16, 0, true},
		{5, UTF16, 3, true},
		{3, UTF16, 1, false}, // inside the emoji
		{9, UTF16, 6, true},
		{9, UTF8, 9, true},
		{9, UTF32, 5, true},
	}
	for _, c := range counts {
		if units, ok := Count(line, c.n, c.enc); units != c.units || ok != c.ok {
			t.Errorf("Count(%d, %v) = %d, %v; want %d, %v", c.n, c.enc, units, ok, c.units, c.ok)
		}
	}
}

// TestLines finds line starts and ends for "\n", "\r\n" and a lone "\r".
func TestLines(t *testing.T) {
	text := "ab\r\ncd\ref\n"
	starts := LineStarts(text, 0, len(text), []int{0})
	if want := []int{0, 4, 7, 10}; !slices.Equal(starts, want) {
		t.Fatalf("line starts %v, want %v", starts, want)
	}
	for i, want := range []int{2, 6, 9, 10} {
		if end := LineEnd(text, starts, i); end != want {
			t.Errorf("line %d ends at %d, want %d", i, end, want)
		}
	}
}

// TestLineStartsOfParts: the starts in part of a text, with and without a
// "\r" in it, appended to the ones known.
func TestLineStartsOfParts(t *testing.T) {
	for _, c := range []struct {
		text     string
		from, to int
		want     []int
	}{
		{"", 0, 0, []int{0}},
		{"abc", 0, 3, []int{0}},
		{"a\nb\n\nc", 0, 6, []int{0, 2, 4, 5}},
		{"a\nb\n\nc", 2, 6, []int{0, 4, 5}},
		{"a\nb\n\nc", 2, 4, []int{0, 4}},
		{"a\nb\r\nc\rd", 2, 8, []int{0, 5, 7}},
		{"a\r", 0, 2, []int{0, 2}},
		{"a\r\n", 0, 2, []int{0}}, // the "\n" after the part still joins its "\r"
	} {
		if got := LineStarts(c.text, c.from, c.to, []int{0}); !slices.Equal(got, c.want) {
			t.Errorf("LineStarts(%q, %d, %d) = %v, want %v", c.text, c.from, c.to, got, c.want)
		}
	}
}

// BenchmarkLineStarts indexes a 100 KB Go-like file.
func BenchmarkLineStarts(b *testing.B) {
	text := strings.Repeat("\tif err := f(x); err != nil {\n\t\treturn err\n\t}\n", 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		LineStarts(text, 0, len(text), []int{0})
	}
}
