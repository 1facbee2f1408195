package search

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Wildcard is a compiled glob, matched against a slash-separated relative
// path. The syntax and meaning are those of gitignore patterns as ripgrep
// reads them (its globset crate with literal separators): "*" and "?" stay
// within one path element, "[…]" is a class ("[!…]" or "[^…]" negated),
// "{a,b}" is either, "\" quotes the next character, and "**" spans
// directories where it stands as a whole element ("**/x", "x/**", "x/**/y");
// elsewhere it counts as "*". Sharing one matcher between the rg and Go
// backends is what keeps their results the same.
type Wildcard struct {
	re *regexp.Regexp
	// suffix, when set, is a fast form of "**/*<suffix>": any path whose
	// last element ends with suffix.
	suffix string
	// literal, when set, is a fast form of a pattern with no wildcard.
	literal string
	isLit   bool
}

// CompileWildcard compiles a glob matched against whole relative paths.
func CompileWildcard(glob string) (*Wildcard, error) {
	if glob == "" {
		return nil, errors.New("empty pattern")
	}
	if !strings.ContainsAny(glob, `*?[{\`) {
		return &Wildcard{literal: glob, isLit: true}, nil
	}
	if rest, ok := strings.CutPrefix(glob, "**/*"); ok && rest != "" && !strings.ContainsAny(rest, `*?[{\/`) {
		return &Wildcard{suffix: rest}, nil
	}
	expr, err := globRegexp(glob)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", glob, err)
	}
	re, err := regexp.Compile("^" + expr + "$")
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", glob, err)
	}
	return &Wildcard{re: re}, nil
}

// Match reports whether the slash-separated relative path matches.
func (w *Wildcard) Match(path string) bool {
	switch {
	case w.isLit:
		return path == w.literal
	case w.suffix != "":
		return strings.HasSuffix(path, w.suffix) && !strings.Contains(path[strings.LastIndexByte(path, '/')+1:len(path)-len(w.suffix)], "/")
	}
	return w.re.MatchString(path)
}

// globRegexp translates a glob into a regular expression (unanchored).
func globRegexp(glob string) (string, error) {
	var b strings.Builder
	if err := translateGlob(&b, glob, false); err != nil {
		return "", err
	}
	return b.String(), nil
}

func translateGlob(b *strings.Builder, glob string, inAlt bool) error {
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '\\':
			if i+1 == len(glob) {
				return errors.New(`dangling "\"`)
			}
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '?':
			b.WriteString("[^/]")
		case '*':
			j := i
			for j < len(glob) && glob[j] == '*' {
				j++
			}
			stars := j - i
			startsElem := i == 0 || glob[i-1] == '/'
			endsElem := j == len(glob) || glob[j] == '/'
			switch {
			case stars >= 2 && startsElem && endsElem && j == len(glob) && i == 0:
				b.WriteString(".*")
			case stars >= 2 && startsElem && j < len(glob) && glob[j] == '/':
				// "**/" matches no directory or any number of them.
				b.WriteString("(?:.*/)?")
				j++
			case stars >= 2 && startsElem && j == len(glob):
				// A trailing "/**" (the "/" already written) matches
				// everything below.
				b.WriteString(".*")
			default:
				b.WriteString("[^/]*")
			}
			i = j - 1
		case '[':
			end, expr, err := globClass(glob, i)
			if err != nil {
				return err
			}
			b.WriteString(expr)
			i = end
		case '{':
			end, alts, err := splitAlternatives(glob, i)
			if err != nil {
				return err
			}
			if inAlt {
				return errors.New("nested {…} alternatives")
			}
			b.WriteString("(?:")
			for k, alt := range alts {
				if k > 0 {
					b.WriteString("|")
				}
				if err := translateGlob(b, alt, true); err != nil {
					return err
				}
			}
			b.WriteString(")")
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	return nil
}

// globClass translates the class starting at glob[i] == '['; end is the
// index of its ']'. A negated class never matches the separator, as with
// ripgrep's literal separators.
func globClass(glob string, i int) (end int, expr string, err error) {
	j := i + 1
	negate := false
	if j < len(glob) && (glob[j] == '!' || glob[j] == '^') {
		negate = true
		j++
	}
	var ranges [][2]rune
	// next reads one character of the class, unquoting it.
	next := func() rune {
		if glob[j] == '\\' && j+1 < len(glob) {
			j++
		}
		r, size := utf8.DecodeRuneInString(glob[j:])
		j += size - 1
		return r
	}
	for start := j; j < len(glob); j++ {
		if glob[j] == ']' && j > start {
			var b strings.Builder
			b.WriteString("[")
			if negate {
				b.WriteString("^/")
			}
			for _, r := range ranges {
				fmt.Fprintf(&b, `\x{%x}`, r[0])
				if r[1] != r[0] {
					fmt.Fprintf(&b, `-\x{%x}`, r[1])
				}
			}
			b.WriteString("]")
			return j, b.String(), nil
		}
		lo := next()
		if j+2 < len(glob) && glob[j+1] == '-' && glob[j+2] != ']' {
			j += 2
			hi := next()
			if hi < lo {
				return 0, "", fmt.Errorf("invalid range %c-%c", lo, hi)
			}
			ranges = append(ranges, [2]rune{lo, hi})
			continue
		}
		ranges = append(ranges, [2]rune{lo, lo})
	}
	return 0, "", errors.New(`unclosed "["`)
}

// splitAlternatives splits the "{a,b}" starting at glob[i]; end is the
// index of its '}'.
func splitAlternatives(glob string, i int) (end int, alts []string, err error) {
	var cur strings.Builder
	for j := i + 1; j < len(glob); j++ {
		switch c := glob[j]; c {
		case '\\':
			if j+1 < len(glob) {
				cur.WriteString(glob[j : j+2])
				j++
				continue
			}
			cur.WriteByte(c)
		case ',':
			alts = append(alts, cur.String())
			cur.Reset()
		case '}':
			return j, append(alts, cur.String()), nil
		case '{':
			return 0, nil, errors.New("nested {…} alternatives")
		default:
			cur.WriteByte(c)
		}
	}
	return 0, nil, errors.New(`unclosed "{"`)
}
