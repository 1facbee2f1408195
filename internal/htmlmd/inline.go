package htmlmd

import "strings"

// mark is an open inline span: emphasis, strikethrough, a link. Its
// opening delimiter is written just before the first visible content
// inside it, so that "<b> x</b>" gives "**x**" and an empty link gives
// nothing; its closing one only if the opening one was written.
type mark struct {
	kind  string // "strong", "em", "del", "q", "link"
	open  string
	close string
	shown bool
	// plain is set on a link whose text pairs its brackets and holds no
	// "](": brackets in it need no backslash ("[[1]](#cite)").
	plain bool
}

// inline gathers a paragraph's inline content, collapsing white space as
// a browser does outside pre: runs of spaces, tabs and newlines (and
// no-break spaces) become one space, none at the start or end.
type inline struct {
	b     strings.Builder
	space bool // white space seen since the last content
	brk   int  // <br>s seen since the last content
	marks []mark
	// Where a backslash was put before a '*' or '_' of the text, and
	// whether the paragraph has '*' of its own emphasis: a lone one cannot
	// pair with anything, and take removes its backslash.
	stars, unders []int
	emStars       bool
	// elide is set where an element was left out: the space before it
	// goes if punctuation follows ("Example ¶," gives "Example,").
	elide bool
}

// content readies the buffer for visible content: the pending break or
// space, then the delimiters of the marks not yet shown.
func (in *inline) content() {
	if in.b.Len() > 0 {
		switch {
		case in.brk >= 2:
			// Two <br>s in a row are how many pages separate paragraphs.
			in.closeShown()
			in.b.WriteString("\n\n")
		case in.brk == 1:
			in.b.WriteString("  \n")
		case in.space:
			in.b.WriteByte(' ')
		}
	}
	in.brk, in.space, in.elide = 0, false, false
	for i := range in.marks {
		if !in.marks[i].shown {
			in.b.WriteString(in.marks[i].open)
			in.marks[i].shown = true
			in.emStars = in.emStars || strings.HasPrefix(in.marks[i].open, "*")
		}
	}
}

// closeShown writes the closing delimiters of the shown marks, innermost
// first, and makes them pending again for the content that follows.
func (in *inline) closeShown() {
	for i := len(in.marks) - 1; i >= 0; i-- {
		if in.marks[i].shown {
			in.b.WriteString(in.marks[i].close)
			in.marks[i].shown = false
		}
	}
}

func (in *inline) push(m mark) { in.marks = append(in.marks, m) }

func (in *inline) pop() {
	m := in.marks[len(in.marks)-1]
	in.marks = in.marks[:len(in.marks)-1]
	if m.shown {
		in.b.WriteString(m.close)
	}
}

func (in *inline) has(kind string) bool {
	for _, m := range in.marks {
		if m.kind == kind {
			return true
		}
	}
	return false
}

func (in *inline) br() { in.brk++ }

// raw writes Markdown as it is: a code span, an image.
func (in *inline) raw(s string) {
	in.content()
	in.b.WriteString(s)
}

// take returns the paragraph gathered so far, with the shown marks
// closed, and empties the buffer; the marks stay open for what follows.
func (in *inline) take() string {
	in.closeShown()
	s := in.b.String()
	star, under := -1, -1
	if len(in.stars) == 1 && !in.emStars {
		star = in.stars[0]
	}
	if len(in.unders) == 1 {
		under = in.unders[0]
	}
	for _, i := range []int{max(star, under), min(star, under)} {
		if i >= 0 {
			s = s[:i] + s[i+1:]
		}
	}
	in.b.Reset()
	in.space, in.brk = false, 0
	in.stars, in.unders, in.emStars, in.elide = in.stars[:0], in.unders[:0], false, false
	return s
}

// isNBSP reports whether s[i:] starts with U+00A0.
func isNBSP(s string, i int) bool { return s[i] == 0xC2 && i+1 < len(s) && s[i+1] == 0xA0 }

// text adds text, collapsing its white space and escaping what Markdown
// would otherwise read as markup.
func (in *inline) text(s string) {
	strict := false // brackets may end the link's text early
	for k := len(in.marks) - 1; k >= 0; k-- {
		if in.marks[k].kind == "link" {
			strict = !in.marks[k].plain
			break
		}
	}
	for i := 0; i < len(s); {
		if isSpace(s[i]) {
			in.space = true
			i++
			continue
		}
		if isNBSP(s, i) {
			in.space = true
			i += 2
			continue
		}
		j := i + 1
		for j < len(s) && !isSpace(s[j]) && !isNBSP(s, j) {
			j++
		}
		if in.elide && strings.IndexByte(",.;:!?)", s[i]) >= 0 {
			in.space = false
		}
		in.content()
		in.word(s[i:j], strict)
		i = j
	}
}

