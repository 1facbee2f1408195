package htmlmd

import (
	"context"
	"net/url"
	"strconv"
	"strings"
)

type blockKind uint8

const (
	kPara    blockKind = iota // inline Markdown whose line starts are not yet escaped
	kHeading                  // "## ..."
	kList
	kCode // a fenced code block
	kQuote
	kTable
	kRule
	kTerm // a definition list
)

// block is one rendered block of a container.
type block struct {
	kind    blockKind
	text    string
	ordered bool     // kList: an ol
	alt     bool     // kList: its markers are the alternate ones ("*", ")")
	items   []string // kList: the items on one line each, for a table cell
}

// md is the block's Markdown.
func (b block) md() string {
	if b.kind == kPara {
		return escapeLines(b.text)
	}
	return b.text
}

// maxNest bounds how deep lists and quotes nest in the output; deeper ones
// are rendered as their content, so that prefixing lines stays cheap.
const maxNest = 16

// conv is what every renderer of one conversion shares.
type conv struct {
	ctx  context.Context
	base *url.URL
	n    int
	err  error
}

// renderer renders the content of one container (the document, a list
// item, a quote, a table cell) into blocks.
type renderer struct {
	c         *conv
	blocks    []block
	in        inline
	nest      int // lists and quotes around this container
	inHeading int // > 0 inside a heading
}

func (r *renderer) sub(nest int) *renderer {
	return &renderer{c: r.c, nest: nest}
}

func (r *renderer) add(b block) {
	if b.text != "" {
		r.blocks = append(r.blocks, b)
	}
}

// flush ends the paragraph being gathered.
func (r *renderer) flush() {
	t := r.in.take()
	if t == "" {
		return
	}
	if !strings.Contains(t, "\n\n") {
		r.add(block{kind: kPara, text: t})
		return
	}
	for _, p := range strings.Split(t, "\n\n") {
		r.add(block{kind: kPara, text: p})
	}
}

// join joins blocks with blank lines; inside a list item (tight), a list
// follows the paragraph before it on the next line, as in "- a\n  - b".
func join(blocks []block, tight bool) string {
	var sb strings.Builder
	for i, b := range blocks {
		if i > 0 {
			if tight && b.kind == kList && blocks[i-1].kind == kPara {
				sb.WriteByte('\n')
			} else {
				sb.WriteString("\n\n")
			}
		}
		sb.WriteString(b.md())
	}
	return sb.String()
}

// flat renders what fn adds as one line of inline Markdown: a heading, a
// caption, a term.
func (r *renderer) flat(fn func()) string {
	mark := len(r.blocks)
	fn()
	r.flush()
	parts := make([]string, 0, len(r.blocks)-mark)
	for _, b := range r.blocks[mark:] {
		parts = append(parts, b.text)
	}
	r.blocks = r.blocks[:mark]
	return oneLine(strings.Join(parts, " "))
}

// oneLine turns line breaks into spaces.
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	s = strings.ReplaceAll(s, "  \n", " ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func (r *renderer) children(n *node) {
	for c := n.first; c != nil; c = c.next {
		r.node(c)
	}
}

func (r *renderer) node(n *node) {
	if r.c.err != nil {
		return
	}
	if r.c.n++; r.c.n%checkEvery == 0 {
		if err := r.c.ctx.Err(); err != nil {
			r.c.err = err
			return
		}
	}
	if n.tag == "" {
		r.in.text(n.text)
		return
	}
	if dropped(n) {
		return
	}
	switch t := n.tag; t {
	case "br":
		r.in.br()
	case "hr":
		r.flush()
		r.add(block{kind: kRule, text: "---"})
	case "h1", "h2", "h3", "h4", "h5", "h6":
		r.heading(n)
	case "pre", "xmp", "listing", "plaintext", "textarea":
		// A textarea's text is shown as it is; pkg.go.dev has its
		// examples' code in one.
		r.pre(n)
	case "ul", "ol", "menu", "dir":
		r.list(n)
	case "blockquote":
		r.quote(n)
	case "table":
		r.table(n)
	case "dl":
		r.defs(n)
	case "a":
		r.link(n)
	case "img":
		r.image(n)
	case "input":
		if _, ok := n.attr("checked"); ok {
			r.in.raw("[x]")
		} else {
			r.in.raw("[ ]")
		}
	case "strong", "b":
		r.wrap(n, "strong", "**", "**")
	case "em", "i", "dfn":
		r.wrap(n, "em", "*", "*")
	case "del", "s", "strike":
		r.wrap(n, "del", "~~", "~~")
	case "q":
		r.wrap(n, "q", `"`, `"`)
	case "code", "kbd", "samp", "tt":
		r.code(n)
	case "math":
		if alt := n.get("alttext"); alt != "" {
			r.in.text(alt)
		} else {
			r.children(n)
		}
	default:
		if isBlock(t) {
			r.flush()
			r.children(n)
			r.flush()
		} else {
			r.children(n)
		}
	}
}

