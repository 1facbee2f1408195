package prompt

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitArgs cuts a command's argument string into words, the way $1..$N
// see them. It never fails:
//
//   - Words are separated by whitespace.
//   - A word that starts with " or ' runs to the matching quote, spaces
//     included, and the quotes are removed ("fix the tests" is one word).
//     Text right after the closing quote continues the word.
//   - A quote anywhere else is an ordinary character, so apostrophes in
//     prose stay as typed (don't is one word, not an open quote), and a
//     quote that is never closed is an ordinary character too.
//   - Inside double quotes \" and \\ stand for " and \. Outside quotes a
//     backslash before whitespace, a quote or a backslash keeps that
//     character literal; any other backslash is kept (C:\dir stays).
func SplitArgs(s string) []string {
	var words []string
	for i := 0; ; {
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		if i == len(s) {
			return words
		}
		var w strings.Builder
		i = scanWord(s, i, &w)
		words = append(words, w.String())
	}
}

// scanWord reads one word starting at s[i] into w and returns the index
// after it.
func scanWord(s string, i int, w *strings.Builder) int {
	// A quote opens a quoted section only at the start of the word or
	// right after another quoted section ("a b"'c d').
	quoteOpens := true
	for i < len(s) {
		c := s[i]
		if (c == '"' || c == '\'') && quoteOpens {
			if end := matchingQuote(s, i); end >= 0 {
				writeQuoted(w, s[i+1:end], c)
				i = end + 1
				continue
			}
		}
		quoteOpens = false
		if c == '\\' && i+1 < len(s) {
			next, n := utf8.DecodeRuneInString(s[i+1:])
			if unicode.IsSpace(next) || next == '"' || next == '\'' || next == '\\' {
				w.WriteString(s[i+1 : i+1+n])
				i += 1 + n
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			break
		}
		w.WriteString(s[i : i+n])
		i += n
	}
	return i
}

// matchingQuote returns the index of the quote closing the one at s[i], or
// -1 when there is none.
func matchingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case q == '"' && s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\'):
			j++
		case s[j] == q:
			return j
		}
	}
	return -1
}

func writeQuoted(w *strings.Builder, inner string, q byte) {
	if q == '\'' {
		w.WriteString(inner)
		return
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) && (inner[i+1] == '"' || inner[i+1] == '\\') {
			i++
		}
		w.WriteByte(inner[i])
	}
}

// substituteArgs replaces $ARGUMENTS and $1..$N as Command.Expand
// describes.
func substituteArgs(template, args string) string {
	if !strings.Contains(template, "$") {
		return template
	}
	words := SplitArgs(args)
	last := 0
	forEachPlaceholder(template, func(n int) { last = max(last, n) })
	var b strings.Builder
	for i := 0; i < len(template); {
		c := template[i]
		if c != '$' {
			j := strings.IndexByte(template[i:], '$')
			if j < 0 {
				j = len(template) - i
			}
			b.WriteString(template[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(template[i+1:], "ARGUMENTS") {
			b.WriteString(strings.TrimSpace(args))
			i += 1 + len("ARGUMENTS")
			continue
		}
		n, width := placeholderAt(template, i)
		if width == 0 {
			b.WriteByte('$')
			i++
			continue
		}
		switch {
		case n > len(words):
		case n == last:
			b.WriteString(strings.Join(words[n-1:], " "))
		default:
			b.WriteString(words[n-1])
		}
		i += width
	}
	return b.String()
}

// placeholderAt reads a $N placeholder at s[i]; width 0 means there is none.
func placeholderAt(s string, i int) (n, width int) {
	j := i + 1
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i+1 {
		return 0, 0
	}
	n, err := strconv.Atoi(s[i+1 : j])
	if err != nil || n == 0 {
		return 0, 0
	}
	return n, j - i
}

func forEachPlaceholder(s string, f func(n int)) {
	for i := strings.IndexByte(s, '$'); i >= 0; {
		if n, w := placeholderAt(s, i); w > 0 {
			f(n)
		}
		next := strings.IndexByte(s[i+1:], '$')
		if next < 0 {
			return
		}
		i += 1 + next
	}
}
