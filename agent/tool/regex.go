package tool

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// grep's patterns are RE2 (Go's regexp syntax), matched against one line
// at a time: a match never spans lines, "^" and "$" are the line's ends.

// lineMatcher finds the lines a pattern matches, fast: a literal every
// match must contain is searched for first, and the pattern only run on
// the lines holding it.
type lineMatcher struct {
	line  *regexp.Regexp // the pattern, run on one line
	multi *regexp.Regexp // the same, run on many lines at once
	lit   []byte         // a literal every match contains, or nil
	fold  bool           // lit is ASCII and matched in any case
	pivot int            // the byte of lit a fold search looks for
	// exact says a fold search may compare the whole literal as ASCII:
	// false when it holds a k or an s, whose other cases include the
	// Kelvin sign and the long s.
	exact bool
}

// compileLineMatcher compiles an RE2 pattern for line-by-line matching.
func compileLineMatcher(pattern string) (*lineMatcher, error) {
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	line, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	multi, err := regexp.Compile(lineBound(tree).String())
	if err != nil {
		return nil, fmt.Errorf("internal: the line-bound form of %q does not compile: %w", pattern, err)
	}
	m := &lineMatcher{line: line, multi: multi}
	if lit, fold := requiredLiteral(tree.Simplify()); len(lit) > 0 {
		m.lit, m.fold = lit, fold
		if fold {
			m.lit = bytes.ToLower(lit)
			m.pivot = rarestByte(m.lit)
			m.exact = !bytes.ContainsAny(m.lit, "ks")
		}
	}
	return m, nil
}

// lineBound rewrites a pattern so that, run over many lines at once, it
// matches what it would match within one line: "^" and "$" become line
// anchors and nothing matches a line end. It returns a modified copy.
func lineBound(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		c.Sub[i] = lineBound(s)
	}
	c.Sub0 = [1]*syntax.Regexp{}
	switch c.Op {
	case syntax.OpBeginText:
		c.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		c.Op = syntax.OpEndLine
	case syntax.OpAnyChar:
		c.Op = syntax.OpAnyCharNotNL
	case syntax.OpLiteral:
		for _, r := range c.Rune {
			if r == '\n' {
				return &syntax.Regexp{Op: syntax.OpNoMatch}
			}
		}
	case syntax.OpCharClass:
		c.Rune = withoutNewline(c.Rune)
		if len(c.Rune) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
	}
	return &c
}

// withoutNewline takes '\n' out of a class's ranges.
func withoutNewline(ranges []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// requiredLiteral finds the longest literal every match of re contains;
// fold says it is matched in any case (only ASCII folding literals are
// offered).
func requiredLiteral(re *syntax.Regexp) (lit []byte, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalBytes(re)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		// Runs of adjacent literals of one kind join into one.
		var run []byte
		runFold := false
		consider := func(b []byte, f bool) {
			if len(b) > len(lit) || len(b) == len(lit) && !f && fold {
				lit, fold = b, f
			}
		}
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral {
				b, f := literalBytes(s)
				if b == nil {
					consider(run, runFold)
					run = nil
					continue
				}
				if run != nil && f == runFold {
					run = append(run, b...)
				} else {
					consider(run, runFold)
					run, runFold = append([]byte(nil), b...), f
				}
				continue
			}
			consider(run, runFold)
			run = nil
			consider(requiredLiteral(s))
		}
		consider(run, runFold)
		return lit, fold
	}
	return nil, false
}

// literalBytes returns a literal's bytes, or nil for a case-folding
// literal that is not ASCII.
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
		// Folding matters only if some byte is a letter other than k and
		// s, the one a search can look for.
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

// rarestByte picks the byte a folding search looks for: the rarest, but
// never k or s (see lineMatcher.exact).
func rarestByte(lit []byte) int {
	best, at := -1, 0
	for i, c := range lit {
		if c == 'k' || c == 's' {
			continue
		}
		if r := byteRarity(c); r > best {
			best, at = r, i
		}
	}
	return at
}