// special are the bytes that may need a backslash in text.
const special = "\\*_`[]<&~"

// word writes a run of text without white space, escaping only what
// would change meaning: a backslash before punctuation, '*' and '_' that
// could delimit emphasis ("snake_case" and "2 * 3" stay as they are),
// backticks, brackets that could make a link, '<' that could open a tag,
// '&' that could start an entity, "~~". A line's start (#, -, 1., >) is
// the paragraph's business: see escapeLines. strict is set inside a link
// whose text does not pair its brackets: all of them are escaped there.
func (in *inline) word(w string, strict bool) {
	if !strings.ContainsAny(w, special) {
		in.b.WriteString(w)
		return
	}
	for k := 0; k < len(w); k++ {
		c := w[k]
		var next byte
		if k+1 < len(w) {
			next = w[k+1]
		}
		esc := false
		switch c {
		case '\\':
			esc = isPunct(next)
		case '*':
			esc = next != 0 || !in.afterSpace()
		case '_':
			esc = !isWordByte(in.last()) || !isWordByte(next)
		case '`':
			esc = true
		case '[':
			esc = strict
		case ']':
			esc = strict || next == '('
		case '<':
			esc = isLetter(next) || next == '/' || next == '!' || next == '?'
		case '&':
			esc = entityLike(w[k+1:])
		case '~':
			esc = next == '~' || in.last() == '~'
		}
		if esc {
			switch c {
			case '*':
				in.stars = append(in.stars, in.b.Len())
			case '_':
				in.unders = append(in.unders, in.b.Len())
			}
			in.b.WriteByte('\\')
		}
		in.b.WriteByte(c)
	}
}

// last is the last byte written, 0 at the start.
func (in *inline) last() byte {
	s := in.b.String()
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}

func (in *inline) afterSpace() bool {
	c := in.last()
	return c == 0 || c == ' ' || c == '\n'
}

func isWordByte(c byte) bool {
	return c >= 0x80 || '0' <= c && c <= '9' || isLetter(c)
}

func isPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

// entityLike reports whether s (what follows a '&') reads as the rest of
// a character reference: a name or number and ';'.
func entityLike(s string) bool {
	for i := 0; i < len(s) && i < 40; i++ {
		c := s[i]
		switch {
		case c == ';':
			return i > 0
		case isWordByte(c) && c < 0x80, c == '#' && i == 0:
		default:
			return false
		}
	}
	return false
}

// escapeLines escapes, in each line of a paragraph, a start that Markdown
// would read as a block: a heading, a list item, a quote, a fence, a rule
// or setext underline, a link reference definition.
func escapeLines(p string) string {
	if !strings.Contains(p, "\n") {
		return escapeLine(p)
	}
	lines := strings.Split(p, "\n")
	for i, l := range lines {
		lines[i] = escapeLine(l)
	}
	return strings.Join(lines, "\n")
}

func escapeLine(l string) string {
	if l == "" {
		return l
	}
	endOrSpace := func(i int) bool { return i >= len(l) || l[i] == ' ' || l[i] == '\t' }
	switch c := l[0]; {
	case c == '#':
		n := 1
		for n < len(l) && l[n] == '#' {
			n++
		}
		if n <= 6 && endOrSpace(n) {
			return `\` + l
		}
	case c == '-' || c == '+' || c == '*':
		if endOrSpace(1) || isRule(strings.TrimRight(l, " ")) {
			return `\` + l
		}
	case c == '=':
		if strings.Trim(l, "= ") == "" {
			return `\` + l
		}
	case c == '>':
		return `\` + l
	case c == '`' && strings.HasPrefix(l, "```"), c == '~' && strings.HasPrefix(l, "~~~"):
		return `\` + l
	case c == '_':
		if isRule(strings.TrimRight(l, " ")) {
			return `\` + l
		}
	case c == '[':
		if strings.Contains(l, "]:") {
			return `\` + l
		}
	case '0' <= c && c <= '9':
		n := 1
		for n < len(l) && '0' <= l[n] && l[n] <= '9' {
			n++
		}
		if n <= 9 && n < len(l) && (l[n] == '.' || l[n] == ')') && endOrSpace(n+1) {
			return l[:n] + `\` + l[n:]
		}
	}
	return l
}

// isRule reports whether l is a thematic break: three or more of one of
// -, * or _, with spaces between.
func isRule(l string) bool {
	n := 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == l[0]:
			n++
		case l[i] == ' ' || l[i] == '\t':
		default:
			return false
		}
	}
	return n >= 3
}
