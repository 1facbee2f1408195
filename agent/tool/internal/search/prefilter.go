package search

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Go's regexp package has no fast scan of its own beyond a literal prefix,
// and run over a whole file it is many times slower than ripgrep. So grep
// first looks for something every match must contain (a literal, either of
// several literals, a run of characters from one class), which plain byte
// scanning finds fast, and runs the pattern only on the lines holding it.

// finder finds the places in a text where a match may be.
type finder interface {
	// cursor returns a function that, given a position, returns a later
	// (or equal) one inside a line that may hold a match, or -1 when no
	// line after from can. Successive calls have increasing from.
	cursor(data []byte) func(from int) int
	// score says how few places the finder stops at: higher is better.
	score() float64
}

// byteSet is a set of bytes.
type byteSet [256]bool

// minScore is the least score worth using a finder for.
const minScore = 0.75

// litFinder finds an exact literal, with the bytes allowed around it.
type litFinder struct {
	lit []byte
	// before and after, when set, are the bytes that may stand right
	// before and right after lit in a match: a short literal such as "-"
	// is everywhere in code, its neighbours rule most places out cheaply.
	before, after *byteSet
}

func (f *litFinder) score() float64 {
	s := float64(len(f.lit)) + 0.5
	if f.before != nil || f.after != nil {
		s++
	}
	return s
}

func (f *litFinder) cursor(data []byte) func(int) int {
	return func(from int) int {
		for from <= len(data) {
			i := bytes.Index(data[from:], f.lit)
			if i < 0 {
				return -1
			}
			at := from + i
			end := at + len(f.lit)
			if (f.before == nil || at > 0 && f.before[data[at-1]]) && (f.after == nil || end < len(data) && f.after[data[end]]) {
				return at
			}
			from = at + 1
		}
		return -1
	}
}

// foldFinder finds an ASCII literal in any case, by looking for its
// rarest byte.
type foldFinder struct {
	lit   []byte // lower case
	pivot int    // the byte searched for
	// exact says the whole literal may be compared as ASCII: false when it
	// holds a k or an s, whose other cases include the Kelvin sign and the
	// long s; then any place holding the pivot byte is a candidate.
	exact bool
}

func newFoldFinder(lit []byte) *foldFinder {
	f := &foldFinder{lit: bytes.ToLower(lit), pivot: -1}
	f.exact = !bytes.ContainsAny(f.lit, "ks")
	best := -1
	for i, c := range f.lit {
		if c == 'k' || c == 's' {
			continue
		}
		if r := byteRarity(c); r > best {
			best, f.pivot = r, i
		}
	}
	return f
}

func (f *foldFinder) score() float64 { return float64(len(f.lit)) }

func (f *foldFinder) cursor(data []byte) func(int) int {
	lo := f.lit[f.pivot]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - 0x20
	}
	nextLo, nextUp := -2, -2
	return func(from int) int {
		for p := from + f.pivot; p < len(data); {
			if nextLo != -1 && nextLo < p {
				nextLo = indexByteFrom(data, p, lo)
			}
			if up != lo && nextUp != -1 && nextUp < p {
				nextUp = indexByteFrom(data, p, up)
			}
			c := nextLo
			if up != lo && nextUp >= 0 && (c < 0 || nextUp < c) {
				c = nextUp
			}
			if c < 0 {
				return -1
			}
			if !f.exact {
				return c
			}
			if start := c - f.pivot; start >= from && start+len(f.lit) <= len(data) && equalFoldASCII(data[start:start+len(f.lit)], f.lit) {
				return start
			}
			p = c + 1
		}
		return -1
	}
}

// runFinder finds n bytes in a row from a set, as "[0-9a-f]{40}" needs.
type runFinder struct {
	set *byteSet
	n   int // characters, so at least as many bytes
}

func (f *runFinder) score() float64 { return float64(f.n) / 4 }

