package htmlmd

import (
	"context"
	"html"
	"strings"
)

// node is an element or a run of text in the parsed document. Text nodes
// have no tag; their text has its entities decoded.
type node struct {
	tag    string // lower case; "" for text
	text   string
	attrs  []attr
	parent *node
	first  *node
	last   *node
	next   *node
}

type attr struct{ key, val string }

func (n *node) attr(key string) (string, bool) {
	for _, a := range n.attrs {
		if a.key == key {
			return a.val, true
		}
	}
	return "", false
}

func (n *node) get(key string) string {
	v, _ := n.attr(key)
	return v
}

func (n *node) append(c *node) {
	c.parent = n
	if n.last == nil {
		n.first = c
	} else {
		n.last.next = c
	}
	n.last = c
}

// maxDepth bounds how deep elements nest; deeper start tags are ignored
// (their content joins the deepest element), so that no input can make
// rendering recurse without bound.
const maxDepth = 256

// maxAttrs bounds the attributes kept of one tag.
const maxAttrs = 32

// checkEvery is how many tokens or nodes pass between two looks at the
// context.
const checkEvery = 4096

// parser builds the tree from the tokens, with the few repairs browsers
// make that change what a reader sees: a block start closes an open
// paragraph, a new list item or cell closes the previous one, an end tag
// closes the elements left open inside it, an end tag nothing opened is
// ignored.
type parser struct {
	src   string
	pos   int
	root  *node
	stack []*node
	text  strings.Builder // text not yet added to the open element
	base  string          // the first <base href>
	count int
}

func parse(ctx context.Context, src string) (*node, string, error) {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	p := &parser{src: src, root: &node{tag: "#root"}}
	p.stack = []*node{p.root}
	for p.pos < len(p.src) {
		if p.count++; p.count%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, "", err
			}
		}
		p.step()
	}
	p.flushText()
	return p.root, p.base, nil
}

func (p *parser) top() *node { return p.stack[len(p.stack)-1] }

// step consumes one token: a run of text, a tag, a comment or a
// declaration.
func (p *parser) step() {
	s := p.src
	i := p.pos
	if s[i] != '<' {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			j = len(s) - i
		}
		p.addText(s[i:i+j], true)
		p.pos = i + j
		return
	}
	if i+1 >= len(s) {
		p.addText("<", false)
		p.pos = len(s)
		return
	}
	c := s[i+1]
	switch {
	case isLetter(c):
		p.startTag()
	case c == '/':
		p.endTag()
	case c == '!':
		p.declaration()
	case c == '?':
		p.pos = skipPast(s, i+2, ">")
	default:
		p.addText("<", false)
		p.pos = i + 1
	}
}

// skipPast returns the index after the first end at or after i, or len(s).
func skipPast(s string, i int, end string) int {
	if j := strings.Index(s[i:], end); j >= 0 {
		return i + j + len(end)
	}
	return len(s)
}

func (p *parser) declaration() {
	s, i := p.src, p.pos
	switch {
	case strings.HasPrefix(s[i:], "<!--"):
		// A comment ends at the first "-->" ("--!>" too); "<!-->" and
		// "<!--->" are empty comments.
		j := i + 4
		if strings.HasPrefix(s[j:], ">") {
			p.pos = j + 1
			return
		}
		if strings.HasPrefix(s[j:], "->") {
			p.pos = j + 2
			return
		}
		end := len(s)
		for k := j; k < len(s); k++ {
			if s[k] == '-' && strings.HasPrefix(s[k:], "-->") {
				end = k + 3
				break
			}
			if s[k] == '-' && strings.HasPrefix(s[k:], "--!>") {
				end = k + 4
				break
			}
		}
		p.pos = end
	case len(s)-i >= 9 && s[i:i+9] == "<![CDATA[":
		// In HTML proper CDATA is a bogus comment, but a page that writes
		// it (XHTML, inline SVG) means the text.
		j := strings.Index(s[i+9:], "]]>")
		if j < 0 {
			p.addText(s[i+9:], false)
			p.pos = len(s)
			return
		}
		p.addText(s[i+9:i+9+j], false)
		p.pos = i + 9 + j + 3
	default:
		// <!DOCTYPE ...> and other bogus comments end at the first '>'.
		p.pos = skipPast(s, i+2, ">")
	}
}

// addText adds text to the open element, decoding its entities if
// decode. Consecutive runs ("a", "<", "b") become one text node.
func (p *parser) addText(t string, decode bool) {
	if decode && strings.IndexByte(t, '&') >= 0 {
		t = html.UnescapeString(t)
	}
	if strings.IndexByte(t, 0) >= 0 {
		t = strings.ReplaceAll(t, "\x00", "")
	}
	p.text.WriteString(t)
}

