package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// Diagnostic is one problem a language server reported, with positions
// people read: lines and columns start at 1, columns count characters
// (runes).
type Diagnostic struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	// Severity is error, warning, information or hint.
	Severity string `json:"severity"`
	Code     string `json:"code,omitempty"`
	// CodeHref links to the documentation of Code, when the server gave
	// one (LSP's codeDescription.href).
	CodeHref string `json:"codeHref,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
	// Related are other places the message refers to (LSP's
	// relatedInformation): a declaration, the other side of a conflict.
	Related []Related `json:"related,omitempty"`
}

// Related is a place a diagnostic refers to, in people's positions, and
// what the server says about it.
type Related struct {
	Location Location `json:"location"`
	Message  string   `json:"message"`
}

// Report is a file's diagnostics for its latest touched content.
type Report struct {
	Path string `json:"path"`
	// Server is the configuration key of the server that answered.
	Server  string       `json:"server"`
	Version int32        `json:"version"`
	Items   []Diagnostic `json:"items"`
	// Stale says the server did not answer for this version within the
	// wait: Items are the last set known, which may be out of date.
	Stale bool `json:"stale,omitempty"`
	// Superseded says a newer touch of the file ended the wait.
	Superseded bool `json:"superseded,omitempty"`
	// Pulled says the server was asked (pull diagnostics) rather than
	// waited for.
	Pulled bool `json:"pulled,omitempty"`
	// ServerTime is how long the server took: from sending the version
	// to receiving its set (zero when Stale).
	ServerTime time.Duration `json:"serverTimeNs,omitempty"`
}

// Errors returns the error-severity items.
func (r Report) Errors() []Diagnostic {
	var out []Diagnostic
	for _, d := range r.Items {
		if d.Severity == "error" {
			out = append(out, d)
		}
	}
	return out
}

// Touch sends the file's current content (read through Options.Files) to
// its language server: didOpen the first time, didChange with a new
// version after that, nothing when the server already has this content.
// The server starts if need be. A file that no longer exists is closed and
// reported deleted. Errors wrap ErrNoServer, ErrNotInstalled or
// ErrUnavailable when there is no server to tell.
func (p *Pool) Touch(ctx context.Context, path string) error {
	path, err := absPath(path)
	if err != nil {
		return err
	}
	_, c, err := p.client(ctx, path)
	if err != nil {
		return err
	}
	_, err = p.sync(ctx, c, path)
	return err
}

// sync reads path and sends it to c; it returns false when the file is
// gone (and closes it).
func (p *Pool) sync(ctx context.Context, c *lsp.Client, path string) (bool, error) {
	uri := lsp.URIFromPath(path)
	text, err := p.files.ReadFile(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := c.CloseDocument(ctx, uri); err != nil {
			return false, err
		}
		_, err := c.FilesChanged(ctx, []lsp.FileEvent{{URI: string(uri), Type: lsp.FileDeleted}})
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if _, err := c.Sync(ctx, uri, languageID(path), text); err != nil {
		return false, err
	}
	return true, nil
}

// Diagnostics returns the file's diagnostics for its latest touched
// content. A file never touched is touched first. With pull diagnostics
// the server is asked; otherwise the call waits up to wait (zero means
// the server's configured diagnosticsWait, else Options.Wait) for the set the server publishes for that version, and
// returns the last known set marked Stale if it does not come. A newer
// touch of the file ends the wait (Superseded). Errors wrap ErrNoServer,
// ErrNotInstalled or ErrUnavailable (the server crashed: it restarts on
// next use) or ctx's error.
func (p *Pool) Diagnostics(ctx context.Context, path string, wait time.Duration) (Report, error) {
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
	if _, _, open := c.Text(uri); !open {
		exists, err := p.sync(ctx, c, path)
		if err != nil {
			return Report{Path: path, Server: e.srv.name}, err
		}
		if !exists {
			return Report{Path: path, Server: e.srv.name, Items: []Diagnostic{}}, nil
		}
	}
	set, err := c.Diagnostics(ctx, uri, lsp.WaitOptions{Wait: wait, Settle: e.srv.settle})
	rep := p.report(ctx, e, c, path, set)
	if errors.Is(err, lsp.ErrClosed) {
		return rep, fmt.Errorf("%w: %s stopped while darman waited for diagnostics: %v", ErrUnavailable, e.srv.name, err)
	}
	if err == nil {
		// The server's set says nothing of a workspace it could not load.
		err = p.verdict(e)
	}
	return rep, err
}

// report converts a client's set into people's positions.
func (p *Pool) report(ctx context.Context, e *entry, c *lsp.Client, path string, set lsp.DiagnosticSet) Report {
	rep := Report{
		Path:       path,
		Server:     e.srv.name,
		Version:    set.Version,
		Stale:      !set.Fresh,
		Superseded: set.Superseded,
		Pulled:     set.Pulled,
		Items:      make([]Diagnostic, 0, len(set.Items)),
	}
	if set.Fresh {
		rep.ServerTime = set.ReceivedAt.Sub(set.SentAt)
	}
	mappers := p.mappers(ctx, c)
	for _, d := range set.Items {
		rep.Items = append(rep.Items, mappers.convert(path, set.URI, d))
	}
	return rep
}

// convert maps an LSP diagnostic of the document uri (at path) onto
// people's positions, its related places too. A range outside the text
// (the server saw other content) keeps its raw numbers, 1-based.
func (ms *mappers) convert(path string, uri lsp.DocumentURI, d lsp.Diagnostic) Diagnostic {
	out := Diagnostic{
		Path:     path,
		Severity: lsp.SeverityName(d.Severity),
		Code:     string(d.Code),
		Source:   d.Source,
		Message:  d.Message,
	}
	if d.CodeDescription != nil {
		out.CodeHref = d.CodeDescription.HRef
	}
	m, enc := ms.get(uri), ms.c.Capabilities().PositionEncoding
	out.Line, out.Column = lineCol(m, enc, d.Range.Start)
	out.EndLine, out.EndColumn = lineCol(m, enc, d.Range.End)
	for _, ri := range d.RelatedInformation {
		out.Related = append(out.Related, Related{Location: ms.location(ri.Location), Message: ri.Message})
	}
	return out
}

func lineCol(m *lsp.Mapper, enc lsp.Encoding, pos lsp.Position) (int, int) {
	if m != nil {
		if off, err := m.Offset(pos, enc); err == nil {
			if l, c, err := m.LineColumn(off); err == nil {
				return l, c
			}
		}
	}
	return int(pos.Line) + 1, int(pos.Character) + 1
}

// FileChange is a file darman changed on disk.
type FileChange struct {
	Path string
	// Type is created, changed or deleted.
	Type lsp.FileChangeType
}

// FilesChanged tells every running server whose root holds a changed file
// (workspace/didChangeWatchedFiles, to the servers that registered for
// it), so none answers from what it read before. Call it after darman
// writes, creates or deletes files. Servers that are not running are not
// started. Errors from individual servers are logged, not returned.
func (p *Pool) FilesChanged(ctx context.Context, changes ...FileChange) {
	p.mu.Lock()
	var running []*entry
	for _, e := range p.entries {
		if e.state == StateRunning {
			running = append(running, e)
		}
	}
	p.mu.Unlock()
	for _, e := range running {
		var events []lsp.FileEvent
		for _, ch := range changes {
			if path, err := absPath(ch.Path); err == nil && within(e.root, path) {
				events = append(events, lsp.FileEvent{URI: string(lsp.URIFromPath(path)), Type: ch.Type})
			}
		}
		if len(events) == 0 {
			continue
		}
		c := e.currentClient()
		if c == nil {
			continue
		}
		if _, err := c.FilesChanged(ctx, events); err != nil {
			p.log.Debug("didChangeWatchedFiles failed", "server", e.srv.name, "err", err)
		}
	}
}

func absPath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("diagnostics: %q is not an absolute path", path)
	}
	return filepath.Clean(path), nil
}
