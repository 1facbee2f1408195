package diagnostics

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// What the model reads of the language servers' diagnostics is written
// here, for every front: after an edit (Check, FormatErrors) and when it
// asks about a file (Problems, FormatProblems). One problem is one line,
// "{file}: L{line}: ..." with the file relative to the workspace root and
// the message folded onto the line, and a list longer than its cap ends
// with "... and N more". The caps differ by purpose:
//   - after an edit, at most maxPerFile (20) errors per file and
//     maxOtherFiles (5) other files: the text rides on every edit's
//     result and stays in the context; the first errors are the ones to
//     fix (the rest are mostly their consequences), and the editor gets
//     every item in the metadata;
//   - when the model asks for one file's problems, at most maxProblems
//     (100), all severities: it asked for that file's picture, once,
//     and warnings and hints are many where errors are few.
const (
	maxPerFile    = 20
	maxOtherFiles = 5
	maxProblems   = 100
)

// FormatErrors renders the error-severity items for the model: for each
// edited file with errors, "LSP errors detected in this file, please
// fix:" and one "{file}: L{line}: {message}" line per error (at most 20,
// then a count of the rest); then the same for other files, at most 5
// files. Paths inside root are shown relative to it. Empty when there are
// no errors.
func FormatErrors(root string, files, others []Report) string {
	var b strings.Builder
	for _, r := range files {
		errs := r.Errors()
		if len(errs) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("LSP errors detected in this file, please fix:\n")
		writeLines(&b, errs, maxPerFile, func(d Diagnostic) string {
			return fmt.Sprintf("%s: L%d: %s", displayPath(root, d.Path), d.Line, oneLine(d.Message))
		})
	}
	shown := 0
	for i, r := range others {
		errs := r.Errors()
		if len(errs) == 0 {
			continue
		}
		if shown == maxOtherFiles {
			fmt.Fprintf(&b, "... and errors in %d more files\n", len(others)-i)
			break
		}
		if shown == 0 {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("LSP errors detected in other files, please fix:\n")
		}
		writeLines(&b, errs, maxPerFile, func(d Diagnostic) string {
			return fmt.Sprintf("%s: L%d: %s", displayPath(root, d.Path), d.Line, oneLine(d.Message))
		})
		shown++
	}
	return b.String()
}

// FormatProblems renders one file's report for the model, every
// severity: "{file} has N problem(s):", then one
// "{file}: L{line}:{column} {severity}: {message}" line per item (at most
// 100, then a count of the rest), and a note when the server did not
// answer in time. Empty when there are none.
func FormatProblems(root string, r Report) string {
	if len(r.Items) == 0 {
		return ""
	}
	file := displayPath(root, r.Path)
	var b strings.Builder
	fmt.Fprintf(&b, "%s has %d problem(s):\n", file, len(r.Items))
	writeLines(&b, r.Items, maxProblems, func(d Diagnostic) string {
		return fmt.Sprintf("%s: L%d:%d %s: %s", file, d.Line, d.Column, d.Severity, oneLine(d.Message))
	})
	if r.Stale {
		b.WriteString("(the language server did not answer in time: these may be out of date)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Problems is what the agent's diagnostics tool calls: it touches the
// file, waits for its diagnostics, and returns them formatted for the
// model (FormatProblems; empty when there are none) and the Report as
// JSON. A server that cannot give them is an error saying why: one that
// cannot load the workspace is a *LoadError, not an empty list.
func (p *Pool) Problems(ctx context.Context, path string) (output string, metadata json.RawMessage, err error) {
	if err := p.Touch(ctx, path); err != nil {
		return "", nil, err
	}
	r, err := p.Diagnostics(ctx, path, 0)
	if err != nil {
		return "", nil, err
	}
	meta, err := json.Marshal(r)
	if err != nil {
		return "", nil, fmt.Errorf("encoding the report: %w", err)
	}
	return FormatProblems(p.opts.Root, r), meta, nil
}

// writeLines writes one line per item, at most limit, then how many more
// there are.
func writeLines(b *strings.Builder, items []Diagnostic, limit int, line func(Diagnostic) string) {
	for i, d := range items {
		if i == limit {
			fmt.Fprintf(b, "... and %d more\n", len(items)-i)
			return
		}
		b.WriteString(line(d))
		b.WriteString("\n")
	}
}

func displayPath(root, path string) string {
	if root != "" && within(root, path) {
		if rel, err := filepath.Rel(root, path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// oneLine folds a multi-line message (gopls's "have (string)\n\twant
// (string, int)") onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
