package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// The queries below serve `darman mcp`. Positions are people's: lines and
// columns start at 1, columns count characters. Each query is bounded by
// Options.QueryTimeout unless ctx ends sooner, opens the file in its
// server with its current content first (Outline may not need to), and
// fails with an error wrapping ErrNoServer when no server handles the
// file's language.

// Position is a place in a file: 1-based line, 1-based column in
// characters.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Location is a span in a file.
type Location struct {
	Path  string   `json:"path"`
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Symbol is a named thing in the code.
type Symbol struct {
	Name string `json:"name"`
	// Kind is the LSP symbol kind's name: function, method, struct, ...
	Kind string `json:"kind"`
	// Container is what holds it (a package path, a type), as the server
	// says; empty for outline children, whose parent holds them.
	Container string   `json:"container,omitempty"`
	Detail    string   `json:"detail,omitempty"`
	Location  Location `json:"location"`
	// Children is the outline below it (DocumentSymbols only).
	Children []Symbol `json:"children,omitempty"`
	// Line is the text of the line it starts on, when Pool.Map read its
	// file to map it (so a caller that shows the line reads it no more).
	Line string `json:"-"`
	// unmapped is the server's place of a symbol found with
	// SymbolQuery.Unmapped, until Pool.Map maps it.
	unmapped *unmapped
}

// TextEdit replaces Start..End of a file with NewText. StartOffset and
// EndOffset are the same span in bytes of the file's current content.
type TextEdit struct {
	Start       Position `json:"start"`
	End         Position `json:"end"`
	StartOffset int      `json:"startOffset"`
	EndOffset   int      `json:"endOffset"`
	NewText     string   `json:"newText"`
}

// FileEdit is the edits to one file, and the file's text with them
// applied.
type FileEdit struct {
	Path    string     `json:"path"`
	Edits   []TextEdit `json:"edits"`
	NewText string     `json:"newText"`
}

// SymbolQuery narrows Symbols.
type SymbolQuery struct {
	// Language is a server's configuration key (go, typescript, ...);
	// empty asks every server that is running or whose root marker is in
	// the workspace root.
	Language string
	// Kinds keeps only these kinds (function, method, struct, ...); empty
	// keeps all.
	Kinds []string
	// Limit caps the results; zero means 100.
	Limit int
	// Keep, if set, is asked about each symbol before its position is
	// mapped (which reads its file): false leaves it out, at no cost.
	Keep func(name, container, path string) bool
	// Unmapped leaves the symbols' places as the servers gave them:
	// Location's Start and End are the server's line and character plus
	// one (characters in the server's encoding, UTF-16 for most), which
	// tell symbols apart but are not columns. Mapping them reads each
	// symbol's file, and a fuzzy server names a hundred files for a name:
	// rank and cut first, then Pool.Map the symbols kept.
	Unmapped bool
	// Dependencies asks for the dependencies' symbols too (the module
	// cache, the standard library). Servers set to search only the
	// workspace (gopls) answer through a second instance that searches
	// everything, started on the first such query.
	Dependencies bool
}

// queryCtx bounds a query.
func (p *Pool) queryCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.opts.QueryTimeout)
}

// open returns the client for path with the file synced, and a mapper of
// the content the server has.
func (p *Pool) open(ctx context.Context, path string) (*entry, *lsp.Client, *lsp.Mapper, error) {
	path, err := absPath(path)
	if err != nil {
		return nil, nil, nil, err
	}
	e, c, err := p.client(ctx, path)
	if err != nil {
		return nil, nil, nil, err
	}
	exists, err := p.sync(ctx, c, path)
	if err != nil {
		return nil, nil, nil, err
	}
	if !exists {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, os.ErrNotExist)
	}
	uri := lsp.URIFromPath(path)
	if !e.srv.indexesWorkspace {
		// gopls answers from the workspace it loaded before the file's
		// didOpen was handled; waiting for the file's diagnostics would
		// only wait for its pass over the whole workspace.
		p.ready(ctx, e, c, uri)
	}
	if err := p.verdict(e); err != nil {
		return nil, nil, nil, err
	}
	text, _, _ := c.Text(uri)
	return e, c, lsp.NewMapper(text), nil
}

// ready waits, at most the server's diagnostics wait, until the server
// has published diagnostics for the open document's current version.
// Servers answer queries about a project they are still loading from
// what they have (typescript-language-server's references then miss the
// files not open); a server's first diagnostics of a file say it has
// loaded the project around it. A warm server has them already, and the
// wait ends at once.
func (p *Pool) ready(ctx context.Context, e *entry, c *lsp.Client, uri lsp.DocumentURI) {
	set, err := c.Diagnostics(ctx, uri, lsp.WaitOptions{Wait: p.waitFor(e.srv)})
	if err == nil && !set.Fresh {
		p.log.Debug("querying a language server that has not diagnosed the file yet", "server", e.srv.name, "uri", uri)
	}
}