// dropped reports whether an element is left out with all it holds: what
// a reader of the page does not see as its text (head, scripts, styles,
// embedded media, form controls, hidden content).
func dropped(n *node) bool {
	switch n.tag {
	case "head", "title", "script", "style", "noscript", "template", "svg", "iframe", "object", "embed",
		"canvas", "audio", "video", "select", "option", "optgroup", "datalist", "button",
		"progress", "meter", "frameset", "frame", "noframes", "noembed", "map", "area",
		"meta", "link", "base", "source", "track", "param", "colgroup", "col", "slot":
		return true
	case "dialog":
		if _, ok := n.attr("open"); !ok {
			return true
		}
	case "input":
		// A checkbox's state is content (GitHub's task lists); other
		// controls are not.
		if !strings.EqualFold(n.get("type"), "checkbox") {
			return true
		}
	}
	for _, a := range n.attrs {
		switch a.key {
		case "hidden":
			if !strings.EqualFold(a.val, "until-found") {
				return true
			}
		case "aria-hidden":
			// Decoration hidden from screen readers; but an image with
			// an alt text under it is what sighted readers see
			// (Wikipedia shows formulas so, beside hidden MathML).
			if strings.EqualFold(strings.TrimSpace(a.val), "true") && (n.tag != "img" || strings.TrimSpace(n.get("alt")) == "") {
				return true
			}
		case "style":
			if hiddenStyle(a.val) {
				return true
			}
		}
	}
	return false
}

// hiddenStyle reports whether an inline style hides the element.
func hiddenStyle(s string) bool {
	if !strings.Contains(s, "none") && !strings.Contains(s, "hidden") {
		return false
	}
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
}

// isBlock reports whether an element is rendered as a block of its own
// (not otherwise handled by node).
func isBlock(tag string) bool {
	switch tag {
	case "#root", "address", "article", "aside", "body", "center", "details", "dialog", "dd", "div", "dt",
		"fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "main", "nav", "p",
		"section", "summary", "legend", "search", "li", "tr", "td", "th", "caption", "thead", "tbody",
		"tfoot", "html", "frameset":
		return true
	}
	return false
}

