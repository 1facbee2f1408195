package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DescribeSymbolInput is the describe_symbol tool's input.
type DescribeSymbolInput struct {
	Symbol string `json:"symbol" jsonschema:"the name: Foo, pkg.Foo (package name or path) or T.M (a method or field of T)" example:"\"http.Server.Shutdown\""`
	Path   string `json:"path,omitempty" jsonschema:"a file, relative to the project root, whose declarations are searched first" example:"\"main.go\""`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many bytes of each description (default 2000, at most 50000)" example:"8000"`
}

// Description is what the language server says about one declaration.
type Description struct {
	Symbol SymbolInfo `json:"symbol"`
	// Signature is the declaration, as the server shows it.
	Signature string `json:"signature,omitempty" jsonschema:"the declaration: its type, signature or definition"`
	// Doc is the documentation that follows it.
	Doc string `json:"doc,omitempty" jsonschema:"its documentation"`
	// Hover is the server's hover text (usually Markdown) when it has no
	// signature to split off; otherwise Signature and Doc are all of it.
	Hover string `json:"hover,omitempty" jsonschema:"the server's hover text, when it could not be split into signature and doc"`
	// Cut says how many bytes of it the limit left out.
	Cut int `json:"cut,omitempty" jsonschema:"bytes of the description left out by limit"`
}

// DescribeSymbolOutput is the describe_symbol tool's output.
type DescribeSymbolOutput struct {
	envelope
	Descriptions []Description `json:"descriptions"`
}

func (s *Server) addDescribeSymbol() {
	addTool(s, &mcp.Tool{
		Name:  "describe_symbol",
		Title: "A symbol's signature and documentation",
		Description: "Gives a symbol's type or signature and its documentation, as the language server describes it, for a symbol given by name (Foo, pkg.Foo or T.M). " +
			"Each description is cut at 2000 bytes unless limit says more; cut says how much was left out.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.describeSymbol)
}

func (s *Server) describeSymbol(ctx context.Context, in DescribeSymbolInput) (DescribeSymbolOutput, string, error) {
	out := DescribeSymbolOutput{Descriptions: []Description{}}
	limit := in.Limit
	switch {
	case limit < 0 || limit > maxDescription:
		return out, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to %d bytes, or leave it out for %d", limit, maxDescription, defaultDescription)
	case limit == 0:
		limit = defaultDescription
	}
	decls, err := s.resolve(ctx, in.Symbol, in.Path)
	if err != nil {
		return out, "", err
	}
	ls := lines{}
	var b strings.Builder
	for _, d := range decls {
		hover, err := s.pool.Hover(ctx, d.Location.Path, d.Location.Start)
		if err != nil {
			return out, "", err
		}
		whole := len(hover)
		hover = cutText(hover, limit)
		cut := whole - len(hover)
		sig, doc := splitHover(hover)
		desc := Description{Symbol: s.declarationInfo(ls, d), Signature: sig, Doc: doc, Cut: cut}
		if sig == "" {
			desc.Hover, desc.Doc = hover, ""
		}
		out.Descriptions = append(out.Descriptions, desc)
		fmt.Fprintf(&b, "%s\n", desc.Symbol.line())
		switch {
		case hover == "":
			b.WriteString("(the language server has no description of it)\n")
		case sig == "":
			b.WriteString(hover + "\n")
		default:
			b.WriteString(sig + "\n")
			if doc != "" {
				b.WriteString(doc + "\n")
			}
		}
		if cut > 0 {
			fmt.Fprintf(&b, "(%d more bytes of it: raise limit to %d)\n", cut, min(maxDescription, limit+cut))
		}
		b.WriteString("\n")
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// Bounds of a description, in bytes.
const (
	defaultDescription = 2000
	maxDescription     = 50_000
)

// cutText is text cut to at most n bytes, at a line when one ends in the
// second half, never inside a UTF-8 sequence.
func cutText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && text[n]&0xC0 == 0x80 {
		n--
	}
	text = text[:n]
	if nl := strings.LastIndexByte(text, '\n'); nl > n/2 {
		text = text[:nl]
	}
	return text
}

// splitHover separates a Markdown hover's first code block (the
// signature) from the prose around it.
func splitHover(h string) (signature, doc string) {
	start := strings.Index(h, "```")
	if start < 0 {
		return "", strings.TrimSpace(h)
	}
	body := h[start+3:]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		body = body[nl+1:] // the fence's language tag
	}
	end := strings.Index(body, "```")
	if end < 0 {
		return strings.TrimSpace(body), strings.TrimSpace(h[:start])
	}
	signature = strings.TrimSpace(body[:end])
	doc = strings.TrimSpace(strings.TrimSpace(h[:start]) + "\n\n" + strings.TrimSpace(body[end+3:]))
	return signature, prose(doc)
}

// prose is a hover's documentation without what only a reader of the
// rendered Markdown needs: horizontal rules, lines that are only a link
// (gopls's "on pkg.go.dev"), and the blank lines they leave.
func prose(doc string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if t == "---" || t == "***" || strings.HasPrefix(t, "[") && strings.HasSuffix(t, ")") && strings.Contains(t, "](http") {
			continue
		}
		if t == "" {
			if blank || len(out) == 0 {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
