package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
)

// LookupSymbolInput is the lookup_symbol tool's input.
type LookupSymbolInput struct {
	Query string   `json:"query" jsonschema:"a name or part of one; servers match fuzzily" example:"\"ParseConfig\""`
	Kinds []string `json:"kinds,omitempty" jsonschema:"keep only these kinds: function, method, struct, interface, class, variable, constant, field, ..." example:"[\"function\", \"method\"]"`
	Limit int      `json:"limit,omitempty" jsonschema:"at most this many results (default 50, at most 200)" example:"20"`
}

// LookupSymbolOutput is the lookup_symbol tool's output.
type LookupSymbolOutput struct {
	envelope
	Symbols []SymbolInfo `json:"symbols"`
	// Missing says which language servers could not answer, and why.
	Missing []string `json:"missing,omitempty" jsonschema:"language servers that could not answer (they cannot load the project), with what to do: their symbols are not in this answer"`
	Note    string   `json:"note,omitempty"`
}

func (s *Server) addLookupSymbol() {
	addTool(s, &mcp.Tool{
		Name:  "lookup_symbol",
		Title: "Find symbols by name",
		Description: "Searches the whole project for declarations whose name matches the query (functions, types, methods, " +
			"variables...), in every language that has a language server, and tells where each is declared.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.lookupSymbol)
}

func (s *Server) lookupSymbol(ctx context.Context, in LookupSymbolInput) (LookupSymbolOutput, string, error) {
	out := LookupSymbolOutput{Symbols: []SymbolInfo{}}
	if strings.TrimSpace(in.Query) == "" {
		return out, "", toolErrorf(CodeInvalidInput, "the query is empty: give a name or part of one")
	}
	limit := in.Limit
	switch {
	case limit < 0 || limit > 200:
		return out, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to 200, or leave it out for 50", limit)
	case limit == 0:
		limit = 50
	}
	found, err := s.pool.Symbols(ctx, in.Query, diagnostics.SymbolQuery{Kinds: in.Kinds, Limit: limit + 1})
	var partial *diagnostics.PartialError
	if err != nil && !errors.As(err, &partial) {
		return out, "", err
	}
	out.Missing = missingParts(partial)
	if len(found) > limit {
		found = found[:limit]
		out.Note = fmt.Sprintf("only the first %d matches are listed: refine the query or raise limit", limit)
	}
	ls := lines{}
	var b strings.Builder
	for _, sym := range found {
		si := s.symbolInfo(ls, sym)
		out.Symbols = append(out.Symbols, si)
		fmt.Fprintln(&b, si)
	}
	if len(found) == 0 {
		b.WriteString("no symbol matches " + fmt.Sprintf("%q", in.Query) + "\n")
	}
	if out.Note != "" {
		b.WriteString(out.Note + "\n")
	}
	writeMissing(&b, out.Missing)
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// missingParts says, one line each, which servers could not answer a
// workspace-wide query and why.
func missingParts(partial *diagnostics.PartialError) []string {
	if partial == nil {
		return nil
	}
	var out []string
	for _, err := range partial.Missing {
		out = append(out, err.Error())
	}
	return out
}

// writeMissing ends a text rendering with the parts of the answer that
// are missing.
func writeMissing(b *strings.Builder, missing []string) {
	for _, m := range missing {
		fmt.Fprintf(b, "not in this answer: %s: %s\n", CodeServerUnavailable, m)
	}
}
