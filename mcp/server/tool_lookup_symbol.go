package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
)

// LookupSymbolInput is the lookup_symbol tool's input.
type LookupSymbolInput struct {
	Query string   `json:"query" jsonschema:"a name (Foo), a qualified name (pkg.Foo, T.M) or part of one" example:"\"ParseConfig\""`
	Kinds []string `json:"kinds,omitempty" jsonschema:"keep only these kinds: function, method, struct, interface, class, variable, constant, field, ..." example:"[\"function\", \"method\"]"`
	Scope string   `json:"scope,omitempty" jsonschema:"workspace (the default: the project's own code), dependencies (installed packages, the standard library), or all" enum:"workspace,dependencies,all" example:"\"all\""`
	Fuzzy bool     `json:"fuzzy,omitempty" jsonschema:"also list partial and fuzzy matches when the name matches exactly (they are left out then)" example:"true"`
	Limit int      `json:"limit,omitempty" jsonschema:"at most this many symbols, one line each (default 10, at most 200)" example:"30"`
}

// defaultLookupLimit is how many symbols a lookup lists unless asked:
// about 1.5 KB of text.
const defaultLookupLimit = 10

func (s *Server) addLookupSymbol() {
	addTool(s, &mcp.Tool{
		Name:  "lookup_symbol",
		Title: "Find symbols by name",
		Description: "Finds declarations by name (functions, types, methods, variables...) in every language of the project. " +
			"An exact name answers with just its declarations; otherwise prefix, then partial and fuzzy matches follow, best first. " +
			"The project's own code comes first and tests last; dependencies (installed packages, the standard library) are searched " +
			"only with a qualified name (json.Marshal) or scope \"dependencies\" or \"all\". The answer is text, one symbol a line: " +
			"path:line:column, then its declaration's line cut to the signature, marked (test) or (dependency: its package). " +
			"Lists 10 unless limit says more; a last line says what was left out and the input that lists it, " +
			"as in \"+2 fuzzy (fuzzy: true); +5 more (limit: 15)\".",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.lookupSymbol)
}

// lookupSymbol answers in text only (see textOnly): each line is a
// symbol's place and declaration, which says its kind and name, and
// marks a dependency's or a test's; a structured copy would only repeat
// them, in JSON twice the size.
func (s *Server) lookupSymbol(ctx context.Context, in LookupSymbolInput) (textOnly, string, error) {
	var out textOnly
	if strings.TrimSpace(in.Query) == "" {
		return out, "", toolErrorf(CodeInvalidInput, "the query is empty: give a name or part of one")
	}
	limit := in.Limit
	switch {
	case limit < 0 || limit > 200:
		return out, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to 200, or leave it out for %d", limit, defaultLookupLimit)
	case limit == 0:
		limit = defaultLookupLimit
	}
	scope := in.Scope
	switch scope {
	case "":
		scope = scopeWorkspace
	case scopeWorkspace, scopeDependencies, scopeAll:
	default:
		return out, "", toolErrorf(CodeInvalidInput, "scope %q: give workspace, dependencies or all", in.Scope)
	}
	q := parseQuery(in.Query)
	// Dependencies' symbols out of scope are only counted, not mapped.
	deps, counted := 0, map[string]bool{}
	keep := func(name, container, path string) bool {
		if scope != scopeWorkspace || !isDependency(s.root.Dir, path) {
			return true
		}
		r := rankedSymbol{Symbol: diagnostics.Symbol{Name: name, Container: container}}
		r.match = matchOf(q, r.Symbol)
		if wantsDependencies(scope, q, r) {
			return true
		}
		if key := name + "\x00" + container + "\x00" + path; r.match <= matchSubstring && !counted[key] {
			counted[key] = true // a qualified name may be asked twice (see findSymbols)
			deps++
		}
		return false
	}
	ranked, missing, err := s.findSymbols(ctx, in.Query, in.Kinds, keep, scope)
	if err != nil {
		return out, "", err
	}

	// Keep the scope's symbols, then the best matches only when the name
	// matched exactly (unless fuzzy asks for the rest).
	var kept []rankedSymbol
	for _, r := range ranked {
		if (!r.dep && scope != scopeDependencies) || (r.dep && wantsDependencies(scope, q, r)) {
			kept = append(kept, r)
		}
	}
	inexact := 0
	if !in.Fuzzy && len(kept) > 0 && kept[0].match <= matchExactFold {
		best := kept[0].match
		n := 0
		for n < len(kept) && kept[n].match == best {
			n++
		}
		inexact = len(kept) - n
		kept = kept[:n]
	}
	over := 0
	if len(kept) > limit {
		over = len(kept) - limit
		kept = kept[:limit]
	}

	// Only the symbols listed are mapped to columns (which reads their
	// files): a fuzzy server names a hundred files for a name.
	syms := make([]diagnostics.Symbol, len(kept))
	for i, r := range kept {
		syms[i] = r.Symbol
	}
	for i, sym := range s.pool.Map(ctx, syms) {
		kept[i].Symbol = sym
	}
	ls := lines{}
	var b strings.Builder
	for _, r := range kept {
		b.WriteString(s.lookupInfo(ls, r).line())
		b.WriteByte('\n')
	}
	exact := len(kept) > 0 && kept[0].match <= matchExactFold
	note := lookupNote(limit, over, inexact, deps, scope, !exact && s.pool.SearchesDependenciesApart(""))
	if len(kept) == 0 {
		where := scopeWords(scope)
		if strings.Contains(note, "dependencies") {
			where = "project" // the note says how to search them
		}
		fmt.Fprintf(&b, "no symbol matches %q in the %s\n", in.Query, where)
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	writeMissing(&b, missing)
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// findSymbols asks the servers for the query and ranks what they say:
// the workspace's symbols, and the dependencies' too when the scope asks
// for them or a qualified name is not the workspace's (json.Marshal).
// A qualified name that none matches as written (a server that matches
// names only) is asked again by its last part.
//
// keep, if set, is asked about each symbol, as in diagnostics.SymbolQuery.
// The symbols' places are the servers' own (diagnostics.SymbolQuery's
// Unmapped): Pool.Map those shown.
func (s *Server) findSymbols(ctx context.Context, name string, kinds []string, keep func(name, container, path string) bool, scope string) ([]rankedSymbol, []string, error) {
	q := parseQuery(name)
	var found []diagnostics.Symbol
	var missing []string
	seen := map[diagnostics.Location]bool{}
	ask := func(text string, deps bool) error {
		syms, err := s.pool.Symbols(ctx, text, diagnostics.SymbolQuery{Kinds: kinds, Limit: 1000, Keep: keep, Dependencies: deps, Unmapped: true})
		var partial *diagnostics.PartialError
		if err != nil && !errors.As(err, &partial) {
			return err
		}
		for _, m := range missingParts(partial) {
			if !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
		}
		for _, sym := range syms {
			if !seen[sym.Location] {
				seen[sym.Location] = true
				found = append(found, sym)
			}
		}
		return nil
	}
	matched := func() bool {
		r := rankSymbols(s.root.Dir, q, found)
		return len(r) > 0 && r[0].match <= matchSubstring
	}
	apart := s.pool.SearchesDependenciesApart("")
	if scope != scopeDependencies || !apart {
		if err := ask(q.full, false); err != nil {
			return nil, nil, err
		}
	}
	if apart && (scope != scopeWorkspace || q.qual != "" && !matched()) {
		if err := ask(q.full, true); err != nil {
			return nil, nil, err
		}
	}
	if q.qual != "" && !matched() {
		if err := ask(q.last, false); err != nil {
			return nil, nil, err
		}
	}
	return rankSymbols(s.root.Dir, q, found), missing, nil
}

func scopeWords(scope string) string {
	switch scope {
	case scopeDependencies:
		return "dependencies"
	case scopeAll:
		return "project or its dependencies"
	}
	return "project (scope \"all\" searches its dependencies too)"
}

// lookupNote says what a lookup left out and the input that lists it,
// in as few words as an agent needs (the tool's description says how
// to read them): "+2 fuzzy (fuzzy: true)". unsearched says the
// dependencies were not searched, which matters when the name was not
// found exactly.
func lookupNote(limit, over, inexact, deps int, scope string, unsearched bool) string {
	var parts []string
	if over > 0 {
		parts = append(parts, fmt.Sprintf("+%d more (limit: %d)", over, min(200, limit+over)))
	}
	if inexact > 0 {
		parts = append(parts, fmt.Sprintf("+%d fuzzy (fuzzy: true)", inexact))
	}
	if scope == scopeWorkspace {
		switch {
		case deps > 0:
			parts = append(parts, fmt.Sprintf("+%d in dependencies (scope: \"all\")", deps))
		case unsearched:
			parts = append(parts, "dependencies not searched (scope: \"all\")")
		}
	}
	return strings.Join(parts, "; ")
}

// declarationInfo is a declaration as the tools list it: where it is and
// its line, cut to its signature, and whether it is a dependency's or a
// test's.
func (s *Server) declarationInfo(ls lines, sym diagnostics.Symbol) SymbolInfo {
	return s.lookupInfo(ls, rankedSymbol{Symbol: sym, dep: isDependency(s.root.Dir, sym.Location.Path), test: isTest(s.root.Rel(sym.Location.Path))})
}

// lookupInfo is a ranked symbol as a lookup lists it: where it is and its
// declaration's line, cut to its signature.
func (s *Server) lookupInfo(ls lines, r rankedSymbol) SymbolInfo {
	si := SymbolInfo{Name: r.Name, Kind: r.Kind, Container: r.Container, Detail: r.Detail, Dependency: r.dep, Test: r.test}
	si.Span = Span{Path: s.root.Rel(r.Location.Path), Line: r.Location.Start.Line, Column: r.Location.Start.Column}
	text := r.Line // read by Pool.Map
	if text == "" {
		text = ls.at(r.Location.Path, r.Location.Start.Line)
	} else {
		text = trimLine(text)
	}
	if sig := signature(text); sig != "" {
		if _, base := baseName(r.Name); strings.Contains(sig, base) {
			si.Signature = sig
		}
	}
	return si
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