// anchor opens a file of the server's language when it has none open, so
// that servers which only know projects through open files
// (typescript-language-server) have one to search; then waits for it as
// ready does. A root without such a file is left as it is.
//
// A query that finds the file another one anchored (the warm start's)
// waits for it the same way: the server may still be loading.
func (p *Pool) anchor(ctx context.Context, e *entry, c *lsp.Client) {
	p.mu.Lock()
	path, opened := e.anchored, e.opened
	if path != "" && e.client != c {
		path = "" // anchored in an instance since replaced
	}
	p.mu.Unlock()
	if path != "" {
		// The other query may not have sent the file yet: asked before
		// it is open, the server answers from an empty project.
		select {
		case <-opened:
		case <-ctx.Done():
			return
		}
		p.ready(ctx, e, c, lsp.URIFromPath(path))
		return
	}
	if c.OpenDocuments() > 0 {
		return
	}
	path = findSource(e.root, e.srv.extensions)
	if path == "" {
		return
	}
	// Named before it is opened: a query coming between would see an
	// open file and not know to wait for it.
	opened = make(chan struct{})
	p.mu.Lock()
	if e.client == c {
		e.anchored, e.opened = path, opened
	}
	p.mu.Unlock()
	exists, err := p.sync(ctx, c, path)
	close(opened)
	if err != nil || !exists {
		p.mu.Lock()
		if e.anchored == path {
			e.anchored = ""
		}
		p.mu.Unlock()
		return
	}
	p.ready(ctx, e, c, lsp.URIFromPath(path))
}

// maxAnchorScan bounds the directory entries findSource looks at.
const maxAnchorScan = 5000

