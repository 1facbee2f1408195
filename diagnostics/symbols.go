package diagnostics

// The workspace's symbol search (workspace/symbol) across the pool's
// servers, the workspace's own apart from its dependencies, and the
// resolution of a name to its declarations.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// Symbols searches the workspace for symbols matching query, as each
// server matches (gopls and most others match fuzzily).
func (p *Pool) Symbols(ctx context.Context, query string, q SymbolQuery) ([]Symbol, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var kinds []lsp.SymbolKind
	for _, k := range q.Kinds {
		kind, ok := lsp.ParseSymbolKind(k)
		if !ok {
			return nil, fmt.Errorf("unknown symbol kind %q: use one of function, method, struct, interface, class, variable, constant, field, ...", k)
		}
		kinds = append(kinds, kind)
	}
	entries, err := p.workspaceEntries(q.Language)
	if err != nil {
		return nil, err
	}
	var out []Symbol
	var errs []error
	for _, e := range entries {
		if q.Dependencies && e.srv.depsSettings != nil {
			if e, err = p.depsEntry(e); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		c, err := e.acquire(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !e.srv.indexesWorkspace {
			p.anchor(ctx, e, c)
		}
		if err := p.verdict(e); err != nil {
			errs = append(errs, err)
			continue
		}
		found, err := c.WorkspaceSymbols(ctx, query)
		if err != nil {
			// Not taken for a load failure: a server with no file open
			// may answer that it has no project (tsserver's "No
			// Project.") without failing to load one.
			errs = append(errs, fmt.Errorf("%s: %w", e.srv.name, err))
			continue
		}
		if err := p.answered(e, true, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		ms := p.mappers(ctx, c)
		for _, s := range found {
			if len(kinds) > 0 && !slices.Contains(kinds, s.Kind) {
				continue
			}
			if q.Keep != nil {
				path, err := lsp.DocumentURI(s.Location.URI).Path()
				if err != nil || !q.Keep(s.Name, s.ContainerName, path) {
					continue
				}
			}
			sym := Symbol{Name: s.Name, Kind: lsp.SymbolKindName(s.Kind), Container: s.ContainerName}
			if q.Unmapped {
				sym.Location, sym.unmapped = rawLocation(s.Location), &unmapped{c: c, loc: s.Location}
			} else {
				sym.Location = ms.location(s.Location)
			}
			out = append(out, sym)
			if len(out) == limit {
				return out, partial(errs)
			}
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, partial(errs)
}

// unmapped is a symbol's place as its server gave it, for Map.
type unmapped struct {
	c   *lsp.Client
	loc lsp.Location
}

// rawLocation is a server's location with its own lines and characters,
// plus one (see SymbolQuery.Unmapped).
func rawLocation(l lsp.Location) Location {
	path, err := lsp.DocumentURI(l.URI).Path()
	if err != nil {
		path = l.URI
	}
	return Location{Path: path, Start: Position{int(l.Range.Start.Line) + 1, int(l.Range.Start.Character) + 1},
		End: Position{int(l.Range.End.Line) + 1, int(l.Range.End.Character) + 1}}
}

// Map maps the positions of symbols found with SymbolQuery.Unmapped into
// lines and columns, reading each of their files once, and gives each
// the text of its line (Symbol.Line); symbols already mapped are left as
// they are.
func (p *Pool) Map(ctx context.Context, syms []Symbol) []Symbol {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	ms := map[*lsp.Client]*mappers{}
	out := make([]Symbol, len(syms))
	for i, s := range syms {
		if u := s.unmapped; u != nil {
			if ms[u.c] == nil {
				ms[u.c] = p.mappers(ctx, u.c)
			}
			s.Location, s.Line, s.unmapped = ms[u.c].location(u.loc), ms[u.c].line(u.loc), nil
		}
		out[i] = s
	}
	return out
}

// SearchesDependenciesApart says whether a server (language's, or any
// when empty) searches the dependencies' symbols only when asked
// (SymbolQuery.Dependencies), through a second instance. With no
// language, only the servers a workspace-wide query goes to count (their
// project marker is in the root, or they run): gopls, configured but
// idle in a TypeScript project, leaves no dependencies unsearched there.
func (p *Pool) SearchesDependenciesApart(language string) bool {
	for _, s := range p.servers {
		if s.disabled || s.depsSettings == nil || (language != "" && s.name != language) {
			continue
		}
		if language != "" || p.inWorkspace(s) {
			return true
		}
	}
	return false
}

// inWorkspace says whether a workspace-wide query goes to s (see
// workspaceEntries): its marker is in the root, or an instance runs.
func (p *Pool) inWorkspace(s *server) bool {
	for _, m := range s.rootMarkers {
		if _, err := os.Stat(filepath.Join(p.opts.Root, m)); err == nil {
			return true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.entries {
		if k.server == s.name && e.state == StateRunning {
			return true
		}
	}
	return false
}

// depsEntry is the instance of e's server, for e's root, that searches
// the dependencies too (see server.depsSettings).
func (p *Pool) depsEntry(e *entry) (*entry, error) {
	settings, err := mergeJSON(e.srv.settings, e.srv.depsSettings)
	if err != nil {
		return nil, fmt.Errorf("lsp.%s.settings: %v", e.srv.name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%w: the pool is closed", ErrUnavailable)
	}
	key := entryKey{e.srv.name + " (dependencies)", e.root}
	d := p.entries[key]
	if d == nil {
		srv := *e.srv
		srv.settings, srv.depsSettings = settings, nil
		d = &entry{pool: p, srv: &srv, root: e.root, state: StateIdle}
		p.entries[key] = d
	}
	return d, nil
}

// partial is a *PartialError for the servers that could not answer, nil
// when all did.
func partial(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return &PartialError{Missing: errs}
}

// workspaceEntries picks the servers a workspace-wide query goes to.
func (p *Pool) workspaceEntries(language string) ([]*entry, error) {
	probe := filepath.Join(p.opts.Root, "_") // a file at the root
	var out []*entry
	for _, s := range p.servers {
		if s.disabled || (language != "" && s.name != language) {
			continue
		}
		wanted := language != ""
		if !wanted {
			for _, m := range s.rootMarkers {
				if _, err := os.Stat(filepath.Join(p.opts.Root, m)); err == nil {
					wanted = true
				}
			}
		}
		p.mu.Lock()
		for k, e := range p.entries {
			if k.server == s.name && e.state == StateRunning && !(wanted && k.root == p.opts.Root) {
				out = append(out, e)
			}
		}
		p.mu.Unlock()
		if wanted {
			if _, err := s.resolve(p.opts.Root, p.lookPath); err != nil {
				if language != "" {
					return nil, fmt.Errorf("lsp.%s: %w", s.name, err)
				}
				continue
			}
			e, err := p.entryFor(s, probe)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		if language != "" {
			return nil, fmt.Errorf("%w: no server named %q is configured", ErrNoServer, language)
		}
		return nil, fmt.Errorf("%w: none is running and no project marker (go.mod, package.json, ...) is in %s; name the language", ErrNoServer, p.opts.Root)
	}
	return out, nil
}

// Resolve finds where a name is declared: "Foo", "pkg.Foo" (a package's
// last path element or its path) or "T.M" (a method or field of T). With
// file set, only that file's symbols are searched; otherwise the
// workspace's, with language as in SymbolQuery.
func (p *Pool) Resolve(ctx context.Context, name, file, language string) ([]Symbol, error) {
	if name == "" {
		return nil, errors.New("resolve: the name is empty")
	}
	qual, last := "", name
	if i := strings.LastIndex(name, "."); i >= 0 {
		qual, last = name[:i], name[i+1:]
	}
	var out []Symbol
	// missing is the servers that could not answer the workspace search.
	var missing *PartialError
	if file != "" {
		found, err := p.resolveInFile(ctx, file, name, qual, last)
		if err != nil {
			return nil, err
		}
		out = found
	} else {
		// Only the symbols that may be the name are worth mapping (which
		// reads their files): a fuzzy server returns a hundred others.
		keep := func(symName, _, _ string) bool {
			base := symName
			if i := strings.LastIndex(base, "."); i >= 0 {
				base = base[i+1:]
			}
			return symName == name || base == last
		}
		syms, err := p.Symbols(ctx, last, SymbolQuery{Language: language, Limit: 1000, Keep: keep})
		if err != nil && !errors.As(err, &missing) {
			return nil, err
		}
		if p.SearchesDependenciesApart(language) && !slices.ContainsFunc(syms, func(s Symbol) bool { return nameMatches(s.Name, s.Container, name, qual, last) }) {
			// Not the workspace's: a dependency's (http.Server.Shutdown).
			missing = nil
			syms, err = p.Symbols(ctx, last, SymbolQuery{Language: language, Limit: 1000, Keep: keep, Dependencies: true})
			if err != nil && !errors.As(err, &missing) {
				return nil, err
			}
		}
		// Servers that leave the container out (typescript-language-server)
		// get it from the file's outline.
		outlined := map[string]bool{}
		for _, s := range syms {
			switch {
			case nameMatches(s.Name, s.Container, name, qual, last):
				out = append(out, s)
			case qual != "" && s.Container == "" && !outlined[s.Location.Path] && nameMatches(s.Name, "", last, "", last):
				outlined[s.Location.Path] = true
				found, err := p.resolveInFile(ctx, s.Location.Path, name, qual, last)
				if err != nil {
					p.log.Debug("resolve: no outline", "path", s.Location.Path, "err", err)
				}
				out = append(out, found...)
			}
		}
	}
	if len(out) == 0 && missing != nil {
		// Not found where it was searched, and not searched everywhere.
		return nil, errors.Join(missing.Missing...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve: no symbol named %q was found", name)
	}
	if missing != nil {
		return out, missing
	}
	return out, nil
}

// resolveInFile finds the name among a file's outline, a symbol's parent
// in the outline counting as its container.
func (p *Pool) resolveInFile(ctx context.Context, file, name, qual, last string) ([]Symbol, error) {
	syms, err := p.DocumentSymbols(ctx, file)
	if err != nil {
		return nil, err
	}
	var out []Symbol
	var walk func(parent string, list []Symbol)
	walk = func(parent string, list []Symbol) {
		for _, s := range list {
			container := parent
			if container == "" {
				container = s.Container
			}
			if nameMatches(s.Name, container, name, qual, last) {
				s.Children, s.Container = nil, container
				out = append(out, s)
			}
			walk(s.Name, s.Children)
		}
	}
	walk("", syms)
	return out, nil
}

// nameMatches compares a symbol with a wanted name: exactly, or its last
// part with the qualifier matching the container (a package path ending in
// it, or the receiver type servers put in the name or the container).
func nameMatches(symName, container, full, qual, last string) bool {
	if symName == full {
		return true
	}
	// Servers write methods as "T.M", "(T).M", "(*T).M" or "M".
	base := symName
	if i := strings.LastIndex(base, "."); i >= 0 {
		recv := strings.Trim(base[:i], "()*")
		base = base[i+1:]
		if base == last && qual != "" && recv == qual {
			return true
		}
	}
	if base != last {
		return false
	}
	if qual == "" {
		return true
	}
	container = strings.Trim(container, "()*")
	return container == qual || strings.HasSuffix(container, "/"+qual) || strings.HasSuffix(container, "."+qual)
}