func (f *runFinder) cursor(data []byte) func(int) int {
	return func(from int) int {
		// Finding a byte outside the set skips every start the run could
		// not have.
		for i := from; i+f.n <= len(data); {
			j := i + f.n - 1
			for j >= i && f.set[data[j]] {
				j--
			}
			if j < i {
				return i
			}
			i = j + 1
		}
		return -1
	}
}

// anyFinder finds the places of any of several finders, for an
// alternation every branch of which has one.
type anyFinder struct {
	alts []finder
}

func (f *anyFinder) score() float64 {
	s := f.alts[0].score()
	for _, a := range f.alts[1:] {
		s = min(s, a.score())
	}
	return s - 0.5
}

func (f *anyFinder) cursor(data []byte) func(int) int {
	cursors := make([]func(int) int, len(f.alts))
	next := make([]int, len(f.alts))
	for i, a := range f.alts {
		cursors[i] = a.cursor(data)
		next[i] = -2
	}
	return func(from int) int {
		best := -1
		for i := range cursors {
			// A cached place before from is stale; -1 means none left.
			if next[i] != -1 && next[i] < from {
				next[i] = cursors[i](from)
			}
			if next[i] >= 0 && (best < 0 || next[i] < best) {
				best = next[i]
			}
		}
		return best
	}
}

// planFinder picks the best finder for re, or nil when there is none worth
// using.
func planFinder(re *syntax.Regexp) finder {
	if f := bestFinder(re); f != nil && f.score() >= minScore {
		return f
	}
	return nil
}

// bestFinder finds, for re, something every match holds.
func bestFinder(re *syntax.Regexp) finder {
	switch re.Op {
	case syntax.OpLiteral:
		return literalFinder(re, nil, nil)
	case syntax.OpCapture:
		return bestFinder(re.Sub[0])
	case syntax.OpPlus:
		return classOrInner(re.Sub[0], 1)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return classOrInner(re.Sub[0], re.Min)
		}
	case syntax.OpCharClass:
		return &runFinder{set: edgeBytes(re, true), n: 1}
	case syntax.OpAlternate:
		alts := make([]finder, len(re.Sub))
		for i, s := range re.Sub {
			if alts[i] = bestFinder(s); alts[i] == nil {
				return nil
			}
		}
		return &anyFinder{alts: alts}
	case syntax.OpConcat:
		return concatFinder(re)
	}
	return nil
}

// classOrInner handles a repetition: a class repeated n times is a run.
func classOrInner(sub *syntax.Regexp, n int) finder {
	if sub.Op == syntax.OpCharClass {
		return &runFinder{set: edgeBytes(sub, true), n: n}
	}
	return bestFinder(sub)
}

// concatFinder picks the best finder among a concatenation's parts: runs
// of adjacent literals (joined, with their neighbours' bytes), runs of
// classes with one set, and what each other part requires.
func concatFinder(re *syntax.Regexp) finder {
	var best finder
	consider := func(f finder) {
		if f != nil && (best == nil || f.score() > best.score()) {
			best = f
		}
	}
	subs := re.Sub
	var run *runFinder
	for i := 0; i < len(subs); i++ {
		s := subs[i]
		if set, n := classRepeat(s); set != nil {
			// Whatever a run's length, what follows it comes right after,
			// so adjacent classes with one set make one run.
			if run != nil && *run.set == *set {
				run.n += n
			} else {
				run = &runFinder{set: set, n: n}
			}
			consider(&runFinder{set: run.set, n: run.n})
			continue
		}
		run = nil
		if s.Op != syntax.OpLiteral {
			consider(bestFinder(s))
			continue
		}
		j := i
		lit, fold := literalBytes(s)
		for j+1 < len(subs) && subs[j+1].Op == syntax.OpLiteral {
			more, f := literalBytes(subs[j+1])
			if lit == nil || more == nil || f != fold {
				break
			}
			lit = append(lit, more...)
			j++
		}
		var before, after *byteSet
		if i > 0 {
			before = edgeBytes(subs[i-1], true)
		}
		if j+1 < len(subs) {
			after = edgeBytes(subs[j+1], false)
		}
		consider(literalFinderBytes(lit, fold, before, after))
		i = j
	}
	return best
}

