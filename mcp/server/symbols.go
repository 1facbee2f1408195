package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/darman-dev/darman/diagnostics"
)

// SymbolInfo is a named thing in the code, where it is declared.
type SymbolInfo struct {
	Name      string `json:"name" jsonschema:"the symbol's name as the language server gives it"`
	Kind      string `json:"kind" jsonschema:"function, method, struct, interface, class, variable, constant, field, ..."`
	Container string `json:"container,omitempty" jsonschema:"what holds it: a package path, a type"`
	Detail    string `json:"detail,omitempty"`
	Span
}

func (s *Server) symbolInfo(ls lines, sym diagnostics.Symbol) SymbolInfo {
	return SymbolInfo{Name: sym.Name, Kind: sym.Kind, Container: sym.Container, Detail: sym.Detail, Span: s.span(ls, sym.Location)}
}

func (si SymbolInfo) String() string {
	name := si.Name
	if si.Container != "" {
		name = si.Container + "." + si.Name
	}
	return fmt.Sprintf("%s %s at %s", si.Kind, name, si.Span)
}

// maxDeclarations caps how many declarations of an ambiguous name a
// tool follows.
const maxDeclarations = 5

// resolve finds the declarations of a symbol name ("Foo", "pkg.Foo",
// "T.M"): in the file path when given (falling back to the workspace
// when the file declares no such name), else in the workspace. It fails
// with MCP-SYMBOL-NOT-FOUND, naming near matches.
func (s *Server) resolve(ctx context.Context, symbol, path string) ([]diagnostics.Symbol, error) {
	symbol = strings.TrimSpace(symbol)
	if symbol == "" {
		return nil, toolErrorf(CodeInvalidInput, `the symbol is empty: give a name such as "Foo", "pkg.Foo" or "T.M"`)
	}
	if len(symbol) > 512 || strings.ContainsAny(symbol, "\n\x00") {
		return nil, toolErrorf(CodeInvalidInput, "the symbol %.40q is not a name: give a name such as \"Foo\", \"pkg.Foo\" or \"T.M\"", symbol)
	}
	file := ""
	if path != "" {
		f, err := s.root.Resolve(path)
		if err != nil {
			return nil, err
		}
		file = f
	}
	syms, err := s.pool.Resolve(ctx, symbol, file, "")
	if err != nil && file != "" && notFound(err) {
		syms, err = s.pool.Resolve(ctx, symbol, "", "")
	}
	var partial *diagnostics.PartialError
	if errors.As(err, &partial) && len(syms) > 0 {
		// Found where it was searched; servers that could not answer
		// would only have added other declarations of the name.
		err = nil
	}
	if err == nil {
		if len(syms) > maxDeclarations {
			syms = syms[:maxDeclarations]
		}
		return syms, nil
	}
	if !notFound(err) {
		return nil, err
	}
	last := symbol
	if i := strings.LastIndex(symbol, "."); i >= 0 {
		last = symbol[i+1:]
	}
	var near []string
	if found, err := s.pool.Symbols(ctx, last, diagnostics.SymbolQuery{Limit: 8}); err == nil || errors.As(err, &partial) {
		for _, f := range found {
			n := f.Name
			if f.Container != "" && !strings.Contains(n, ".") {
				n = f.Container + "." + n
			}
			near = append(near, n)
		}
	}
	msg := fmt.Sprintf("no symbol named %q was found", symbol)
	if path != "" {
		msg += fmt.Sprintf(" in %s or the workspace", path)
	}
	if len(near) > 0 {
		msg += "; near matches: " + strings.Join(near, ", ")
	} else {
		msg += "; try lookup_symbol with part of the name"
	}
	return nil, toolErrorf(CodeSymbolNotFound, "%s", msg)
}

// notFound says the pool found no declaration (as opposed to failing).
func notFound(err error) bool {
	if errors.Is(err, diagnostics.ErrNoServer) || errors.Is(err, diagnostics.ErrNotInstalled) || errors.Is(err, diagnostics.ErrUnavailable) {
		return false
	}
	return strings.Contains(err.Error(), "no symbol named")
}
