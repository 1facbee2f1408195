package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
)

// DiagnosticsInput is the diagnostics tool's input.
type DiagnosticsInput struct {
	Paths    []string `json:"paths,omitempty" jsonschema:"files or directories to check, relative to the project root; empty checks the whole project" example:"[\"internal/parse/parse.go\"]"`
	Severity string   `json:"severity,omitempty" jsonschema:"the least severe problems to include: error, warning, information or hint (the default)" example:"\"warning\""`
	Limit    int      `json:"limit,omitempty" jsonschema:"at most this many problems, the most severe first (default 50, at most 200); the counts are always complete" example:"100"`
}

// Problem is one diagnostic a language server reported.
type Problem struct {
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Severity  string `json:"severity" jsonschema:"error, warning, information or hint"`
	Code      string `json:"code,omitempty" jsonschema:"the diagnostic's code; explain_diagnostic tells what it means"`
	// CodeHref is where the server says the code is documented.
	CodeHref string `json:"codeHref,omitempty" jsonschema:"where the language server says the code is documented; in a diagnostics answer given once, on the first problem with this source and code"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
	// Related are the other places the message refers to.
	Related []RelatedPlace `json:"related,omitempty" jsonschema:"other places the message refers to: a declaration, the other side of a conflict"`
}

// RelatedPlace is a place a problem refers to and what the server says
// of it.
type RelatedPlace struct {
	Span
	Message string `json:"message"`
}

// problem is a pool diagnostic as tools show it; ls gives related
// places their line of context.
func (s *Server) problem(ls lines, d diagnostics.Diagnostic) Problem {
	p := Problem{Line: d.Line, Column: d.Column, EndLine: d.EndLine, EndColumn: d.EndColumn, Severity: d.Severity,
		Code: d.Code, CodeHref: d.CodeHref, Source: d.Source, Message: d.Message}
	for _, r := range d.Related {
		p.Related = append(p.Related, RelatedPlace{Span: s.span(ls, r.Location), Message: r.Message})
	}
	return p
}

// fileReport is one file's diagnostics.
type fileReport struct {
	Path     string
	Server   string
	Problems []Problem
	// Stale says the server did not answer for the file's current
	// content in time: the problems are the last known.
	Stale bool
}

// Counts counts problems by severity.
type Counts struct {
	Error       int
	Warning     int
	Information int
	Hint        int
}

func (c *Counts) add(sev string) {
	switch sev {
	case "error":
		c.Error++
	case "warning":
		c.Warning++
	case "information":
		c.Information++
	default:
		c.Hint++
	}
}

// diagnosticsAnswer is what a diagnostics or check_source answer says,
// before diagnosticsText writes it: the answer is text only (see
// textOnly), since a structured copy of every problem apart took 2.5
// times the text's bytes (547 against 87 for a file of Go's src) for
// the same facts.
type diagnosticsAnswer struct {
	// Files lists the checked files that have problems.
	Files   []fileReport
	Checked int
	Counts  Counts
	// Unavailable says why files could not be checked.
	Unavailable map[string]string
	// Missing says which language servers could not check their files.
	Missing []string
	Note    string
	// cannotLoad are the files (as in Unavailable) of the servers in
	// Missing, which the text names once.
	cannotLoad map[string]bool
}

// maxWorkspaceFiles caps a whole-project check.
const maxWorkspaceFiles = 300

// maxProblemsPerFile caps one file's problems in the output.
const maxProblemsPerFile = 100

func (s *Server) addDiagnostics() {
	addTool(s, &mcp.Tool{
		Name:  "diagnostics",
		Title: "Problems in files",
		Description: "The language servers' errors and warnings for files or directories of the project (or all of it), " +
			"for the files' current content on disk: the call waits for each server's answer for that content. " +
			"Problems are data, not failures: a clean file has none. Lists 50 problems, the most severe first, unless limit " +
			"says more; the counts are always complete and a note says what was left out. The answer is text: each file's path " +
			"and counts, then a line per problem (line:column [code]: message; several places of one problem on one line, " +
			"the severity on each line when the file has several); explain_diagnostic tells what a code means and links its documentation.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.diagnostics)
}

// diagnostics answers in text only (see diagnosticsAnswer).
func (s *Server) diagnostics(ctx context.Context, in DiagnosticsInput) (textOnly, string, error) {
	out, err := s.diagnose(ctx, in)
	if err != nil {
		return textOnly{}, "", err
	}
	return textOnly{}, diagnosticsText(out), nil
}

// diagnose checks the files the input names.
func (s *Server) diagnose(ctx context.Context, in DiagnosticsInput) (diagnosticsAnswer, error) {
	var out diagnosticsAnswer
	if in.Limit < 0 || in.Limit > maxProblems {
		return out, toolErrorf(CodeInvalidInput, "limit %d: give 1 to %d, or leave it out for %d", in.Limit, maxProblems, defaultProblems)
	}
	minRank := severityRank("hint")
	if in.Severity != "" {
		minRank = severityRank(in.Severity)
		if minRank == len(severities) {
			return out, toolErrorf(CodeInvalidInput, "severity %q: use error, warning, information or hint", in.Severity)
		}
	}
	targets := in.Paths
	if len(targets) == 0 {
		targets = []string{"."}
	}
	var files []string
	for _, p := range targets {
		abs, err := s.root.Resolve(p)
		if err != nil {
			return out, err
		}
		found, err := sourceFiles(abs, maxWorkspaceFiles-len(files))
		if err != nil {
			return out, toolErrorf(CodeInvalidInput, "%s: %v", p, err)
		}
		files = append(files, found...)
		if len(files) >= maxWorkspaceFiles {
			out.Note = fmt.Sprintf("only the first %d files were checked: name files or directories to check the rest", maxWorkspaceFiles)
			break
		}
	}
	reports, unavailable := s.check(ctx, files)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.Checked = len(files)
	for path, err := range unavailable {
		if out.Unavailable == nil {
			out.Unavailable, out.cannotLoad = map[string]string{}, map[string]bool{}
		}
		rel := s.root.Rel(path)
		out.Unavailable[rel] = err.Error()
		out.cannotLoad[rel] = errors.Is(err, diagnostics.ErrCannotLoad)
	}
	// A server that cannot load the project would call its files clean:
	// say so, for the whole answer when no file was checked, else as the
	// part that is missing.
	if cannot := cannotLoad(unavailable); len(cannot) > 0 {
		if len(reports) == 0 {
			return out, toolErrorf(CodeServerUnavailable, "%s", strings.Join(cannot, "; "))
		}
		out.Missing = cannot
	}
	if len(files) > 0 && len(unavailable) == len(files) && len(in.Paths) > 0 {
		// Nothing could be checked: that is a failure, not a clean bill.
		for _, err := range unavailable {
			return out, toolErrorf(CodeNoServer, "%s", err)
		}
	}
	var all []fileReport
	total := 0
	for _, r := range reports {
		fp := s.fileProblems(r, minRank)
		for _, p := range fp.Problems {
			out.Counts.add(p.Severity)
		}
		total += len(fp.Problems)
		all = append(all, fp)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultProblems
	}
	listed := capProblems(all, limit)
	for _, fp := range all {
		if len(fp.Problems) > 0 || fp.Stale {
			out.Files = append(out.Files, fp)
		}
	}
	if listed < total {
		note := fmt.Sprintf("%d of %d problems listed, the most severe first (the counts are complete): raise limit (at most %d), ask for severity error or name fewer files for the rest", listed, total, maxProblems)
		if out.Note != "" {
			out.Note += "; "
		}
		out.Note += note
	}
	return out, nil
}

// maxProblems caps the problems one diagnostics answer lists, so that it
// stays well under 25k tokens.
const maxProblems = 200

// defaultProblems is how many problems a diagnostics answer lists unless
// asked: about 5 KB of text.
const defaultProblems = 50

// capProblems keeps at most limit problems across files, dropping the
// least severe first, then the last files' errors; it returns how many
// are kept.
func capProblems(files []fileReport, limit int) int {
	total := 0
	for _, f := range files {
		total += len(f.Problems)
	}
	if total <= limit {
		return total
	}
	// The least severe rank that still fits whole.
	keep := -1
	for rank := range severities {
		n := 0
		for _, f := range files {
			for _, p := range f.Problems {
				if severityRank(p.Severity) <= rank {
					n++
				}
			}
		}
		if n > limit {
			break
		}
		keep = rank
	}
	listed := 0
	for i := range files {
		var ps []Problem
		for _, p := range files[i].Problems {
			if severityRank(p.Severity) <= max(keep, 0) && listed < limit {
				ps = append(ps, p)
				listed++
			}
		}
		files[i].Problems = append([]Problem{}, ps...)
	}
	return listed
}

func (s *Server) fileProblems(r diagnostics.Report, minRank int) fileReport {
	fp := fileReport{Path: s.root.Rel(r.Path), Server: r.Server, Stale: r.Stale, Problems: []Problem{}}
	ls := lines{}
	for _, d := range r.Items {
		if severityRank(d.Severity) > minRank {
			continue
		}
		if len(fp.Problems) == maxProblemsPerFile {
			break
		}
		fp.Problems = append(fp.Problems, s.problem(ls, d))
	}
	return fp
}

// cannotLoad is, once per server and message, why the servers of some of
// the files cannot check them because they cannot load the project,
// each with how many files it left unchecked.
func cannotLoad(unavailable map[string]error) []string {
	count := map[string]int{}
	for _, err := range unavailable {
		var le *diagnostics.LoadError
		if errors.As(err, &le) {
			le.RetryAt = time.Time{} // the same words for each file
			count[le.Error()]++
		}
	}
	var out []string
	for _, msg := range slices.Sorted(maps.Keys(count)) {
		out = append(out, fmt.Sprintf("%s (%d file(s) not checked)", msg, count[msg]))
	}
	return out
}

// check touches every file and gathers their diagnostics, a few at a
// time; files no server can check are returned with the reason.
func (s *Server) check(ctx context.Context, files []string) ([]diagnostics.Report, map[string]error) {
	var (
		mu          sync.Mutex
		reports     []diagnostics.Report
		unavailable = map[string]error{}
		wg          sync.WaitGroup
		sem         = make(chan struct{}, 8)
	)
	for _, f := range files {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			err := s.pool.Touch(ctx, f)
			var r diagnostics.Report
			if err == nil {
				r, err = s.pool.Diagnostics(ctx, f, s.opts.Wait)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unavailable[f] = err
				return
			}
			reports = append(reports, r)
		})
	}
	wg.Wait()
	sort.Slice(reports, func(i, j int) bool { return reports[i].Path < reports[j].Path })
	return reports, unavailable
}

// skipDirs are never walked into.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, "target": true, "dist": true, "build": true, "__pycache__": true, ".venv": true, "venv": true}

// sourceExts are the files a whole-directory check looks at: those the
// built-in language servers handle.
var sourceExts = map[string]bool{".go": true, ".ts": true, ".tsx": true, ".js": true, ".jsx": true, ".mts": true, ".cts": true, ".mjs": true, ".cjs": true, ".py": true, ".pyi": true, ".rs": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".cxx": true}

// sourceFiles is path itself when it is a file, else up to limit source
// files below it.
func sourceFiles(path string, limit int) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	var out []string
	errFull := errors.New("full")
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: skipped
		}
		if d.IsDir() {
			if p != path && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if sourceExts[filepath.Ext(p)] && d.Type().IsRegular() {
			if len(out) >= limit {
				return errFull
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, err
	}
	return out, nil
}

// diagnosticsText writes an answer saying each thing once: a file's
// path over its problems, a severity the file's count line already says
// (all its problems are warnings) not again on each, and the places of
// one problem repeated (the same message, code and severity) on one line.
// A one-file answer with problems starts with that file.
func diagnosticsText(out diagnosticsAnswer) string {
	var b strings.Builder
	if out.Checked != 1 || len(out.Files) != 1 {
		fmt.Fprintf(&b, "%s checked: %s\n", plural(out.Checked, "file"), out.Counts)
	}
	for _, f := range out.Files {
		var c Counts
		for _, p := range f.Problems {
			c.add(p.Severity)
		}
		fmt.Fprintf(&b, "%s: %s\n", f.Path, c)
		one := c.kinds() == 1
		type key struct{ sev, code, msg string }
		type item struct {
			places []string
			rest   string // the label, message and related places
		}
		at := map[key]int{} // a problem's index in items
		var items []item
		for _, p := range f.Problems {
			label := ""
			if !one {
				label = " " + p.Severity
			}
			if code := problemCode(p); code != "" {
				label += " [" + code + "]"
			}
			place := fmt.Sprintf("%d:%d", p.Line, p.Column)
			k := key{p.Severity, p.Code, p.Message}
			if i, ok := at[k]; ok && len(p.Related) == 0 {
				items[i].places = append(items[i].places, place)
				continue
			}
			var rest strings.Builder
			fmt.Fprintf(&rest, "%s: %s", label, p.Message)
			for _, r := range p.Related {
				fmt.Fprintf(&rest, "\n\tsee %s:%d:%d: %s", r.Path, r.Line, r.Column, r.Message)
			}
			if len(p.Related) == 0 {
				at[k] = len(items)
			}
			items = append(items, item{places: []string{place}, rest: rest.String()})
		}
		for _, it := range items {
			b.WriteString(strings.Join(it.places, ", ") + it.rest + "\n")
		}
		if f.Stale {
			fmt.Fprintf(&b, "%s: the language server did not answer in time; these may be out of date\n", f.Path)
		}
	}
	if out.Checked == 1 && len(out.Files) == 0 && len(out.Unavailable) == 0 {
		b.Reset()
		b.WriteString("1 file checked: no problems\n")
	}
	for _, path := range slices.Sorted(maps.Keys(out.Unavailable)) {
		if out.cannotLoad[path] {
			continue // said once below, not once per file
		}
		fmt.Fprintf(&b, "%s: not checked: %s\n", path, out.Unavailable[path])
	}
	if out.Note != "" {
		b.WriteString(out.Note + "\n")
	}
	writeMissing(&b, out.Missing)
	return strings.TrimRight(b.String(), "\n")
}

// problemCode is the code a problem's line shows: the server's, or for
// gopls's analyzers, whose code is "default", the analyzer (its source),
// which explain_diagnostic takes.
func problemCode(p Problem) string {
	if p.Code == "default" {
		return p.Source
	}
	return p.Code
}

// String is the counts as an answer says them: the severities there are,
// or no problems.
func (c Counts) String() string {
	var parts []string
	for _, n := range []struct {
		n    int
		name string
	}{{c.Error, "error"}, {c.Warning, "warning"}, {c.Information, "information"}, {c.Hint, "hint"}} {
		switch {
		case n.n == 0:
		case n.name == "information":
			parts = append(parts, fmt.Sprintf("%d information", n.n))
		default:
			parts = append(parts, plural(n.n, n.name))
		}
	}
	if len(parts) == 0 {
		return "no problems"
	}
	return strings.Join(parts, ", ")
}

// kinds is how many severities have problems.
func (c Counts) kinds() int {
	n := 0
	for _, v := range []int{c.Error, c.Warning, c.Information, c.Hint} {
		if v > 0 {
			n++
		}
	}
	return n
}
