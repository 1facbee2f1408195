// Package htmlmd turns an HTML page into the Markdown a model reads: the
// page's text with its headings, lists, links, code and tables, without
// its scripts, styles, navigation chrome of form controls or hidden
// parts. Start at Convert.
//
// It is darman's own, small on purpose: it replaced a converter whose
// HTML parser (golang.org/x/net/html) builds large tables when its package
// is initialised, a cost every darman process paid although only a web
// fetch needs it. Nothing here runs at start-up: entities are decoded by
// the standard library's html.UnescapeString, whose table is built on
// first use.
//
// The parser is tolerant as browsers are: any input gives a result, in
// time linear in its size. It tokenizes tags, attributes, comments,
// doctypes and CDATA, keeps the content of raw-text elements (script,
// style, textarea, title, ...) as text, and repairs the tree the way that
// matters for reading: block starts close open paragraphs, a new list item
// or cell closes the previous one, an end tag closes what was left open
// inside it, a stray end tag is ignored.
package htmlmd

import (
	"context"
	"net/url"
	"strings"
)

// Convert returns the Markdown for the HTML page. Links and images are
// resolved against base (the page's URL), or against the page's <base
// href> as browsers do; with a nil base, relative ones stay relative.
// The only error is ctx's, which Convert checks as it goes.
func Convert(ctx context.Context, page string, base *url.URL) (string, error) {
	root, baseHref, err := parse(ctx, page)
	if err != nil {
		return "", err
	}
	c := &conv{ctx: ctx, base: base}
	if baseHref != "" {
		if u, err := url.Parse(strings.TrimSpace(baseHref)); err == nil {
			switch {
			case base != nil:
				c.base = base.ResolveReference(u)
			case u.IsAbs():
				c.base = u
			}
		}
	}
	r := &renderer{c: c}
	r.children(root)
	r.flush()
	if c.err != nil {
		return "", c.err
	}
	return strings.TrimSpace(join(r.blocks, false)), nil
}
