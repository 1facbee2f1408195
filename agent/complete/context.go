package complete

import (
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"
)

// bytesPerToken is the estimate darman budgets with: code runs about four
// bytes a token in the BPE tokenizers of today's code models.
const bytesPerToken = 4

// prefixWindow is where the text before the cursor that fits budget bytes
// starts: at a line's start, unless one line alone is longer.
func prefixWindow(text string, offset, budget int) int {
	start := offset - budget
	if start <= 0 {
		return 0
	}
	if i := strings.IndexByte(text[start:offset], '\n'); i >= 0 {
		return start + i + 1
	}
	for start < offset && !utf8.RuneStart(text[start]) {
		start++
	}
	return start
}

// suffixWindow is where the text after the cursor that fits budget bytes
// ends: after a line's end, unless one line alone is longer.
func suffixWindow(text string, offset, budget int) int {
	end := offset + budget
	if end >= len(text) {
		return len(text)
	}
	if i := strings.LastIndexByte(text[offset:end], '\n'); i >= 0 {
		return offset + i + 1
	}
	for end > offset && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}

// lineStart is the offset of the start of the line holding offset.
func lineStart(text string, offset int) int {
	return strings.LastIndexByte(text[:offset], '\n') + 1
}

// lineEnd is the offset of the end of the line holding offset (before
// its "\n" or "\r\n").
func lineEnd(text string, offset int) int {
	i := strings.IndexByte(text[offset:], '\n')
	if i < 0 {
		return len(text)
	}
	end := offset + i
	if end > offset && text[end-1] == '\r' {
		end--
	}
	return end
}

// idSeed hashes identifiers for the similarity of snippets; one seed per
// process, so the hashes of every buffer compare.
var idSeed = maphash.MakeSeed()

// idSet is the sorted, distinct hashes of the identifiers of a text.
type idSet []uint32

// identifiers appends the hashes of the identifiers of s (two bytes or
// more, not keywords: every file shares those) to out and returns it
// sorted and distinct.
func identifiers(s string, out idSet) idSet {
	forIdents(s, func(i, j int) {
		if j-i >= 2 && !keywords[s[i:j]] {
			out = append(out, uint32(maphash.String(idSeed, s[i:j])))
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets.
func jaccard(a, b idSet) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// The windows of a buffer compared with the cursor's neighbourhood:
// windowLines lines every windowStep lines.
const (
	windowLines = 12
	windowStep  = 6
	// neighbourLines is how many lines before the cursor make its
	// neighbourhood.
	neighbourLines = 12
	// maxIndexed is the largest buffer darman indexes for snippets.
	maxIndexed = 2 << 20
)

// window is a span of a buffer with its identifiers.
type window struct {
	start, end int
	ids        idSet
}

// bufIndex is a buffer's windows, for one version of its text.
type bufIndex struct {
	version int32
	size    int
	windows []window
}

// indexBuffer splits text into overlapping windows of whole lines.
func indexBuffer(text string, version int32) *bufIndex {
	ix := &bufIndex{version: version, size: len(text)}
	if len(text) > maxIndexed {
		return ix
	}
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1 < len(text) {
			starts = append(starts, i+1)
		}
	}
	for first := 0; first < len(starts); first += windowStep {
		last := min(first+windowLines, len(starts))
		end := len(text)
		if last < len(starts) {
			end = starts[last]
		}
		w := window{start: starts[first], end: end}
		w.ids = identifiers(text[w.start:w.end], make(idSet, 0, 32))
		if len(w.ids) > 0 {
			ix.windows = append(ix.windows, w)
		}
		if last == len(starts) {
			break
		}
	}
	return ix
}

// neighbourhood is the text whose identifiers choose the snippets: the
// last lines before the cursor.
func neighbourhood(prefix string) string {
	start := len(prefix)
	for n := 0; n < neighbourLines && start > 0; n++ {
		i := strings.LastIndexByte(prefix[:start-1], '\n')
		start = i + 1
		if i < 0 {
			break
		}
	}
	return prefix[start:]
}
