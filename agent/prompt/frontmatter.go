package prompt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Frontmatter is the block between two "---" lines that may open a command
// or skill file. It is read as the flat subset of YAML that these files use,
// with every value kept as text:
//
//   - key: value lines, one key per line, each key at most once;
//   - "double" and 'single' quoted values (with YAML's escapes), which may
//     run over several lines;
//   - | and > block values (with -, + chomping), and plain values continued
//     on more-indented lines, folded with spaces;
//   - a key followed by an indented list or map keeps that block as its
//     text, dedented;
//   - blank lines and # comments are skipped, and " #" ends a plain value.
//
// It is more lenient than YAML where that helps files written for other
// tools: a plain value may hold ": " ("description: Use when: x"), and a
// flow list stays text ("argument-hint: [message]").
type Frontmatter map[string]string

// maxFrontmatterLines bounds the block; a longer one is not front matter.
const maxFrontmatterLines = 1000

// splitFrontmatter separates a Markdown file's front matter from its body.
// A file that does not start with a "---" line has no front matter: fields
// is nil and body is the whole file.
func splitFrontmatter(src string) (fields Frontmatter, body string, err error) {
	src = strings.TrimPrefix(src, "\uFEFF")
	first, rest, _ := strings.Cut(src, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return nil, src, nil
	}
	var lines []string
	for n := 2; ; n++ {
		if rest == "" {
			return nil, "", fmt.Errorf("the front matter opened by --- on line 1 has no closing --- line")
		}
		if n > maxFrontmatterLines {
			return nil, "", fmt.Errorf("the front matter opened by --- on line 1 is not closed within %d lines", maxFrontmatterLines)
		}
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimRight(line, " \t") == "---" {
			break
		}
		lines = append(lines, line)
	}
	fields, err = parseFrontmatter(lines)
	if err != nil {
		return nil, "", err
	}
	return fields, rest, nil
}

// parseFrontmatter reads the lines between the two "---". Line numbers in
// errors count the opening "---" as line 1.
func parseFrontmatter(lines []string) (Frontmatter, error) {
	fields := Frontmatter{}
	seen := map[string]int{}
	for i := 0; i < len(lines); {
		line := lines[i]
		lineNo := i + 2
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			i++
			continue
		}
		if indent(line) > 0 {
			return nil, fmt.Errorf("line %d: indented line %q belongs to no key; put keys at the start of the line", lineNo, trimmed)
		}
		key, value, ok := strings.Cut(line, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.HasPrefix(key, "- ") || key == "-" {
			return nil, fmt.Errorf("line %d: %q is not a key: value line", lineNo, truncateText(trimmed, 60))
		}
		key = unquoteKey(key)
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("line %d: key %q appears twice (first on line %d); keep one", lineNo, key, first)
		}
		seen[key] = lineNo
		// The value's continuation: the following lines that are blank or
		// indented.
		j := i + 1
		for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || indent(lines[j]) > 0) {
			j++
		}
		more := lines[i+1 : j]
		v, err := parseValue(strings.TrimSpace(value), more, lineNo)
		if err != nil {
			return nil, err
		}
		fields[key] = v
		i = j
	}
	return fields, nil
}

// parseValue reads one key's value: the text after the colon and the
// indented or blank lines that follow it.
func parseValue(head string, more []string, lineNo int) (string, error) {
	switch {
	case strings.HasPrefix(head, `"`), strings.HasPrefix(head, "'"):
		return parseQuoted(head, more, lineNo)
	case isBlockIndicator(head):
		return parseBlock(head, more), nil
	case head == "" || strings.HasPrefix(head, "#"):
		return parseNested(more), nil
	}
	// A plain value, maybe folded over more-indented lines.
	parts := []string{stripComment(head)}
	for _, l := range more {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			continue
		}
		parts = append(parts, stripComment(t))
	}
	return foldLines(parts), nil
}

// parseNested keeps an indented block (a list or map under the key) as its
// text, dedented; an indented plain text block is folded like YAML does.
func parseNested(more []string) string {
	lines := trimBlank(more)
	if len(lines) == 0 {
		return ""
	}
	first := strings.TrimSpace(lines[0])
	k, _, isMap := strings.Cut(first, ":")
	if strings.HasPrefix(first, "- ") || first == "-" || (isMap && !strings.ContainsAny(k, " \t")) {
		return strings.Join(dedent(lines), "\n")
	}
	var parts []string
	for _, l := range lines {
		parts = append(parts, stripComment(strings.TrimSpace(l)))
	}
	return foldLines(parts)
}

