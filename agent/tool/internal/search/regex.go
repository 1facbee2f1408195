package search

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

// lineMatcher finds the lines a pattern matches, fast: something every
// match must contain is searched for first (see prefilter.go), and the
// pattern only run on the lines holding it.
type lineMatcher struct {
	line  *regexp.Regexp // the pattern, run on one line
	multi *regexp.Regexp // the same, run on many lines at once
	find  finder         // nil: run multi over the text
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
	m := &lineMatcher{line: line, multi: multi, find: planFinder(tree.Simplify())}
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

// scan calls emit for each line of data the pattern matches, with its
// 1-based number, and returns how many there were.
func (m *lineMatcher) scan(data []byte, emit func(no int, line []byte)) int {
	if len(data) == 0 {
		return 0
	}
	var next func(int) int
	if m.find != nil {
		next = m.find.cursor(data)
	}
	count, lineNo, counted := 0, 1, 0
	for from := 0; from < len(data); {
		var at int
		verified := false
		if next != nil {
			if at = next(from); at < 0 {
				return count
			}
		} else {
			loc := m.multi.FindIndex(data[from:])
			if loc == nil {
				return count
			}
			at, verified = from+loc[0], true
		}
		if at == len(data) && data[at-1] == '\n' {
			// Past the last line end there is no line.
			return count
		}
		ls := bytes.LastIndexByte(data[:at], '\n') + 1
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
		from = le + 1
	}
	return count
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
