package text

import (
	"slices"
	"testing"
)

// FuzzPositions checks Offset and Position against the independent
// reference on any text, valid UTF-8 or not.
func FuzzPositions(f *testing.F) {
	for _, s := range []string{"", "abc", "é\r\n𝄞\r\rx\n", "\xed\xa0\x80", "a\r\n\r\nb\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 2000 {
			return
		}
		checkAgainstReference(t, doc)
	})
}

// FuzzReplace checks that the incrementally kept line index equals the one
// built from scratch, and that Edit finds an edit that turns one text into
// another.
func FuzzReplace(f *testing.F) {
	f.Add("a\r\nb", 1, 3, "\r")
	f.Add("x\ry", 2, 2, "\n\r\n")
	f.Add("", 0, 0, "é")
	f.Fuzz(func(t *testing.T, doc string, start, end int, insert string) {
		if len(doc) > 2000 || len(insert) > 200 {
			return
		}
		c := New(doc)
		if start < 0 || end < start || end > len(doc) {
			if _, err := c.Replace(start, end, insert); err == nil {
				t.Fatalf("Replace(%d, %d) of %d bytes succeeded", start, end, len(doc))
			}
			return
		}
		next, err := c.Replace(start, end, insert)
		if err != nil {
			t.Fatal(err)
		}
		if want := New(next.String()).lines; !slices.Equal(next.lines, want) {
			t.Fatalf("%q[%d:%d] = %q: lines %v, want %v", doc, start, end, insert, next.lines, want)
		}
		e := c.Edit(next.String())
		applied, err := c.Apply(&e.Range, e.NewText)
		if err != nil || applied.String() != next.String() {
			t.Fatalf("Edit(%q → %q) = %+v applies as %v, %v", doc, next.String(), e, applied, err)
		}
	})
}
