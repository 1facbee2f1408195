package diagnostics

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

const (
	// batchQuiet is how long Check waits, after the edited files' sets
	// arrived, for a server's sets for other files from the same pass
	// (gopls sends them within a millisecond).
	batchQuiet = 10 * time.Millisecond
)

// CheckResult is the metadata Check returns: everything found, all
// severities, for the editor and the VS Code panel.
type CheckResult struct {
	Files []Report `json:"files"`
	// Others holds files the edit did not touch whose new errors arrived
	// while Check waited (a renamed function's callers).
	Others []Report `json:"others,omitempty"`
	// Unavailable says why a file could not be checked (no server, the
	// server failed); the model is not told.
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// Check is what the edit tools call after writing: it tells the servers
// the files changed (didChangeWatchedFiles), touches each file, waits for
// their diagnostics (all at once, each up to Options.Wait), and returns
// the tool output (error-severity items, formatted for the model, capped;
// empty when there are none) and the metadata (a CheckResult as JSON). A
// file no server handles, or whose server fails, is left out of the
// output silently and noted in the metadata and the log.
func (p *Pool) Check(ctx context.Context, paths ...string) (output string, metadata json.RawMessage) {
	res := p.check(ctx, paths)
	b, err := json.Marshal(res)
	if err != nil {
		p.log.Error("encoding check metadata", "err", err)
	}
	return FormatErrors(p.opts.Root, res.Files, res.Others), b
}

func (p *Pool) check(ctx context.Context, paths []string) CheckResult {
	res := CheckResult{Unavailable: map[string]string{}}
	type target struct {
		path  string
		entry *entry
		c     *lsp.Client
	}
	var targets []target
	clients := map[*lsp.Client]bool{}
	changes := make([]FileChange, 0, len(paths))
	for _, path := range paths {
		changes = append(changes, FileChange{Path: path, Type: lsp.FileChanged})
	}
	p.FilesChanged(ctx, changes...)
	for _, path := range paths {
		abs, err := absPath(path)
		if err != nil {
			res.Unavailable[path] = err.Error()
			continue
		}
		e, c, err := p.client(ctx, abs)
		if err != nil {
			if !errors.Is(err, ErrNoServer) {
				p.log.Info("no diagnostics after an edit", "path", abs, "err", err)
			}
			res.Unavailable[abs] = err.Error()
			continue
		}
		targets = append(targets, target{abs, e, c})
		clients[c] = true
	}

	// What each server knew before, to tell the errors the edit caused
	// in other files from those that were there already.
	type before struct {
		seq    uint64
		errors map[lsp.DocumentURI]map[string]bool
	}
	prior := map[*lsp.Client]before{}
	for c := range clients {
		b := before{seq: c.Seq(), errors: map[lsp.DocumentURI]map[string]bool{}}
		for _, pub := range c.Published() {
			b.errors[pub.URI] = errorKeys(pub.Items)
		}
		prior[c] = b
	}

	reports := make([]Report, len(targets))
	failed := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.sync(ctx, t.c, t.path); err != nil {
				failed[i] = err
				return
			}
			reports[i], failed[i] = p.Diagnostics(ctx, t.path, 0)
		}()
	}
	wg.Wait()
	edited := map[lsp.DocumentURI]bool{}
	for i, t := range targets {
		edited[lsp.URIFromPath(t.path)] = true
		if failed[i] != nil {
			p.log.Info("no diagnostics after an edit", "path", t.path, "err", failed[i])
			res.Unavailable[t.path] = failed[i].Error()
			continue
		}
		res.Files = append(res.Files, reports[i])
	}

	for c, b := range prior {
		var e *entry
		for _, t := range targets {
			if t.c == c {
				e = t.entry
			}
		}
		// A server that is asked for diagnostics (pull, or tsserver
		// through typescript-language-server) is asked for its other
		// open documents too; one that publishes sends them itself.
		pctx, cancel := context.WithTimeout(ctx, p.waitFor(e.srv))
		c.PullOthers(pctx, edited)
		cancel()
		p.quiet(ctx, c, batchQuiet)
		for _, pub := range c.Published() {
			if pub.Seq <= b.seq || edited[pub.URI] {
				continue
			}
			path, err := pub.URI.Path()
			if err != nil {
				continue
			}
			var fresh []lsp.Diagnostic
			for _, d := range pub.Items {
				if d.Severity <= lsp.SeverityError && !b.errors[pub.URI][errorKey(d)] {
					fresh = append(fresh, d)
				}
			}
			if len(fresh) == 0 {
				continue
			}
			res.Others = append(res.Others, p.otherReport(ctx, e, c, path, pub, fresh))
		}
	}
	sort.Slice(res.Others, func(i, j int) bool { return res.Others[i].Path < res.Others[j].Path })
	if len(res.Unavailable) == 0 {
		res.Unavailable = nil
	}
	return res
}

// quiet waits until c has had no news for d, or ctx ends.
func (p *Pool) quiet(ctx context.Context, c *lsp.Client, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		ch := c.Changed()
		select {
		case <-ch:
			t.Reset(d)
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// otherReport converts a set for a file the edit did not touch, mapping
// positions with the file's current content.
func (p *Pool) otherReport(ctx context.Context, e *entry, c *lsp.Client, path string, pub lsp.Published, items []lsp.Diagnostic) Report {
	rep := Report{Path: path, Server: e.srv.name, Items: make([]Diagnostic, 0, len(items))}
	mappers := p.mappers(ctx, c)
	for _, d := range items {
		rep.Items = append(rep.Items, mappers.convert(path, pub.URI, d))
	}
	return rep
}

func errorKeys(items []lsp.Diagnostic) map[string]bool {
	keys := map[string]bool{}
	for _, d := range items {
		if d.Severity <= lsp.SeverityError {
			keys[errorKey(d)] = true
		}
	}
	return keys
}

// errorKey identifies an error across edits, which move its line.
func errorKey(d lsp.Diagnostic) string { return string(d.Code) + "\x00" + d.Message }