// classRepeat recognises a class repeated at least once: its bytes, and
// the least number of characters it matches.
func classRepeat(re *syntax.Regexp) (set *byteSet, n int) {
	switch {
	case re.Op == syntax.OpCharClass:
		return edgeBytes(re, true), 1
	case re.Op == syntax.OpPlus && re.Sub[0].Op == syntax.OpCharClass:
		return edgeBytes(re.Sub[0], true), 1
	case re.Op == syntax.OpRepeat && re.Min >= 1 && re.Sub[0].Op == syntax.OpCharClass:
		return edgeBytes(re.Sub[0], true), re.Min
	}
	return nil, 0
}

func literalFinder(re *syntax.Regexp, before, after *byteSet) finder {
	lit, fold := literalBytes(re)
	return literalFinderBytes(lit, fold, before, after)
}

func literalFinderBytes(lit []byte, fold bool, before, after *byteSet) finder {
	switch {
	case len(lit) == 0:
		return nil
	case fold:
		return newFoldFinder(lit)
	}
	return &litFinder{lit: lit, before: before, after: after}
}

// literalBytes returns a literal's bytes and whether they match in any
// case; nil for a case-folding literal beyond ASCII, or one whose only
// letters are k and s (see foldFinder).
func literalBytes(re *syntax.Regexp) ([]byte, bool) {
	fold := re.Flags&syntax.FoldCase != 0
	b := make([]byte, 0, len(re.Rune))
	for _, r := range re.Rune {
		if fold && r >= utf8.RuneSelf {
			return nil, false
		}
		b = utf8.AppendRune(b, r)
	}
	if fold {
		letters := false
		for _, c := range b {
			lc := c | 0x20
			letters = letters || 'a' <= lc && lc <= 'z' && lc != 'k' && lc != 's'
		}
		if !letters && bytes.ContainsAny(bytes.ToLower(b), "ks") {
			return nil, false
		}
		fold = letters
	}
	return b, fold
}

// edgeBytes returns the bytes that re, which must match at least one
// character, can end with (last) or start with, or nil when it cannot
// tell. A character beyond ASCII may end or start with any byte from 0x80.
func edgeBytes(re *syntax.Regexp, last bool) *byteSet {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return edgeBytes(re.Sub[0], last)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return edgeBytes(re.Sub[0], last)
		}
	case syntax.OpConcat:
		// Its outermost part, if that always matches a character.
		if last {
			return edgeBytes(re.Sub[len(re.Sub)-1], last)
		}
		return edgeBytes(re.Sub[0], last)
	case syntax.OpCharClass:
		var set byteSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for c := lo; c <= hi && c < utf8.RuneSelf; c++ {
				set[c] = true
			}
			if hi >= utf8.RuneSelf {
				for c := 0x80; c < 256; c++ {
					set[c] = true
				}
			}
		}
		return &set
	}
	return nil
}

// byteRarity ranks bytes by how rarely they occur in source code, higher
// being rarer.
func byteRarity(c byte) int {
	const common = " etaoinsrlcdhupmfgbywvkxjqz" // most common first
	if i := strings.IndexByte(common, c|0x20); i >= 0 && (c == ' ' || 'a' <= c|0x20 && c|0x20 <= 'z') {
		return i
	}
	switch {
	case '0' <= c && c <= '9':
		return 12
	case c == '\t' || c == '.' || c == '(' || c == ')' || c == ',':
		return 10
	}
	return 25
}

func indexByteFrom(data []byte, from int, c byte) int {
	if i := bytes.IndexByte(data[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// equalFoldASCII compares b with lower, which is lower case.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 0x20
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
