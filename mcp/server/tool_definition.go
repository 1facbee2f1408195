package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefinitionInput is the definition tool's input.
type DefinitionInput struct {
	Symbol string `json:"symbol" jsonschema:"the name: Foo, pkg.Foo (package name or path) or T.M (a method or field of T)" example:"\"Server.Run\""`
	Path   string `json:"path,omitempty" jsonschema:"a file, relative to the project root, whose declarations are searched first" example:"\"server/server.go\""`
}

// DefinitionOutput is the definition tool's output.
type DefinitionOutput struct {
	envelope
	Definitions []SymbolInfo `json:"definitions"`
}

func (s *Server) addDefinition() {
	addTool(s, &mcp.Tool{
		Name:        "definition",
		Title:       "Where a symbol is declared",
		Description: "Tells where a symbol given by name (Foo, pkg.Foo or T.M) is declared: file, line and the line's text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.definition)
}

func (s *Server) definition(ctx context.Context, in DefinitionInput) (DefinitionOutput, string, error) {
	out := DefinitionOutput{Definitions: []SymbolInfo{}}
	decls, err := s.resolve(ctx, in.Symbol, in.Path)
	if err != nil {
		return out, "", err
	}
	ls := lines{}
	var b strings.Builder
	for _, d := range decls {
		si := s.symbolInfo(ls, d)
		out.Definitions = append(out.Definitions, si)
		fmt.Fprintln(&b, si)
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}
