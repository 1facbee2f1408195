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
	// Signature is the declaration's line, cut to what says what it is.
	Signature string `json:"signature,omitempty" jsonschema:"the declaration's line, cut to its signature"`
	// Dependency and Test say where it is declared.
	Dependency bool `json:"dependency,omitempty" jsonschema:"declared in a dependency (installed packages, the standard library), not the project's own code"`
	Test       bool `json:"test,omitempty" jsonschema:"declared in test code"`
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

// line is the symbol on one line, as lookups list it: where, then its
// signature (or its kind and name when the declaration's line does not
// name it), then what it is declared in when that is not the project's
// code.
func (si SymbolInfo) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d ", si.Path, si.Line, si.Column)
	if si.Signature != "" {
		b.WriteString(si.Signature)
	} else {
		b.WriteString(si.Kind + " ")
		if si.Container != "" && !strings.Contains(si.Name, ".") {
			b.WriteString(si.Container + ".")
		}
		b.WriteString(si.Name)
	}
	switch {
	case si.Dependency && si.Container != "":
		b.WriteString(" (dependency: " + si.Container + ")")
	case si.Dependency:
		b.WriteString(" (dependency)")
	case si.Test:
		b.WriteString(" (test)")
	}
	return b.String()
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
		syms = ownFirst(s.root.Dir, syms)
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
	if found, _, err := s.findSymbols(ctx, last, nil, nil, scopeWorkspace); err == nil {
		for _, f := range found {
			if len(near) == 8 {
				break
			}
			if f.dep && !qualifies(parseQuery(symbol).qual, f.Container, "") {
				continue
			}
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

// ownFirst orders declarations the project's own code first, tests
// after code, and leaves out the dependencies' when the project declares
// the name itself: a name an agent asks about without a qualifier is
// almost always its project's.
func ownFirst(root string, syms []diagnostics.Symbol) []diagnostics.Symbol {
	ranked := rankSymbols(root, query{}, syms) // every match is fuzzy: ordered by place only
	out := make([]diagnostics.Symbol, 0, len(ranked))
	for _, r := range ranked {
		if r.dep && len(out) > 0 && !ranked[len(out)-1].dep {
			break
		}
		out = append(out, r.Symbol)
	}
	return out
}

// notFound says the pool found no declaration (as opposed to failing).
func notFound(err error) bool {
	if errors.Is(err, diagnostics.ErrNoServer) || errors.Is(err, diagnostics.ErrNotInstalled) || errors.Is(err, diagnostics.ErrUnavailable) {
		return false
	}
	return strings.Contains(err.Error(), "no symbol named")
}
