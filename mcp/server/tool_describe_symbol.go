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
}

// Description is what the language server says about one declaration.
type Description struct {
	Symbol SymbolInfo `json:"symbol"`
	// Signature is the declaration, as the server shows it.
	Signature string `json:"signature,omitempty" jsonschema:"the declaration: its type, signature or definition"`
	// Doc is the documentation that follows it.
	Doc string `json:"doc,omitempty" jsonschema:"its documentation"`
	// Hover is the server's full hover text (usually Markdown).
	Hover string `json:"hover,omitempty"`
}

// DescribeSymbolOutput is the describe_symbol tool's output.
type DescribeSymbolOutput struct {
	envelope
	Descriptions []Description `json:"descriptions"`
}

func (s *Server) addDescribeSymbol() {
	addTool(s, &mcp.Tool{
		Name:        "describe_symbol",
		Title:       "A symbol's signature and documentation",
		Description: "Gives a symbol's type or signature and its documentation, as the language server describes it, for a symbol given by name (Foo, pkg.Foo or T.M).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.describeSymbol)
}

func (s *Server) describeSymbol(ctx context.Context, in DescribeSymbolInput) (DescribeSymbolOutput, string, error) {
	out := DescribeSymbolOutput{Descriptions: []Description{}}
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
		sig, doc := splitHover(hover)
		desc := Description{Symbol: s.symbolInfo(ls, d), Signature: sig, Doc: doc, Hover: hover}
		out.Descriptions = append(out.Descriptions, desc)
		fmt.Fprintf(&b, "%s\n", desc.Symbol)
		if hover == "" {
			b.WriteString("(the language server has no description of it)\n")
		} else {
			b.WriteString(hover + "\n")
		}
		b.WriteString("\n")
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
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
	return signature, doc
}
