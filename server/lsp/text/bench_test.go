package text

import (
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// bigDoc is about 1 MB of Go-like source, 30,000 lines, some non-ASCII.
func bigDoc() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("\tx := computeSomething(a, b, \"héllo\") // line of code 𝄞\n")
	}
	return b.String()
}

// BenchmarkApplyIncremental is one keystroke of a didChange in the middle
// of a 1 MB document.
func BenchmarkApplyIncremental(b *testing.B) {
	c := New(bigDoc())
	mid := protocol.Position{Line: protocol.UInteger(c.LineCount() / 2), Character: 10}
	r := &protocol.Range{Start: mid, End: mid}
	b.SetBytes(int64(c.Len()))
	b.ResetTimer()
	for b.Loop() {
		next, err := c.Apply(r, "y")
		if err != nil {
			b.Fatal(err)
		}
		c = next
	}
}

// BenchmarkOffset converts a position near the end of a 1 MB document.
func BenchmarkOffset(b *testing.B) {
	c := New(bigDoc())
	p := protocol.Position{Line: protocol.UInteger(c.LineCount() - 2), Character: 40}
	for b.Loop() {
		if _, err := c.Offset(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew indexes a 1 MB document, as a didOpen or a full change does.
func BenchmarkNew(b *testing.B) {
	doc := bigDoc()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		New(doc)
	}
}

// BenchmarkCopyBaseline copies the 1 MB document once: the floor for any
// edit that keeps documents as immutable strings, to compare
// BenchmarkApplyIncremental with on a noisy machine.
func BenchmarkCopyBaseline(b *testing.B) {
	doc := bigDoc()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		doc = doc[:len(doc)/2] + "y" + doc[len(doc)/2+1:]
	}
}
