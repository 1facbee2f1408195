package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
)

// OutlineInput is the outline tool's input.
type OutlineInput struct {
	Path  string `json:"path" jsonschema:"the file, relative to the project root" example:"\"internal/store/store.go\""`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many declarations, in the file's order (default 100, at most 500)" example:"200"`
}

// OutlineNode is one declaration in a file. The outline is a tree kept
// flat in document order (schemas cannot describe recursive types for
// every client): Parent is the index of the node that contains it.
type OutlineNode struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Detail  string `json:"detail,omitempty"`
	Line    int    `json:"line"`
	EndLine int    `json:"endLine"`
	Depth   int    `json:"depth" jsonschema:"0 for top-level declarations, 1 for their members, ..."`
	Parent  int    `json:"parent" jsonschema:"the index in symbols of the declaration containing this one; -1 at top level"`
}

// OutlineOutput is the outline tool's output.
type OutlineOutput struct {
	envelope
	Path    string        `json:"path"`
	Symbols []OutlineNode `json:"symbols"`
	Note    string        `json:"note,omitempty"`
}

// maxOutline caps the nodes of an outline (within a result's budget).
const maxOutline = 500

// defaultOutline is how many nodes an outline lists unless asked: about
// 3 KB of text.
const defaultOutline = 100

func (s *Server) addOutline() {
	addTool(s, &mcp.Tool{
		Name:  "outline",
		Title: "A file's declarations",
		Description: "Lists a file's declarations as a tree (types with their methods and fields, classes with their members, functions), with their lines. " +
			"Lists 100 declarations unless limit says more; a note says how many were left out.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.outline)
}

func (s *Server) outline(ctx context.Context, in OutlineInput) (OutlineOutput, string, error) {
	out := OutlineOutput{Symbols: []OutlineNode{}}
	limit := in.Limit
	switch {
	case limit < 0 || limit > maxOutline:
		return out, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to %d, or leave it out for %d", limit, maxOutline, defaultOutline)
	case limit == 0:
		limit = defaultOutline
	}
	file, err := s.root.Resolve(in.Path)
	if err != nil {
		return out, "", err
	}
	out.Path = s.root.Rel(file)
	syms, err := s.pool.DocumentSymbols(ctx, file)
	if err != nil {
		return out, "", err
	}
	var b strings.Builder
	left := 0
	var walk func(depth, parent int, list []diagnostics.Symbol)
	walk = func(depth, parent int, list []diagnostics.Symbol) {
		for _, sym := range list {
			if len(out.Symbols) == limit {
				left += 1 + countSymbols(sym.Children)
				continue
			}
			node := OutlineNode{Name: sym.Name, Kind: sym.Kind, Detail: sym.Detail, Line: sym.Location.Start.Line, EndLine: sym.Location.End.Line, Depth: depth, Parent: parent}
			fmt.Fprintf(&b, "%s%s %s (L%d-%d)\n", strings.Repeat("  ", depth), node.Kind, node.Name, node.Line, node.EndLine)
			out.Symbols = append(out.Symbols, node)
			walk(depth+1, len(out.Symbols)-1, sym.Children)
		}
	}
	walk(0, -1, syms)
	if left > 0 {
		out.Note = fmt.Sprintf("%d more declarations not listed: raise limit (to %d for all)", left, min(maxOutline, limit+left))
	}
	n := len(out.Symbols)
	if n == 0 {
		b.WriteString(out.Path + " declares nothing")
	}
	if out.Note != "" {
		b.WriteString(out.Note)
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// countSymbols counts the nodes of an outline.
func countSymbols(list []diagnostics.Symbol) int {
	n := len(list)
	for _, s := range list {
		n += countSymbols(s.Children)
	}
	return n
}
