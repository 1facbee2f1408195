package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/diagnostics/lsp"
	"github.com/darman-dev/darman/internal/fsafe"
	"github.com/darman-dev/darman/internal/lazyre"
)

// RenameSymbolInput is the rename_symbol tool's input.
type RenameSymbolInput struct {
	Symbol  string `json:"symbol" jsonschema:"the name to rename: Foo, pkg.Foo or T.M" example:"\"parseArgs\""`
	NewName string `json:"new_name" jsonschema:"the new name (an identifier)" example:"\"parseFlags\""`
	Path    string `json:"path,omitempty" jsonschema:"a file, relative to the project root, whose declarations are searched first" example:"\"cmd/tool/main.go\""`
	Apply   bool   `json:"apply,omitempty" jsonschema:"write the edits to disk; false (the default) only shows them" example:"false"`
}

// FileChange is the edits to one file.
type FileChange struct {
	Path  string     `json:"path"`
	Edits []TextEdit `json:"edits"`
}

// TextEdit replaces a span (1-based lines and columns, end exclusive)
// with new text.
type TextEdit struct {
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	NewText   string `json:"newText"`
}

// RenameSymbolOutput is the rename_symbol tool's output.
type RenameSymbolOutput struct {
	envelope
	Symbol  SymbolInfo   `json:"symbol" jsonschema:"the declaration renamed"`
	Changes []FileChange `json:"changes"`
	Diff    string       `json:"diff" jsonschema:"a unified diff of every file (of the first files when the rename is large: see note)"`
	Applied bool         `json:"applied" jsonschema:"true when the files were written"`
	// Files and Edits count the whole rename, listed or not.
	Files int    `json:"files" jsonschema:"how many files the rename changes"`
	Edits int    `json:"edits" jsonschema:"how many edits the rename makes"`
	Note  string `json:"note,omitempty"`
}

// A rename's result lists at most maxRenameEdits edits and maxRenameDiff
// bytes of diff (whole files), within a result's budget; apply: true
// writes all of it either way.
const (
	maxRenameEdits = 400
	maxRenameDiff  = 30_000
)

var identifier = lazyre.New(`^[\p{L}_$][\p{L}\p{N}_$]*$`)

func (s *Server) addRenameSymbol() {
	addTool(s, &mcp.Tool{
		Name:  "rename_symbol",
		Title: "Rename a symbol everywhere",
		Description: "Renames a symbol given by name (Foo, pkg.Foo or T.M) and every use of it across the project, as the " +
			"language server computes it. Returns the edits and a unified diff; writes the files only with apply: true.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: new(false), IdempotentHint: false, OpenWorldHint: new(false)},
	}, s.renameSymbol)
}