func (r *renderer) heading(n *node) {
	r.flush()
	r.inHeading++
	text := r.flat(func() { r.children(n) })
	r.inHeading--
	if text == "" {
		return
	}
	// A heading's closing run of '#' would be read as decoration.
	if k := len(strings.TrimRight(text, "#")); k < len(text) && (k == 0 || text[k-1] == ' ') {
		text = text[:k] + `\` + text[k:]
	}
	r.add(block{kind: kHeading, text: strings.Repeat("#", int(n.tag[1]-'0')) + " " + text})
}

func (r *renderer) wrap(n *node, kind, open, close string) {
	if r.in.has(kind) {
		r.children(n)
		return
	}
	r.in.push(mark{kind: kind, open: open, close: close})
	r.children(n)
	r.in.pop()
}

// textContent writes the text n holds, a <br> as a newline, leaving out
// dropped elements.
func textContent(sb *strings.Builder, n *node) {
	for c := n.first; c != nil; c = c.next {
		switch {
		case c.tag == "":
			sb.WriteString(c.text)
		case c.tag == "br":
			sb.WriteByte('\n')
		case !dropped(c):
			textContent(sb, c)
		}
	}
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	most, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			most = max(most, n)
		} else {
			n = 0
		}
	}
	return most
}

// code writes an inline code span, with a fence of more backticks than
// any run inside it.
func (r *renderer) code(n *node) {
	var sb strings.Builder
	textContent(&sb, n)
	s := sb.String()
	core := strings.Join(strings.FieldsFunc(s, func(c rune) bool { return c < 0x80 && isSpace(byte(c)) || c == 0xA0 }), " ")
	if core == "" {
		if s != "" {
			r.in.space = true
		}
		return
	}
	if s[0] == ' ' || s[0] == '\n' || s[0] == '\t' {
		r.in.space = true
	}
	fence := strings.Repeat("`", longestRun(core, '`')+1)
	pad := ""
	if core[0] == '`' || core[len(core)-1] == '`' {
		pad = " "
	}
	r.in.raw(fence + pad + core + pad + fence)
	if e := s[len(s)-1]; e == ' ' || e == '\n' || e == '\t' {
		r.in.space = true
	}
}

// pre writes a fenced code block: the text verbatim (tags inside are
// dropped, their text kept), the language from the class of the pre, its
// code or the element around it.
func (r *renderer) pre(n *node) {
	r.flush()
	var sb strings.Builder
	textContent(&sb, n)
	s := strings.TrimPrefix(sb.String(), "\n")
	s = strings.TrimRight(s, " \t\n")
	if strings.TrimSpace(s) == "" {
		return
	}
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	r.add(block{kind: kCode, text: fence + codeLang(n) + "\n" + s + "\n" + fence})
}

// codeLang finds a code block's language in the classes sites use:
// "language-go" (Prism, highlight.js, most Markdown renderers), "lang-go",
// GitHub's "highlight-source-go", Sphinx's "highlight-python", MDN's
// "brush: js".
func codeLang(pre *node) string {
	cands := []*node{pre}
	for c := pre.first; c != nil; c = c.next {
		if c.tag == "code" {
			cands = append(cands, c)
			break
		}
	}
	if p := pre.parent; p != nil {
		cands = append(cands, p)
		if p.parent != nil {
			cands = append(cands, p.parent)
		}
	}
	for _, n := range cands {
		if l := n.get("data-lang"); l != "" {
			return cleanLang(l)
		}
		classes := strings.Fields(n.get("class"))
		for i, cl := range classes {
			if cl == "brush:" && i+1 < len(classes) {
				return cleanLang(classes[i+1]) // MDN's "brush: js"
			}
			for _, pre := range []string{"language-", "lang-", "highlight-source-", "highlight-"} {
				if l, ok := strings.CutPrefix(cl, pre); ok && l != "" {
					return cleanLang(l)
				}
			}
		}
	}
	return ""
}

// cleanLang keeps what can follow a fence: letters, digits and + # . _ -.
func cleanLang(l string) string {
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !isWordByte(c) || c >= 0x80 {
			if c != '+' && c != '#' && c != '.' && c != '_' && c != '-' {
				return l[:i]
			}
		}
	}
	return l
}

func (r *renderer) quote(n *node) {
	r.flush()
	if r.nest >= maxNest {
		r.children(n)
		r.flush()
		return
	}
	s := r.sub(r.nest + 1)
	s.children(n)
	s.flush()
	body := join(s.blocks, false)
	if body == "" {
		return
	}
	r.add(block{kind: kQuote, text: prefixLines(body, "> ", "> ", ">")})
}

// prefixLines puts first before the first line, rest before the others,
// and empty before empty ones.
func prefixLines(s, first, rest, empty string) string {
	var sb strings.Builder
	for i, l := range strings.Split(s, "\n") {
		switch {
		case i > 0:
			sb.WriteByte('\n')
			if l == "" {
				sb.WriteString(empty)
			} else {
				sb.WriteString(rest)
			}
		default:
			sb.WriteString(first)
		}
		sb.WriteString(l)
	}
	return sb.String()
}

