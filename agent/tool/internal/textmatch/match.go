package textmatch

import (
	"fmt"
	"strings"

	"github.com/darman-dev/darman/internal/textdist"
)

// span is a region of text, by byte offsets, that an edit replaces.
type span struct{ start, end int }

// matcher finds where old occurs in text, each way of finding it more
// tolerant than the last. replacement gives what a found span becomes.
type matcher struct {
	// name says how the text was found, for the model ("" for exact).
	name        string
	find        func(text, old string) []span
	replacement func(text string, s span, old, new string) string
}

// matchers is the chain edit tries, in order: the first that finds old at
// all decides, and must find it exactly once unless every occurrence is to
// be replaced.
var matchers = []matcher{
	{name: "", find: findExact, replacement: verbatim},
	{name: "ignoring trailing whitespace", find: findTrimmedRight, replacement: verbatim},
	{name: "ignoring indentation", find: findIndentless, replacement: reindent},
	{name: "after unescaping \\n, \\t and quotes", find: findUnescaped, replacement: unescapedNew},
	{name: "by its first and last lines", find: findAnchored, replacement: verbatim},
}

// blockSimilarity is how alike the middle of a block must be to what the
// model wrote for the block-anchor matcher to take it.
const blockSimilarity = 0.8

// Applied is the outcome of an edit on a text.
type Applied struct {
	Text     string
	How      string // how old was found, "" when exactly (see matchers)
	Count    int    // spans replaced
	First    int    // offset in text where the first replacement starts
	Inserted string // what the first span became
}

// errNotFound: old is nowhere in the text, by any matcher.
type errNotFound struct{}

func (errNotFound) Error() string { return "oldString was not found" }

// ErrAmbiguous: old is found more than once and only one may be replaced.
type ErrAmbiguous struct {
	how   string
	lines []int // 1-based start lines of the matches
}

func (e ErrAmbiguous) Error() string {
	how := ""
	if e.how != "" {
		how = " (" + e.how + ")"
	}
	shown := e.lines
	if len(shown) > 10 {
		shown = shown[:10]
	}
	var ls []string
	for _, l := range shown {
		ls = append(ls, fmt.Sprint(l))
	}
	more := ""
	if len(e.lines) > len(shown) {
		more = ", …"
	}
	return fmt.Sprintf("oldString matches %d places%s, starting at lines %s%s. Include more of the surrounding lines in oldString to pick one, or set replaceAll to change every one",
		len(e.lines), how, strings.Join(ls, ", "), more)
}

// Apply replaces old with new in text.
func Apply(text, old, new string, all bool) (Applied, error) {
	if old == "" {
		return Applied{}, errNotFound{}
	}
	for _, m := range matchers {
		spans := m.find(text, old)
		if len(spans) == 0 {
			continue
		}
		if len(spans) > 1 && !all {
			lines := make([]int, len(spans))
			for i, s := range spans {
				lines[i] = strings.Count(text[:s.start], "\n") + 1
			}
			return Applied{}, ErrAmbiguous{how: m.name, lines: lines}
		}
		var b strings.Builder
		b.Grow(len(text) + len(new)*len(spans))
		prev := 0
		res := Applied{How: m.name, Count: len(spans)}
		for i, s := range spans {
			b.WriteString(text[prev:s.start])
			r := m.replacement(text, s, old, new)
			if i == 0 {
				res.First, res.Inserted = b.Len(), r
			}
			b.WriteString(r)
			prev = s.end
		}
		b.WriteString(text[prev:])
		res.Text = b.String()
		return res, nil
	}
	return Applied{}, errNotFound{}
}

func verbatim(_ string, _ span, _, new string) string { return new }

func findExact(text, old string) []span {
	var out []span
	for i := 0; i <= len(text); {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		out = append(out, span{i + j, i + j + len(old)})
		i += j + len(old)
	}
	return out
}

// lineIndex is a text cut into lines, with where each starts.
type lineIndex struct {
	text   string
	starts []int // starts[i] is the offset of line i; one extra entry past the end
}

func indexLines(text string) lineIndex {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	if starts[len(starts)-1] != len(text) || len(text) == 0 {
		starts = append(starts, len(text)+1)
	}
	return lineIndex{text: text, starts: starts}
}

func (x lineIndex) count() int { return len(x.starts) - 1 }

// line returns line i without its line end.
func (x lineIndex) line(i int) string {
	end := x.starts[i+1] - 1
	if end > len(x.text) {
		end = len(x.text)
	}
	return x.text[x.starts[i]:end]
}

// block returns the span of lines [i, j], including the line end after j
// when withEnd is set and there is one.
func (x lineIndex) block(i, j int, withEnd bool) span {
	end := x.starts[j+1] - 1
	if end > len(x.text) {
		end = len(x.text)
	}
	if withEnd && end < len(x.text) {
		end++
	}
	return span{x.starts[i], end}
}