// flushText adds the pending text to the open element; every change to
// the tree calls it first.
func (p *parser) flushText() {
	if p.text.Len() == 0 {
		return
	}
	if p.top().tag == "head" && strings.TrimSpace(p.text.String()) != "" {
		// Text ends a head left open, as in a browser.
		p.stack = p.stack[:len(p.stack)-1]
	}
	p.top().append(&node{text: p.text.String()})
	p.text.Reset()
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// tagName reads a tag name at i, lower-cased.
func (p *parser) tagName(i int) (string, int) {
	s := p.src
	j := i
	for j < len(s) && !isSpace(s[j]) && s[j] != '/' && s[j] != '>' {
		j++
	}
	return lower(s[i:j]), j
}

// lower lower-cases ASCII letters, allocating only when there are upper
// case ones.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// attributes reads attributes from i up to and including the tag's '>'.
// ok is false when the input ends inside the tag, which then counts for
// nothing, as in a browser.
func (p *parser) attributes(i int, keep bool) (attrs []attr, selfClosing bool, end int, ok bool) {
	s := p.src
	for {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			if s[i] == '/' && i+1 < len(s) && s[i+1] == '>' {
				return attrs, true, i + 2, true
			}
			i++
		}
		if i >= len(s) {
			return nil, false, len(s), false
		}
		if s[i] == '>' {
			return attrs, false, i + 1, true
		}
		// A name may start with '='; it ends at space, '/', '>' or '='.
		j := i + 1
		for j < len(s) && !isSpace(s[j]) && s[j] != '/' && s[j] != '>' && s[j] != '=' {
			j++
		}
		name := lower(s[i:j])
		i = j
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i >= len(s) {
				return nil, false, len(s), false
			}
			if q := s[i]; q == '"' || q == '\'' {
				k := strings.IndexByte(s[i+1:], q)
				if k < 0 {
					return nil, false, len(s), false
				}
				val = s[i+1 : i+1+k]
				i += k + 2
			} else {
				k := i
				for k < len(s) && !isSpace(s[k]) && s[k] != '>' {
					k++
				}
				val = s[i:k]
				i = k
			}
		}
		if !keep {
			continue
		}
		if strings.IndexByte(val, '&') >= 0 {
			val = html.UnescapeString(val)
		}
		dup := false
		for _, a := range attrs {
			if a.key == name {
				dup = true
				break
			}
		}
		if !dup && len(attrs) < maxAttrs {
			attrs = append(attrs, attr{name, val})
		}
	}
}

// Element classes the tree builder and the renderer share.
func isVoid(tag string) bool {
	switch tag {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen", "basefont", "bgsound", "frame", "image":
		return true
	}
	return false
}

// rawKind says how the content of an element is tokenized: "raw" (no
// markup, no entities), "rcdata" (no markup, entities decoded) or "".
func rawKind(tag string) string {
	switch tag {
	case "script", "style", "xmp", "iframe", "noembed", "noframes", "noscript":
		return "raw"
	case "title", "textarea":
		return "rcdata"
	}
	return ""
}

// closesP reports whether a start tag of this element ends an open p.
func closesP(tag string) bool {
	switch tag {
	case "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl", "fieldset",
		"figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr",
		"main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "ul", "li", "dd", "dt", "plaintext",
		"listing", "xmp", "search":
		return true
	}
	return false
}

func isHeading(tag string) bool {
	return len(tag) == 2 && tag[0] == 'h' && '1' <= tag[1] && tag[1] <= '6'
}

// inHead reports whether an element belongs in a document's head; any
// other start tag ends a head left open.
func inHead(tag string) bool {
	switch tag {
	case "meta", "link", "title", "style", "script", "base", "noscript", "template":
		return true
	}
	return false
}

// closeTo pops open elements up to and including the nearest one named
// in names, unless one named in stops comes first. It reports whether it
// closed anything.
func (p *parser) closeTo(names, stops func(string) bool) bool {
	for k := len(p.stack) - 1; k > 0; k-- {
		t := p.stack[k].tag
		if names(t) {
			p.stack = p.stack[:k]
			return true
		}
		if stops(t) {
			return false
		}
	}
	return false
}

// is returns a matcher of one tag name.
func is(tag string) func(string) bool { return func(t string) bool { return t == tag } }

func never(string) bool { return false }

// scopeStop reports whether an implied or stray end tag stops at this
// element rather than close it and what it holds.
func scopeStop(t string) bool {
	switch t {
	case "table", "td", "th", "caption", "template", "button", "object", "marquee", "applet":
		return true
	}
	return false
}