// list writes a ul or ol: one item per li, with content outside any li
// (a list nested straight in a list, stray text) joined to the item before.
func (r *renderer) list(n *node) {
	r.flush()
	if r.nest >= maxNest {
		r.children(n)
		r.flush()
		return
	}
	ordered := n.tag == "ol"
	num := 1
	if v, err := strconv.Atoi(strings.TrimSpace(n.get("start"))); err == nil && ordered && v >= 0 && v < 1e9 {
		num = v
	}
	var groups [][]*node
	for c := n.first; c != nil; c = c.next {
		switch {
		case c.tag == "li":
			groups = append(groups, []*node{c})
		case c.tag == "" && strings.TrimSpace(c.text) == "":
		case len(groups) == 0:
			groups = append(groups, []*node{c})
		default:
			groups[len(groups)-1] = append(groups[len(groups)-1], c)
		}
	}
	alt := false
	if k := len(r.blocks); k > 0 && r.blocks[k-1].kind == kList && r.blocks[k-1].ordered == ordered {
		// Two lists in a row would be read as one.
		alt = !r.blocks[k-1].alt
	}
	var items, flat []string
	loose := false
	for _, g := range groups {
		s := r.sub(r.nest + 1)
		for _, c := range g {
			if c.tag == "li" {
				if v, err := strconv.Atoi(strings.TrimSpace(c.get("value"))); err == nil && ordered && v >= 0 && v < 1e9 {
					num = v
				}
				if !dropped(c) {
					s.children(c)
				}
			} else {
				s.node(c)
			}
		}
		s.flush()
		body := join(s.blocks, true)
		if body == "" {
			continue
		}
		marker := "- "
		switch {
		case ordered && alt:
			marker = strconv.Itoa(num) + ") "
		case ordered:
			marker = strconv.Itoa(num) + ". "
		case alt:
			marker = "* "
		}
		num++
		if ordered {
			flat = append(flat, oneLine(marker+body))
		} else {
			flat = append(flat, oneLine(body))
		}
		loose = loose || strings.Contains(body, "\n\n")
		items = append(items, prefixLines(body, marker, strings.Repeat(" ", len(marker)), ""))
	}
	sep := "\n"
	if loose {
		sep = "\n\n"
	}
	r.add(block{kind: kList, text: strings.Join(items, sep), ordered: ordered, alt: alt, items: flat})
}

// defs writes a definition list: each term in bold on a line of its own,
// each definition after it on lines starting ": ".
func (r *renderer) defs(n *node) {
	r.flush()
	if r.nest >= maxNest {
		r.children(n)
		r.flush()
		return
	}
	var sb strings.Builder
	lastDef := false
	var walk func(n *node)
	walk = func(n *node) {
		for c := n.first; c != nil; c = c.next {
			if c.tag == "" {
				if strings.TrimSpace(c.text) == "" {
					continue
				}
			} else if dropped(c) {
				continue
			}
			var text string
			def := true
			switch c.tag {
			case "div":
				walk(c)
				continue
			case "dt":
				def = false
				text = r.flat(func() { r.wrap(c, "strong", "**", "**") })
			default:
				s := r.sub(r.nest + 1)
				if c.tag == "dd" {
					s.children(c)
				} else {
					s.node(c)
				}
				s.flush()
				if body := join(s.blocks, true); body != "" {
					text = prefixLines(body, ": ", "  ", "")
				}
			}
			if text == "" {
				continue
			}
			if sb.Len() > 0 {
				if lastDef && !def {
					sb.WriteString("\n\n")
				} else {
					sb.WriteByte('\n')
				}
			}
			sb.WriteString(text)
			lastDef = def
		}
	}
	walk(n)
	r.add(block{kind: kTerm, text: sb.String()})
}