// scan calls emit for each line of data the pattern matches, with its
// 1-based number, and returns how many there were.
func (m *lineMatcher) scan(data []byte, emit func(no int, line []byte)) int {
	if len(data) == 0 {
		return 0
	}
	count, lineNo, counted := 0, 1, 0
	for pos := 0; pos < len(data); {
		var at int
		verified := false
		switch {
		case m.lit != nil && !m.fold:
			i := bytes.Index(data[pos:], m.lit)
			if i < 0 {
				return count
			}
			at = pos + i
		case m.lit != nil:
			at = indexFold(data, pos, m.lit, m.pivot, m.exact)
			if at < 0 {
				return count
			}
		default:
			loc := m.multi.FindIndex(data[pos:])
			if loc == nil {
				return count
			}
			at, verified = pos+loc[0], true
		}
		if at == len(data) && data[at-1] == '\n' {
			// Past the last line end there is no line.
			return count
		}
		ls := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		le := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			le = at + i
		}
		line := data[ls:le]
		if verified || m.line.Match(line) {
			lineNo += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			emit(lineNo, line)
			count++
		}
		pos = le + 1
	}
	return count
}

// indexFold finds lit (lower case ASCII) in data at or after from, in any
// case, by looking for its pivot byte. With exact, it returns where lit
// starts; without, the position of a pivot byte that may belong to it.
func indexFold(data []byte, from int, lit []byte, pivot int, exact bool) int {
	lo := lit[pivot]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - 0x20
	}
	nextLo, nextUp := -2, -2
	for p := from + pivot; p < len(data); {
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
		if !exact {
			return c
		}
		if start := c - pivot; start >= from && start+len(lit) <= len(data) && equalFoldASCII(data[start:start+len(lit)], lit) {
			return start
		}
		p = c + 1
	}
	return -1
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

// rustRegex writes an RE2 pattern in the syntax of ripgrep's regex engine,
// so that it matches the same lines: character classes spelled out (Go's
// \d, \w, \s are ASCII, Rust's Unicode), ASCII word boundaries, no
// captures, no line ends.
func rustRegex(pattern string) (string, error) {
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeRust(&b, lineBound(tree))
	return b.String(), nil
}

func writeRust(b *strings.Builder, re *syntax.Regexp) {
	group := func(s *syntax.Regexp) {
		b.WriteString("(?:")
		writeRust(b, s)
		b.WriteString(")")
	}
	lazy := func() {
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	}
	switch re.Op {
	case syntax.OpNoMatch:
		// A word character with a word boundary inside it never matches.
		b.WriteString(`(?:z(?-u:\b)z)`)
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		}
		for _, r := range re.Rune {
			writeRustRune(b, r)
		}
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(")")
		}
	case syntax.OpCharClass:
		b.WriteString("[")
		for i := 0; i+1 < len(re.Rune); i += 2 {
			fmt.Fprintf(b, `\x{%x}`, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				fmt.Fprintf(b, `-\x{%x}`, re.Rune[i+1])
			}
		}
		b.WriteString("]")
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteString(".")
	case syntax.OpBeginLine, syntax.OpBeginText:
		b.WriteString("^")
	case syntax.OpEndLine, syntax.OpEndText:
		b.WriteString("$")
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		group(re.Sub[0])
	case syntax.OpStar:
		group(re.Sub[0])
		b.WriteString("*")
		lazy()
	case syntax.OpPlus:
		group(re.Sub[0])
		b.WriteString("+")
		lazy()
	case syntax.OpQuest:
		group(re.Sub[0])
		b.WriteString("?")
		lazy()
	case syntax.OpRepeat:
		group(re.Sub[0])
		switch {
		case re.Max == -1:
			fmt.Fprintf(b, "{%d,}", re.Min)
		case re.Max == re.Min:
			fmt.Fprintf(b, "{%d}", re.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
		}
		lazy()
	case syntax.OpConcat:
		for _, s := range re.Sub {
			group(s)
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			writeRust(b, s)
		}
		b.WriteString(")")
	}
}

func writeRustRune(b *strings.Builder, r rune) {
	switch {
	case strings.ContainsRune(`\.+*?()|[]{}^$`, r):
		b.WriteByte('\\')
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f || r >= utf8.RuneSelf:
		fmt.Fprintf(b, `\x{%x}`, r)
	default:
		b.WriteRune(r)
	}
}