func isCell(t string) bool    { return t == "td" || t == "th" }
func isDef(t string) bool     { return t == "dt" || t == "dd" }
func isSection(t string) bool { return t == "thead" || t == "tbody" || t == "tfoot" }
func isList(t string) bool    { return t == "ul" || t == "ol" || t == "menu" }

func (p *parser) startTag() {
	name, i := p.tagName(p.pos + 1)
	attrs, self, end, ok := p.attributes(i, true)
	p.pos = end
	if !ok {
		return
	}
	p.flushText()

	switch {
	case name == "html" || name == "body":
		if name == "body" {
			p.closeTo(is("head"), never)
		}
		return
	case name == "head":
		if len(p.stack) > 1 {
			return
		}
	case p.top().tag == "head" && !inHead(name):
		p.stack = p.stack[:len(p.stack)-1]
	}

	if closesP(name) {
		p.closeTo(is("p"), scopeStop)
	}
	switch {
	case name == "li":
		p.closeTo(is("li"), func(t string) bool { return isList(t) || scopeStop(t) })
	case isDef(name):
		p.closeTo(isDef, func(t string) bool { return t == "dl" || scopeStop(t) })
	case isHeading(name):
		if isHeading(p.top().tag) {
			p.stack = p.stack[:len(p.stack)-1]
		}
	case name == "tr":
		p.closeTo(is("tr"), is("table"))
	case isCell(name):
		p.closeTo(isCell, func(t string) bool { return t == "table" || t == "tr" })
	case isSection(name):
		p.closeTo(isSection, is("table"))
	case name == "option" || name == "optgroup":
		p.closeTo(is("option"), func(t string) bool { return t == "select" || t == "datalist" || t == "optgroup" })
	case name == "a":
		p.closeTo(is("a"), scopeStop)
	}

	n := &node{tag: name, attrs: attrs}
	if name == "base" && p.base == "" {
		p.base, _ = n.attr("href")
	}
	if len(p.stack) >= maxDepth {
		// Too deep: the element is dropped, its content kept.
		if k := rawKind(name); k != "" {
			p.rawText(name, k == "rcdata", false)
		}
		return
	}
	p.top().append(n)
	if isVoid(name) || self && rawKind(name) == "" {
		return
	}
	if name == "plaintext" {
		n.append(&node{text: strings.ReplaceAll(p.src[p.pos:], "\x00", "")})
		p.pos = len(p.src)
		return
	}
	p.stack = append(p.stack, n)
	if k := rawKind(name); k != "" {
		p.rawText(name, k == "rcdata", true)
		p.stack = p.stack[:len(p.stack)-1]
	}
}

// rawText reads the content of a raw-text element up to its end tag (or
// the end of input), as text of the open element if keep.
func (p *parser) rawText(name string, decode, keep bool) {
	s := p.src
	i := p.pos
	for {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			if keep {
				p.addText(s[p.pos:], decode)
				p.flushText()
			}
			p.pos = len(s)
			return
		}
		k := i + j + 2
		if k+len(name) <= len(s) && strings.EqualFold(s[k:k+len(name)], name) &&
			(k+len(name) == len(s) || isSpace(s[k+len(name)]) || s[k+len(name)] == '/' || s[k+len(name)] == '>') {
			if keep {
				p.addText(s[p.pos:i+j], decode)
				p.flushText()
			}
			_, _, end, _ := p.attributes(k+len(name), false)
			p.pos = end
			return
		}
		i = k
	}
}

func (p *parser) endTag() {
	s := p.src
	i := p.pos + 2
	if i >= len(s) {
		p.addText("</", false)
		p.pos = len(s)
		return
	}
	if s[i] == '>' {
		p.pos = i + 1
		return
	}
	if !isLetter(s[i]) {
		p.pos = skipPast(s, i, ">") // a bogus comment
		return
	}
	name, j := p.tagName(i)
	_, _, end, ok := p.attributes(j, false)
	p.pos = end
	if !ok {
		return
	}
	p.flushText()
	switch name {
	case "html", "body":
		return
	case "br":
		p.top().append(&node{tag: "br"})
		return
	case "p":
		if !p.closeTo(is("p"), scopeStop) {
			p.top().append(&node{tag: "p"})
		}
		return
	case "td", "th", "tr", "thead", "tbody", "tfoot", "caption":
		p.closeTo(is(name), is("table"))
		return
	case "table":
		p.closeTo(is("table"), never)
		return
	}
	if isHeading(name) {
		// Any heading's end tag closes the open heading, as browsers do
		// with <h2>...</h3>.
		p.closeTo(isHeading, scopeStop)
		return
	}
	p.closeTo(is(name), scopeStop)
}