// oldLines splits what the model wrote into lines; a final line end is
// reported, not kept as an empty last line.
func oldLines(old string) (lines []string, withEnd bool) {
	withEnd = strings.HasSuffix(old, "\n")
	return strings.Split(strings.TrimSuffix(old, "\n"), "\n"), withEnd
}

// findLines finds windows of whole lines, without overlaps, where same
// says the window (line(k) is its k-th line) matches the model's lines.
func findLines(text, old string, same func(line func(int) string, want []string) bool) []span {
	want, withEnd := oldLines(old)
	x := indexLines(text)
	n := len(want)
	var out []span
	for i := 0; i+n <= x.count(); i++ {
		if same(func(k int) string { return x.line(i + k) }, want) {
			out = append(out, x.block(i, i+n-1, withEnd))
			i += n - 1
		}
	}
	return out
}

func trimRight(s string) string { return strings.TrimRight(s, " \t\r") }

func findTrimmedRight(text, old string) []span {
	return findLines(text, old, func(line func(int) string, want []string) bool {
		for k := range want {
			if trimRight(line(k)) != trimRight(want[k]) {
				return false
			}
		}
		return true
	})
}

// indentOf returns a line's leading whitespace.
func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// sameIndentless compares lines without their leading and trailing
// whitespace, so a block the model indented differently (spaces for tabs,
// one level too deep) still matches.
func sameIndentless(line func(int) string, want []string) bool {
	for k := range want {
		if strings.TrimSpace(line(k)) != strings.TrimSpace(want[k]) {
			return false
		}
	}
	return true
}

func findIndentless(text, old string) []span {
	return findLines(text, old, sameIndentless)
}

// reindent gives new's lines the indentation the file uses where the
// model's old used its own: each indentation old had on a line becomes
// what the file has on that line, and new's lines are mapped the same way.
func reindent(text string, s span, old, new string) string {
	want, _ := oldLines(old)
	got, _ := oldLines(text[s.start:s.end])
	mapping := make(map[string]string)
	var froms []string
	for k := range min(len(want), len(got)) {
		if strings.TrimSpace(want[k]) == "" {
			continue
		}
		from, to := indentOf(want[k]), indentOf(got[k])
		if _, seen := mapping[from]; !seen {
			mapping[from] = to
			froms = append(froms, from)
		}
	}
	lines := strings.Split(new, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		if to, ok := mapping[ind]; ok {
			lines[i] = to + l[len(ind):]
			continue
		}
		// A deeper line than any old had: map its longest known prefix
		// and keep the rest.
		best := ""
		for _, from := range froms {
			if len(from) > len(best) && strings.HasPrefix(ind, from) {
				best = from
			}
		}
		if best != "" {
			lines[i] = mapping[best] + l[len(best):]
		}
	}
	return strings.Join(lines, "\n")
}

// unescape undoes the escaping a model sometimes applies to code it quotes:
// \n, \t, \r, \", \', \`, \$ and \\ written as two characters.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\'', '`', '$', '\\':
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			continue
		}
		i++
	}
	return b.String()
}

func findUnescaped(text, old string) []span {
	u := unescape(old)
	if u == old || u == "" {
		return nil
	}
	if s := findExact(text, u); len(s) > 0 {
		return s
	}
	return findTrimmedRight(text, u)
}

func unescapedNew(_ string, _ span, _, new string) string { return unescape(new) }

// findAnchored finds blocks whose first and last lines are the model's
// (ignoring surrounding whitespace) and whose middle is mostly the same.
// The block may be a few lines longer or shorter than the model's.
func findAnchored(text, old string) []span {
	want, withEnd := oldLines(old)
	n := len(want)
	if n < 3 {
		return nil
	}
	first, last := strings.TrimSpace(want[0]), strings.TrimSpace(want[n-1])
	if first == "" || last == "" {
		return nil
	}
	x := indexLines(text)
	slack := max(2, n/4)
	middle := trimmedJoin(want[1 : n-1])
	// Comparing blocks costs; on pathological input, give up rather than
	// stall the call.
	budget := 1 << 27
	var out []span
	for i := 0; i < x.count(); i++ {
		if strings.TrimSpace(x.line(i)) != first {
			continue
		}
		best, bestJ := -1.0, -1
		for j := max(i+2, i+n-1-slack); j <= i+n-1+slack && j < x.count(); j++ {
			if strings.TrimSpace(x.line(j)) != last {
				continue
			}
			mid := make([]string, 0, j-i-1)
			for k := i + 1; k < j; k++ {
				mid = append(mid, x.line(k))
			}
			joined := trimmedJoin(mid)
			if !mayReach(len(joined), len(middle), blockSimilarity) {
				continue
			}
			if budget -= len(joined)*len(middle) + len(joined); budget < 0 {
				return nil
			}
			if sim := similarity(joined, middle); sim > best {
				best, bestJ = sim, j
			}
		}
		if bestJ >= 0 && best >= blockSimilarity {
			out = append(out, x.block(i, bestJ, withEnd))
			i = bestJ
		}
	}
	return out
}