// findSource returns a file under root with one of the extensions,
// shallowest first, skipping hidden directories and node_modules; empty
// when none is found within maxAnchorScan entries.
func findSource(root string, exts []string) string {
	dirs := []string{root}
	seen := 0
	for len(dirs) > 0 && seen < maxAnchorScan {
		dir := dirs[0]
		dirs = dirs[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range entries {
			seen++
			name := de.Name()
			if de.IsDir() {
				if !strings.HasPrefix(name, ".") && name != "node_modules" {
					dirs = append(dirs, filepath.Join(dir, name))
				}
				continue
			}
			if de.Type().IsRegular() && slices.Contains(exts, strings.ToLower(filepath.Ext(name))) {
				return filepath.Join(dir, name)
			}
		}
	}
	return ""
}

func toLSP(m *lsp.Mapper, enc lsp.Encoding, pos Position) (lsp.Position, error) {
	off, err := m.OffsetOf(pos.Line, pos.Column)
	if err != nil {
		return lsp.Position{}, err
	}
	return m.Position(off, enc)
}

// mappers converts locations in any file, reading each file once.
type mappers struct {
	p   *Pool
	c   *lsp.Client
	ctx context.Context
	m   map[lsp.DocumentURI]*lsp.Mapper
}

func (p *Pool) mappers(ctx context.Context, c *lsp.Client) *mappers {
	return &mappers{p: p, c: c, ctx: ctx, m: map[lsp.DocumentURI]*lsp.Mapper{}}
}

func (ms *mappers) get(uri lsp.DocumentURI) *lsp.Mapper {
	if m, ok := ms.m[uri]; ok {
		return m
	}
	var m *lsp.Mapper
	if text, _, open := ms.c.Text(uri); open {
		m = lsp.NewMapper(text)
	} else if path, err := uri.Path(); err == nil {
		if text, err := ms.p.files.ReadFile(ms.ctx, path); err == nil {
			m = lsp.NewMapper(text)
		}
	}
	ms.m[uri] = m
	return m
}

func (ms *mappers) location(l lsp.Location) Location {
	uri := lsp.DocumentURI(l.URI)
	path, err := uri.Path()
	if err != nil {
		path = l.URI
	}
	m, enc := ms.get(uri), ms.c.Capabilities().PositionEncoding
	sl, sc := lineCol(m, enc, l.Range.Start)
	el, ec := lineCol(m, enc, l.Range.End)
	return Location{Path: path, Start: Position{sl, sc}, End: Position{el, ec}}
}

// line is the text of the line l starts on, from the file location read
// (empty when it could not be read).
func (ms *mappers) line(l lsp.Location) string {
	if m := ms.get(lsp.DocumentURI(l.URI)); m != nil {
		return m.Line(int(l.Range.Start.Line))
	}
	return ""
}

// DocumentSymbols returns a file's outline.
func (p *Pool) DocumentSymbols(ctx context.Context, path string) ([]Symbol, error) {
	syms, _, err := p.Outline(ctx, path)
	return syms, err
}

// Outline returns a file's outline and the text it describes, from the
// server's last answer for the same text when it has not restarted since
// (see outlines). A server
// that loads the whole workspace itself (gopls) is asked without the
// file opened in it when the file is unchanged on disk since the server
// started and reads as the disk has it: the server knows it as it is,
// and each didOpen costs gopls a diagnosis of the workspace (on Go's
// src, 30 s for the 21 files of a package). References, Definition and
// Hover ask the same way.
func (p *Pool) Outline(ctx context.Context, path string) ([]Symbol, []byte, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	path = filepath.Clean(path)
	if syms, text, ok := p.outlineOnDisk(ctx, path); ok {
		return syms, text, nil
	}
	before, _ := fileIDOf(path)
	e, c, m, text, err := p.read(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	// The text is the disk's file before when the file is still that one
	// (a write between would change it) and no buffer stood for it.
	if after, ok := fileIDOf(path); !ok || after != before || !p.readsDisk(path) {
		before = fileID{}
	} else if _, _, open := c.Text(lsp.URIFromPath(path)); open {
		before = fileID{}
	}
	if syms, ok := p.outlines.get(c, path, text); ok {
		if err := p.verdict(e); err != nil {
			return nil, nil, err
		}
		return syms, text, nil
	}
	syms, err := c.DocumentSymbols(ctx, lsp.URIFromPath(path))
	if err := p.answered(e, true, err); err != nil {
		return nil, nil, err
	}
	enc, mp := c.Capabilities().PositionEncoding, m()
	var conv func(s lsp.DocumentSymbol) Symbol
	conv = func(s lsp.DocumentSymbol) Symbol {
		sl, sc := lineCol(mp, enc, s.SelectionRange.Start)
		el, ec := lineCol(mp, enc, s.SelectionRange.End)
		out := Symbol{
			Name: s.Name, Kind: lsp.SymbolKindName(s.Kind), Container: s.ContainerName,
			Location: Location{Path: path, Start: Position{sl, sc}, End: Position{el, ec}},
			Children: make([]Symbol, 0, len(s.Children)),
		}
		if s.Detail != nil {
			out.Detail = *s.Detail
		}
		for _, child := range s.Children {
			out.Children = append(out.Children, conv(lsp.DocumentSymbol{DocumentSymbol: child}))
		}
		return out
	}
	out := make([]Symbol, 0, len(syms))
	for _, s := range syms {
		out = append(out, conv(s))
	}
	p.outlines.put(c, path, text, out, before)
	return out, text, nil
}

// outlineOnDisk is the outline kept for path when the file is not open
// in its server, reads as the disk has it, and is still on disk the file
// the outline was made of.
func (p *Pool) outlineOnDisk(ctx context.Context, path string) ([]Symbol, []byte, bool) {
	if !filepath.IsAbs(path) || !p.readsDisk(path) {
		return nil, nil, false
	}
	e, c, err := p.client(ctx, path)
	if err != nil || !e.srv.indexesWorkspace {
		return nil, nil, false
	}
	if _, _, open := c.Text(lsp.URIFromPath(path)); open {
		return nil, nil, false
	}
	id, ok := fileIDOf(path)
	if !ok {
		return nil, nil, false
	}
	syms, text, ok := p.outlines.unchanged(c, path, id)
	if !ok || p.verdict(e) != nil {
		return nil, nil, false
	}
	return syms, text, true
}

// readsDisk says whether the pool reads path as the disk has it (no
// editor's buffer stands for it).
func (p *Pool) readsDisk(path string) bool {
	switch f := p.files.(type) {
	case diskReader:
		return true
	case Overlay:
		return !f.Overlaid(path)
	}
	return false
}

// read is open for a query that may be asked of a file not open in the
// server (see Outline): it returns the file's text as well, read once,
// and its mapper made when first asked for (an outline kept for the
// text needs none). The query must not need the server to hold the file
// (diagnostics do).
func (p *Pool) read(ctx context.Context, path string) (*entry, *lsp.Client, func() *lsp.Mapper, []byte, error) {
	path, err := absPath(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	e, c, err := p.client(ctx, path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	uri := lsp.URIFromPath(path)
	if _, _, open := c.Text(uri); !open && e.srv.indexesWorkspace {
		p.mu.Lock()
		since := e.spawnedAt
		p.mu.Unlock()
		if text, ok := p.unchangedSince(ctx, path, since); ok {
			if err := p.verdict(e); err != nil {
				return nil, nil, nil, nil, err
			}
			return e, c, sync.OnceValue(func() *lsp.Mapper { return lsp.NewMapper(text) }), text, nil
		}
	}
	e, c, m, err := p.open(ctx, path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	text, _, _ := c.Text(uri)
	return e, c, func() *lsp.Mapper { return m }, text, nil
}

// Overlay is what a FileReader may also say: whether a file reads as
// something other than the disk's content (an editor's unsaved buffer).
type Overlay interface {
	Overlaid(path string) bool
}

// unchangedSince reads path when it was last changed on disk before
// since and reads as the disk has it.
func (p *Pool) unchangedSince(ctx context.Context, path string, since time.Time) ([]byte, bool) {
	text, err := p.files.ReadFile(ctx, path)
	if err != nil {
		return nil, false
	}
	// Looked at after the read: a change since would be seen. The change
	// time where there is one: a modification time can be set back (a
	// checkout, touch -r, an editor keeping it), the change time cannot.
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(since) {
		return nil, false
	}
	if id, ok := fileIDOf(path); ok && !time.Unix(0, id.ctime).Before(since) {
		return nil, false
	}
	switch f := p.files.(type) {
	case diskReader:
	case Overlay:
		if f.Overlaid(path) {
			return nil, false
		}
	default:
		disk, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(disk, text) {
			return nil, false
		}
	}
	return text, true
}

// References lists the places that refer to the symbol at pos.
func (p *Pool) References(ctx context.Context, path string, pos Position, includeDeclaration bool) ([]Location, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	e, c, m, _, err := p.read(ctx, path)
	if err != nil {
		return nil, err
	}
	lp, err := toLSP(m(), c.Capabilities().PositionEncoding, pos)
	if err != nil {
		return nil, fmt.Errorf("references: %w", err)
	}
	locs, err := c.References(ctx, lsp.URIFromPath(filepath.Clean(path)), lp, includeDeclaration)
	if err := p.answered(e, true, err); err != nil {
		return nil, err
	}
	return p.locations(ctx, c, locs), nil
}

// Definition lists where the symbol at pos is defined.
func (p *Pool) Definition(ctx context.Context, path string, pos Position) ([]Location, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	e, c, m, _, err := p.read(ctx, path)
	if err != nil {
		return nil, err
	}
	lp, err := toLSP(m(), c.Capabilities().PositionEncoding, pos)
	if err != nil {
		return nil, fmt.Errorf("definition: %w", err)
	}
	locs, err := c.Definition(ctx, lsp.URIFromPath(filepath.Clean(path)), lp)
	if err := p.answered(e, true, err); err != nil {
		return nil, err
	}
	return p.locations(ctx, c, locs), nil
}

func (p *Pool) locations(ctx context.Context, c *lsp.Client, locs []lsp.Location) []Location {
	ms := p.mappers(ctx, c)
	out := make([]Location, 0, len(locs))
	for _, l := range locs {
		out = append(out, ms.location(l))
	}
	return out
}

// Hover returns the server's hover text (signature and documentation,
// usually Markdown) for the symbol at pos; empty when there is none.
func (p *Pool) Hover(ctx context.Context, path string, pos Position) (string, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	e, c, m, _, err := p.read(ctx, path)
	if err != nil {
		return "", err
	}
	lp, err := toLSP(m(), c.Capabilities().PositionEncoding, pos)
	if err != nil {
		return "", fmt.Errorf("hover: %w", err)
	}
	h, err := c.Hover(ctx, lsp.URIFromPath(filepath.Clean(path)), lp)
	if err := p.answered(e, true, err); err != nil || h == nil {
		return "", err
	}
	return h.Contents, nil
}

// Rename computes the edits that rename the symbol at pos to newName. It
// never applies them: each FileEdit carries the file's new text.
func (p *Pool) Rename(ctx context.Context, path string, pos Position, newName string) ([]FileEdit, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	e, c, m, err := p.open(ctx, path)
	if err != nil {
		return nil, err
	}
	enc := c.Capabilities().PositionEncoding
	lp, err := toLSP(m, enc, pos)
	if err != nil {
		return nil, fmt.Errorf("rename: %w", err)
	}
	we, err := c.Rename(ctx, lsp.URIFromPath(filepath.Clean(path)), lp, newName)
	if err := p.answered(e, true, err); err != nil {
		return nil, err
	}
	if len(we.FileOps) > 0 {
		return nil, fmt.Errorf("rename: the server wants to create, rename or delete files (%d operations), which darman does not support", len(we.FileOps))
	}
	byURI := map[lsp.DocumentURI][]lsp.TextEdit{}
	var order []lsp.DocumentURI
	add := func(uri lsp.DocumentURI, edits []lsp.TextEdit) {
		if _, seen := byURI[uri]; !seen {
			order = append(order, uri)
		}
		byURI[uri] = append(byURI[uri], edits...)
	}
	for _, te := range we.Edits {
		add(te.URI, te.Edits)
	}
	for _, uri := range slices.Sorted(maps.Keys(we.Changes)) {
		add(uri, we.Changes[uri])
	}
	ms := p.mappers(ctx, c)
	out := make([]FileEdit, 0, len(order))
	for _, uri := range order {
		fe, err := fileEdit(uri, ms.get(uri), enc, byURI[uri])
		if err != nil {
			return nil, fmt.Errorf("rename: %w", err)
		}
		out = append(out, fe)
	}
	slices.SortFunc(out, func(a, b FileEdit) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func fileEdit(uri lsp.DocumentURI, m *lsp.Mapper, enc lsp.Encoding, edits []lsp.TextEdit) (FileEdit, error) {
	path, err := uri.Path()
	if err != nil {
		return FileEdit{}, err
	}
	if m == nil {
		return FileEdit{}, fmt.Errorf("cannot read %s to place the edits", path)
	}
	fe := FileEdit{Path: path}
	for _, e := range edits {
		so, err := m.Offset(e.Range.Start, enc)
		if err != nil {
			return FileEdit{}, fmt.Errorf("%s: %w", path, err)
		}
		eo, err := m.Offset(e.Range.End, enc)
		if err != nil {
			return FileEdit{}, fmt.Errorf("%s: %w", path, err)
		}
		sl, sc, _ := m.LineColumn(so)
		el, ec, _ := m.LineColumn(eo)
		fe.Edits = append(fe.Edits, TextEdit{Start: Position{sl, sc}, End: Position{el, ec}, StartOffset: so, EndOffset: eo, NewText: e.NewText})
	}
	text, err := m.ApplyEdits(edits, enc)
	if err != nil {
		return FileEdit{}, fmt.Errorf("%s: %w", path, err)
	}
	fe.NewText = string(text)
	return fe, nil
}

// Format returns the file's text as its server formats it (tabs, or
// 4-space indents where the server asks). The file is not written.
func (p *Pool) Format(ctx context.Context, path string) (string, error) {
	ctx, cancel := p.queryCtx(ctx)
	defer cancel()
	e, c, m, err := p.open(ctx, path)
	if err != nil {
		return "", err
	}
	edits, err := c.Format(ctx, lsp.URIFromPath(filepath.Clean(path)), lsp.FormattingOptions{"tabSize": 4, "insertSpaces": false})
	if err := p.answered(e, true, err); err != nil {
		return "", err
	}
	out, err := m.ApplyEdits(edits, c.Capabilities().PositionEncoding)
	if err != nil {
		return "", fmt.Errorf("format: %w", err)
	}
	return string(out), nil
}

// DiagnoseText returns the diagnostics the file would have with text as
// its content. The text is opened in the server as an overlay, never
// written to disk; afterwards the server gets the file's real content
// back (or the document is closed when the file does not exist). While it
// runs, a concurrent Touch of the same file races with the overlay.
func (p *Pool) DiagnoseText(ctx context.Context, path, text string, wait time.Duration) (Report, error) {
	path, err := absPath(path)
	if err != nil {
		return Report{}, err
	}
	e, c, err := p.client(ctx, path)
	if err != nil {
		return Report{Path: path}, err
	}
	if wait <= 0 {
		wait = p.waitFor(e.srv)
	}
	uri := lsp.URIFromPath(path)
	if _, err := c.Sync(ctx, uri, languageID(path), []byte(text)); err != nil {
		return Report{Path: path, Server: e.srv.name}, err
	}
	set, err := c.Diagnostics(ctx, uri, lsp.WaitOptions{Wait: wait, Settle: e.srv.settle})
	rep := p.report(ctx, e, c, path, set)
	restore := context.WithoutCancel(ctx)
	if _, serr := p.sync(restore, c, path); serr != nil {
		p.log.Debug("restoring a file after an overlay", "path", path, "err", serr)
	}
	if errors.Is(err, lsp.ErrClosed) {
		return rep, fmt.Errorf("%w: %s stopped while darman waited for diagnostics: %v", ErrUnavailable, e.srv.name, err)
	}
	if err == nil {
		err = p.verdict(e)
	}
	return rep, err
}
