package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FindReferencesInput is the find_references tool's input.
type FindReferencesInput struct {
	Symbol string `json:"symbol" jsonschema:"the name: Foo, pkg.Foo (package name or path) or T.M (a method or field of T)" example:"\"config.Load\""`
	Path   string `json:"path,omitempty" jsonschema:"a file, relative to the project root, whose declarations are searched first" example:"\"internal/config/config.go\""`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many references, one line each (default 20, at most 300)" example:"50"`
}

func (s *Server) addFindReferences() {
	addTool(s, &mcp.Tool{
		Name:  "find_references",
		Title: "Where a symbol is used",
		Description: "Lists the places in the project that use a symbol given by name (Foo, pkg.Foo or T.M), each with " +
			"its line of code, after the declaration (the project's own before a dependency's). Give path to pick the declaration " +
			"in that file when the name is ambiguous. Lists 20 references unless limit says more; the total and a note say " +
			"how many were left out. The answer is text, one place per line (path:line:column: the line of code).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.findReferences)
}

// defaultReferencesLimit is how many references find_references lists
// unless asked: about 2 KB of text.
const defaultReferencesLimit = 20

// findReferences answers in text only (see textOnly): a declaration's
// line, then each reference's place and line of code, which is all a
// structured copy would hold again.
func (s *Server) findReferences(ctx context.Context, in FindReferencesInput) (textOnly, string, error) {
	var out textOnly
	limit := in.Limit
	switch {
	case limit < 0 || limit > 300:
		return out, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to 300 (scope with path for fewer), or leave it out for %d", limit, defaultReferencesLimit)
	case limit == 0:
		limit = defaultReferencesLimit
	}
	decls, err := s.resolve(ctx, in.Symbol, in.Path)
	if err != nil {
		return out, "", err
	}
	ls := lines{}
	var b strings.Builder
	seen := map[Span]bool{}
	var listed []Span
	total := 0
	for _, d := range decls {
		fmt.Fprintf(&b, "%s\n", s.declarationInfo(ls, d).line())
		refs, err := s.pool.References(ctx, d.Location.Path, d.Location.Start, false)
		if err != nil {
			return out, "", err
		}
		for _, r := range refs {
			sp := s.span(ls, r)
			// A reference is the name: where it starts says all.
			sp.EndLine, sp.EndColumn = 0, 0
			key := Span{Path: sp.Path, Line: sp.Line, Column: sp.Column}
			if seen[key] {
				continue
			}
			seen[key] = true
			total++
			if len(listed) < limit {
				listed = append(listed, sp)
			}
		}
	}
	fmt.Fprintf(&b, "%d reference(s):\n", total)
	for _, r := range listed {
		fmt.Fprintln(&b, r)
	}
	if total > len(listed) {
		fmt.Fprintf(&b, "%d of %d references listed: raise limit (to %d for all), or give path to pick one declaration", len(listed), total, min(total, 300))
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}