func trimmedJoin(lines []string) string {
	t := make([]string, len(lines))
	for i, l := range lines {
		t[i] = strings.TrimSpace(l)
	}
	return strings.Join(t, "\n")
}

// similarity is 1 minus the edit distance of a and b over the longer
// length: 1 for equal strings, 0 for nothing in common. Where the distance
// would be costly to compute it compares whole lines instead.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	longer := max(len(a), len(b))
	if len(a)*len(b) > 1<<20 {
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		if len(al)*len(bl) > 1<<22 {
			return 0
		}
		return float64(2*lcs(al, bl)) / float64(len(al)+len(bl))
	}
	return 1 - float64(textdist.Levenshtein(a, b))/float64(longer)
}

// mayReach reports whether strings of lengths m and n can be at least least
// alike: the distance is at least the difference of their lengths.
func mayReach(m, n int, least float64) bool {
	longer := max(m, n)
	return longer == 0 || 1-float64(longer-min(m, n))/float64(longer) >= least
}

// dice is a cheap likeness of two short strings: the share of their
// character pairs they have in common.
func dice(a string, pairs map[string]int, total int) float64 {
	if len(a) < 2 || total == 0 {
		return 0
	}
	seen := make(map[string]int, len(a))
	common := 0
	for i := 0; i+2 <= len(a); i++ {
		p := a[i : i+2]
		if seen[p] < pairs[p] {
			common++
		}
		seen[p]++
	}
	return float64(2*common) / float64(len(a)-1+total)
}

func bigrams(s string) (map[string]int, int) {
	m := make(map[string]int, len(s))
	for i := 0; i+2 <= len(s); i++ {
		m[s[i:i+2]]++
	}
	return m, max(0, len(s)-1)
}

// lcs is the length of the longest common subsequence of two line lists.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ClosestRegion finds the lines of text most like old, for a failed edit to
// show: it returns 0-based first and last lines, or ok false when nothing
// in the text resembles old.
func ClosestRegion(text, old string) (from, to int, ok bool) {
	want, _ := oldLines(old)
	x := indexLines(text)
	if x.count() == 0 {
		return 0, 0, false
	}
	// Vote for where the block would start, from every line of old found
	// in the text; lines found everywhere ("}", "") say nothing.
	at := make(map[string][]int)
	for k, w := range want {
		if t := strings.TrimSpace(w); len(t) > 1 {
			at[t] = append(at[t], k)
		}
	}
	votes := make(map[int]int)
	counts := make(map[string]int)
	for i := 0; i < x.count(); i++ {
		counts[strings.TrimSpace(x.line(i))]++
	}
	for i := 0; i < x.count(); i++ {
		t := strings.TrimSpace(x.line(i))
		if ks, found := at[t]; found && counts[t] <= 20 {
			for _, k := range ks {
				votes[i-k]++
			}
		}
	}
	start, best := 0, 0
	for s, v := range votes {
		if v > best || v == best && s < start {
			start, best = s, v
		}
	}
	if best == 0 {
		// No line matches whole: take the line most like old's first
		// non-blank line.
		var first string
		k := 0
		for k = range want {
			if first = strings.TrimSpace(want[k]); first != "" {
				break
			}
		}
		if first == "" {
			return 0, 0, false
		}
		pairs, total := bigrams(first)
		bestSim := 0.0
		for i := 0; i < x.count(); i++ {
			l := strings.TrimSpace(x.line(i))
			if !mayReach(len(l), len(first), 0.5) {
				continue
			}
			if sim := dice(l, pairs, total); sim > bestSim {
				start, bestSim = i-k, sim
			}
		}
		if bestSim < 0.5 {
			return 0, 0, false
		}
	}
	from = max(0, start)
	to = min(x.count()-1, start+len(want)-1)
	return from, max(from, to), true
}

// ChangedLines returns the 0-based lines [from, to] the first replacement
// of an edit occupies in the new text.
func ChangedLines(text string, a Applied) (from, to int) {
	from = strings.Count(text[:a.First], "\n")
	to = from + strings.Count(strings.TrimSuffix(a.Inserted, "\n"), "\n")
	return from, to
}

// SplitLines splits text into lines without their ends. A final line end
// does not start another line.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
