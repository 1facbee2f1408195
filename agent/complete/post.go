package complete

import "strings"

// maxLines caps a multi-line suggestion.
const maxLines = 16

// singleLine reports whether a suggestion at the cursor may fill only the
// rest of the line: the line goes on after the cursor.
func singleLine(restOfLine string) bool {
	return strings.TrimSpace(restOfLine) != ""
}

// collector gathers a streamed suggestion and says when enough came: the
// line's end for a single line, maxLines lines otherwise.
type collector struct {
	b      strings.Builder
	single bool
	lines  int
	limit  int // bytes
}

// add takes a piece; false means stop reading.
func (c *collector) add(piece string) bool {
	for {
		i := strings.IndexByte(piece, '\n')
		if i < 0 {
			break
		}
		if c.single && c.b.Len()+i > 0 {
			c.b.WriteString(piece[:i])
			return false
		}
		if c.single {
			// A newline first: the model starts on the next line; skip it.
			piece = piece[i+1:]
			continue
		}
		c.lines++
		if c.lines >= maxLines {
			c.b.WriteString(piece[:i])
			return false
		}
		c.b.WriteString(piece[:i+1])
		piece = piece[i+1:]
	}
	c.b.WriteString(piece)
	return c.b.Len() < c.limit
}

// tidy cuts a raw suggestion to what is worth showing: trailing blanks, a
// tail that repeats the text after the cursor, and (multi-line) the lines
// from one that repeats the next line of the suffix.
func tidy(s, restOfLine, suffix string, single bool) string {
	s = strings.TrimRight(s, " \t\r\n")
	if single {
		return trimOverlap(s, strings.TrimSpace(restOfLine))
	}
	// Multi-line: the first line of the code after the cursor, if the
	// suggestion writes it again, and everything after it.
	// Lines compare with their indentation: a "}" closing an inner block
	// is not the suffix's "}".
	next := strings.TrimRight(firstLineIndented(suffix), " \t\r")
	if strings.TrimSpace(next) != "" {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if i > 0 && strings.TrimRight(l, " \t\r") == next {
				s = strings.TrimRight(strings.Join(lines[:i], "\n"), " \t\r\n")
				break
			}
		}
	}
	return trimOverlap(s, strings.TrimSpace(restOfLine))
}

// firstLineIndented is the first non-blank line of text, with its
// indentation.
func firstLineIndented(text string) string {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) != "" {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

// firstLine is the first non-blank line of text, trimmed.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// trimOverlap removes the end of s that the text after the cursor already
// holds: all of it, or a tail of closing punctuation ("a, b)" before ")").
func trimOverlap(s, rest string) string {
	if rest == "" || s == "" {
		return s
	}
	if strings.HasSuffix(s, rest) {
		return strings.TrimRight(s[:len(s)-len(rest)], " \t")
	}
	for k := min(len(s), len(rest)); k > 0; k-- {
		tail := s[len(s)-k:]
		if strings.HasPrefix(rest, tail) && closers(tail) {
			return s[:len(s)-k]
		}
	}
	return s
}

// closers reports whether t is only closing punctuation and quotes.
func closers(t string) bool {
	for i := 0; i < len(t); i++ {
		if !strings.ContainsRune(")]}>\"'`;, ", rune(t[i])) {
			return false
		}
	}
	return true
}