// foldLines joins the lines of a plain value: single line breaks become
// spaces, blank lines become line breaks.
func foldLines(parts []string) string {
	var b strings.Builder
	breaks := 0
	for _, p := range parts {
		if p == "" {
			breaks++
			continue
		}
		if b.Len() > 0 {
			if breaks > 0 {
				b.WriteString(strings.Repeat("\n", breaks))
			} else {
				b.WriteByte(' ')
			}
		}
		breaks = 0
		b.WriteString(p)
	}
	return b.String()
}

func isBlockIndicator(s string) bool {
	s = stripComment(s)
	if s == "" || (s[0] != '|' && s[0] != '>') {
		return false
	}
	return strings.Trim(s[1:], "+-0123456789") == ""
}

// parseBlock reads a | (literal) or > (folded) block value.
func parseBlock(head string, more []string) string {
	head = stripComment(head)
	literal := head[0] == '|'
	chomp := byte(0)
	if strings.ContainsRune(head, '-') {
		chomp = '-'
	} else if strings.ContainsRune(head, '+') {
		chomp = '+'
	}
	lines := dedent(more)
	// Trailing blank lines matter only to chomping.
	end := len(lines)
	for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	trailing := len(lines) - end
	lines = lines[:end]
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" && !literal {
		lines = lines[1:]
	}
	var text string
	if literal {
		text = strings.Join(lines, "\n")
	} else {
		var b strings.Builder
		prevMore := false
		for i, l := range lines {
			more := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
			switch {
			case i == 0:
			case l == "":
				b.WriteByte('\n')
			case lines[i-1] == "":
				// The blank line already broke the text.
			case more || prevMore:
				b.WriteByte('\n')
			default:
				b.WriteByte(' ')
			}
			b.WriteString(l)
			prevMore = more
		}
		text = b.String()
	}
	switch {
	case text == "":
		return ""
	case chomp == '-':
		return text
	case chomp == '+':
		return text + strings.Repeat("\n", trailing+1)
	default:
		return text + "\n"
	}
}

// parseQuoted reads a quoted value that may continue on the following lines.
func parseQuoted(head string, more []string, lineNo int) (string, error) {
	q := head[0]
	text := head[1:]
	used := 0
	for {
		end := closingQuote(text, q)
		if end >= 0 {
			if rest := strings.TrimSpace(text[end+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("line %d: unexpected %q after the closing quote", lineNo+used, truncateText(rest, 40))
			}
			text = text[:end]
			break
		}
		if used == len(more) {
			return "", fmt.Errorf("line %d: the quoted value has no closing %c", lineNo, q)
		}
		// A line break inside quotes folds like a plain value.
		next := strings.TrimSpace(more[used])
		used++
		switch {
		case next == "":
			text += "\n"
		case strings.HasSuffix(text, "\n"):
			text += next
		default:
			text = strings.TrimRight(text, " \t") + " " + next
		}
	}
	if used < len(more) {
		for _, l := range more[used:] {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				return "", fmt.Errorf("line %d: unexpected indented line after a quoted value", lineNo+used+1)
			}
		}
	}
	if q == '\'' {
		return strings.ReplaceAll(text, "''", "'"), nil
	}
	return unescapeDouble(text), nil
}

// closingQuote returns the index of the quote that closes a value opened
// with q, or -1.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case q == '\'' && s[i] == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// unescapeDouble applies YAML's double-quoted escapes; an unknown escape is
// kept as written.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '"', '\\', '/', ' ':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+size <= len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+1+size], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					b.WriteRune(rune(r))
					i += size
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func unquoteKey(k string) string {
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		return k[1 : len(k)-1]
	}
	return k
}

// stripComment removes a " #" comment from a plain value.
func stripComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "\t#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func indent(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// dedent removes the indentation of the first non-blank line from every
// line; blank lines become empty.
func dedent(lines []string) []string {
	n := -1
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n = indent(l)
			break
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			out[i] = ""
		case indent(l) >= n:
			out[i] = strings.TrimRight(l[n:], " \t\r")
		default:
			out[i] = strings.TrimSpace(l)
		}
	}
	return out
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// truncateText cuts s to at most n bytes on a rune boundary, marking the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeCut(s, n)] + "…"
}

// runeCut returns the largest index at most n that does not split a rune.
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