func (s *Server) renameSymbol(ctx context.Context, in RenameSymbolInput) (RenameSymbolOutput, string, error) {
	out := RenameSymbolOutput{Changes: []FileChange{}}
	if !identifier.MatchString(in.NewName) {
		return out, "", toolErrorf(CodeInvalidInput, "new_name %q is not an identifier", in.NewName)
	}
	decls, err := s.resolve(ctx, in.Symbol, in.Path)
	if err != nil {
		return out, "", err
	}
	if len(decls) > 1 {
		var where []string
		for _, d := range decls {
			where = append(where, s.span(lines{}, d.Location).String())
		}
		return out, "", toolErrorf(CodeInvalidInput, "%q names %d declarations (%s): qualify it (pkg.Foo, T.M) or give the file in path", in.Symbol, len(decls), strings.Join(where, "; "))
	}
	d := decls[0]
	out.Symbol = s.symbolInfo(lines{}, d)
	edits, err := s.pool.Rename(ctx, d.Location.Path, d.Location.Start, in.NewName)
	if err != nil {
		return out, "", err
	}
	var links []string
	for _, fe := range edits {
		// The real location, links resolved: a file reached through a
		// link that leads out of the project is outside it.
		w, err := fsafe.Check(s.root.Dir, fe.Path)
		if err != nil || !within(s.root.Dir, fe.Path) {
			real := fe.Path
			if w.Real != "" {
				real = w.Real
			}
			var o *fsafe.OutsideError
			if errors.As(err, &o) {
				real = o.Real
			}
			return out, "", toolErrorf(CodeOutsideProject, "the rename would edit %s (%s), outside the project root %s; nothing was changed", s.root.Rel(fe.Path), real, s.root.Dir)
		}
		if w.Through {
			links = append(links, fmt.Sprintf("%s is a symbolic link: its target %s is written, the link stays", s.root.Rel(fe.Path), s.root.Rel(w.Real)))
		}
	}
	var diff strings.Builder
	diffed, listed := 0, 0
	for _, fe := range edits {
		out.Files++
		out.Edits += len(fe.Edits)
		fc := FileChange{Path: s.root.Rel(fe.Path), Edits: []TextEdit{}}
		for _, e := range fe.Edits {
			if listed == maxRenameEdits {
				break
			}
			fc.Edits = append(fc.Edits, TextEdit{Line: e.Start.Line, Column: e.Start.Column, EndLine: e.End.Line, EndColumn: e.End.Column, NewText: e.NewText})
			listed++
		}
		if len(fc.Edits) > 0 {
			out.Changes = append(out.Changes, fc)
		}
		if diff.Len() >= maxRenameDiff {
			continue
		}
		old, err := s.overlay.ReadFile(ctx, fe.Path)
		if err != nil {
			return out, "", err
		}
		if d := unifiedDiff(fc.Path, string(old), fe.NewText); diff.Len() == 0 || diff.Len()+len(d) <= maxRenameDiff {
			diff.WriteString(d)
			diffed++
		}
	}
	out.Diff = diff.String()
	if listed < out.Edits || diffed < out.Files {
		out.Note = fmt.Sprintf("a large rename: %d of %d edits listed and the diff of %d of %d files shown; apply: true writes all of them", listed, out.Edits, diffed, out.Files)
	}
	if len(links) > 0 {
		out.Note = strings.TrimPrefix(out.Note+"; "+strings.Join(links, "; "), "; ")
	}
	if in.Apply {
		if err := s.apply(ctx, edits); err != nil {
			return out, "", err
		}
		out.Applied = true
	}
	var b strings.Builder
	verb := "would change"
	if out.Applied {
		verb = "changed"
	}
	fmt.Fprintf(&b, "renaming %s to %s %s %d file(s)", out.Symbol, in.NewName, verb, out.Files)
	if !out.Applied {
		b.WriteString(" (not written: call again with apply: true to write)")
	}
	if out.Note != "" {
		b.WriteString("\n" + out.Note)
	}
	b.WriteString("\n" + out.Diff)
	return out, strings.TrimRight(b.String(), "\n"), nil
}

// apply writes each file's new text atomically (a temporary file beside
// it renamed over it, keeping its mode; through a link inside the project,
// never out of it: see internal/fsafe), then tells the language servers.
func (s *Server) apply(ctx context.Context, edits []diagnostics.FileEdit) error {
	var changed []diagnostics.FileChange
	for _, fe := range edits {
		if _, err := fsafe.WriteFile(s.root.Dir, fe.Path, []byte(fe.NewText)); err != nil {
			var o *fsafe.OutsideError
			if errors.As(err, &o) {
				return toolErrorf(CodeOutsideProject, "%s leads outside the project root (%s) and was not written (files before it in the list were written)", s.root.Rel(fe.Path), o.Real)
			}
			return toolErrorf(CodeInternal, "writing %s: %v (files before it in the list were written)", s.root.Rel(fe.Path), err)
		}
		changed = append(changed, diagnostics.FileChange{Path: fe.Path, Type: lsp.FileChanged})
	}
	s.pool.FilesChanged(ctx, changed...)
	for _, c := range changed {
		if err := s.pool.Touch(ctx, c.Path); err != nil {
			s.log.Warn("mcp: telling the language server about a renamed file", "path", c.Path, "err", err)
		}
	}
	return nil
}