// resolve returns the URL a link or image points to, resolved against
// the page and written as a Markdown destination; ok is false for none,
// and for script and data URLs, which are no use to a reader.
func (c *conv) resolve(ref string) (string, bool) {
	// Browsers trim C0 controls and spaces from a URL's ends and drop
	// tabs and newlines inside it (java&#13;script: is javascript:).
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(ref, "\t\n\r") {
		ref = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, ref)
	}
	if ref == "" || scriptURL(ref) {
		return "", false
	}
	if u, err := url.Parse(ref); err == nil {
		if c.base != nil {
			u = c.base.ResolveReference(u)
		}
		ref = u.String()
		if scriptURL(ref) { // a relative link under a <base href="javascript:...">
			return "", false
		}
	}
	return destination(ref), true
}

// scriptURL reports script and data URLs, which are no use to a reader.
func scriptURL(ref string) bool {
	if i := strings.IndexByte(ref, ':'); i > 0 {
		switch strings.ToLower(ref[:i]) {
		case "javascript", "vbscript", "data":
			return true
		}
	}
	return false
}

// destination escapes what would end a Markdown link destination early:
// spaces, angle brackets, parentheses that do not pair.
func destination(u string) string {
	if strings.ContainsAny(u, " <>") {
		u = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(u, " ", "%20"), "<", "%3C"), ">", "%3E")
	}
	if strings.ContainsAny(u, "()") {
		depth := 0
		for i := 0; i < len(u) && depth >= 0; i++ {
			switch u[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if depth != 0 {
			u = strings.ReplaceAll(strings.ReplaceAll(u, "(", "%28"), ")", "%29")
		}
	}
	return u
}

// title is a link's or image's title as Markdown writes it after the
// destination, or "".
func title(n *node) string {
	t := strings.Join(strings.Fields(n.get("title")), " ")
	if t == "" {
		return ""
	}
	if strings.ContainsAny(t, `\"`) {
		t = strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), `"`, `\"`)
	}
	return ` "` + t + `"`
}

func (r *renderer) link(n *node) {
	href := strings.TrimSpace(n.get("href"))
	if strings.HasPrefix(href, "#") {
		// Links within the page that only decorate: a heading's link to
		// itself, a permalink sign, a "skip to content" link.
		var sb strings.Builder
		textContent(&sb, n)
		text := strings.TrimSpace(sb.String())
		switch {
		case text == "¶" || text == "§" || text == "#" || text == "🔗",
			len(text) > 8 && strings.EqualFold(text[:8], "skip to "):
			r.in.elide = true
			return
		case r.inHeading > 0:
			r.children(n)
			return
		}
	}
	dest, ok := r.c.resolve(href)
	if !ok || r.in.has("link") {
		r.children(n)
		return
	}
	var sb strings.Builder
	textContent(&sb, n)
	t := sb.String()
	plain := pairedBrackets(t) && !strings.Contains(t, "](")
	r.in.push(mark{kind: "link", open: "[", close: "](" + dest + title(n) + ")", plain: plain})
	r.children(n)
	r.in.pop()
}

// pairedBrackets reports whether every '[' in s is closed by a ']' after
// it, and every ']' closes one.
func pairedBrackets(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

func (r *renderer) image(n *node) {
	src := n.get("src")
	if src == "" {
		src = n.get("data-src")
	}
	if src == "" {
		if f := strings.Fields(strings.Split(n.get("srcset"), ",")[0]); len(f) > 0 {
			src = f[0]
		}
	}
	alt := strings.Join(strings.Fields(n.get("alt")), " ")
	dest, ok := r.c.resolve(src)
	if !ok {
		r.in.text(alt)
		return
	}
	r.in.raw("![" + escapeAlt(alt) + "](" + dest + title(n) + ")")
}

// escapeAlt escapes an image's alt text for its brackets: the brackets,
// and a backslash that would escape what follows.
func escapeAlt(alt string) string {
	if !strings.ContainsAny(alt, `[]\`) {
		return alt
	}
	var sb strings.Builder
	for i := 0; i < len(alt); i++ {
		c := alt[i]
		if c == '[' || c == ']' || c == '\\' && i+1 < len(alt) && isPunct(alt[i+1]) {
			sb.WriteByte('\\')
		}
		sb.WriteByte(c)
	}
	return sb.String()
}
