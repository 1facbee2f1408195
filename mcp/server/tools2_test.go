package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListImportsAndExplainAgainstGopls(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)

	var imps ListImportsOutput
	text, isErr := call(t, cs, "list_imports", map[string]any{"path": "b/b.go"}, &imps)
	if isErr || len(imps.Imports) != 1 || imps.Imports[0].Module != "example.com/m/a" || imps.Imports[0].Line != 3 {
		t.Fatalf("list_imports = %+v, %q", imps, text)
	}
	if len(imps.Imports[0].Files) == 0 || imps.Imports[0].Files[0] != "a/a.go" {
		t.Errorf("list_imports did not resolve the import to a/a.go: %+v", imps.Imports[0])
	}

	writeFile(t, filepath.Join(root, "a", "bad.go"), "package a\n\nfunc Bad() int {\n\treturn undefinedThing\n}\n")
	text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/bad.go"}}, nil)
	if want := "a/bad.go: 1 error\n4:9 [UndeclaredName]: undefined: undefinedThing"; isErr || text != want {
		t.Fatalf("diagnostics = %q; want %q", text, want)
	}
	code := "UndeclaredName"
	var ex ExplainDiagnosticOutput
	text, isErr = call(t, cs, "explain_diagnostic", map[string]any{"code": code, "path": "a/bad.go"}, &ex)
	if isErr || !ex.Known || len(ex.Occurrences) != 1 || !strings.Contains(ex.Occurrences[0].Message, "undefinedThing") {
		t.Fatalf("explain_diagnostic(%q) = %+v, %q", code, ex, text)
	}
	if text, isErr = call(t, cs, "explain_diagnostic", map[string]any{"code": "zz-unknown"}, &ex); isErr || ex.Known {
		t.Fatalf("explain_diagnostic of an unknown code = %+v, %q", ex, text)
	}
}

// TestExplainDiagnosticFromTheServer: gopls's own link to the code's
// documentation (codeDescription) and the other place a redeclaration
// refers to (relatedInformation) reach explain_diagnostic, diagnostics
// and check_source.
func TestExplainDiagnosticFromTheServer(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)
	dup := "package a\n\n// Twice is declared twice.\nfunc Twice() {}\n\nfunc Twice() {}\n"
	writeFile(t, filepath.Join(root, "a", "dup.go"), dup)

	text, isErr := call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/dup.go"}}, nil)
	// The redeclaration's line, with its code and the other declaration.
	const redecl = "6:6 [DuplicateDecl]: Twice redeclared in this block\n\tsee a/dup.go:4:6: other declaration of Twice"
	if isErr || !strings.HasPrefix(text, "a/dup.go: ") || !strings.Contains(text, redecl) {
		t.Fatalf("diagnostics = %q; want the redeclaration %q", text, redecl)
	}
	var ex ExplainDiagnosticOutput
	text, isErr = call(t, cs, "explain_diagnostic", map[string]any{"code": "DuplicateDecl", "path": "a/dup.go"}, &ex)
	i := slices.IndexFunc(ex.Occurrences, func(o Occurrence) bool { return o.Line == 6 })
	if isErr || !ex.Known || i < 0 || ex.Link != ex.Occurrences[i].CodeHref || !strings.HasPrefix(ex.Link, "https://") ||
		len(ex.Occurrences[i].Related) == 0 {
		t.Fatalf("explain_diagnostic(DuplicateDecl) = %+v, %q; want gopls's link and the line 6 redeclaration", ex, text)
	}
	if r := ex.Occurrences[i].Related[0]; r.Path != "a/dup.go" || r.Line != 4 || r.Context != "func Twice() {}" {
		t.Errorf("related place = %+v; want a/dup.go:4 with its line", r)
	}
	if !strings.Contains(text, "documented at "+ex.Link) || !strings.Contains(text, "\tsee a/dup.go:4:6: ") {
		t.Errorf("explain_diagnostic text =\n%s", text)
	}

	text, isErr = call(t, cs, "check_source", map[string]any{"path": "a/dup2.go", "source": "package a\n\nfunc Once() {}\n\nfunc Once() {}\n"}, nil)
	if isErr || !strings.Contains(text, "5:6 [DuplicateDecl]: Once redeclared in this block\n\tsee a/dup2.go:3:6: other declaration of Once") {
		t.Fatalf("check_source of a redeclaration = %q", text)
	}
}

// TestResultsStayWithinBudget: a project with more problems than one
// answer lists gets the errors first, complete counts and a note, and a
// result of at most about 25k tokens.
func TestResultsStayWithinBudget(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)
	// 30 files of 10 unused variables (errors) each: 300 errors.
	for f := range 30 {
		var src strings.Builder
		fmt.Fprintf(&src, "package c\n\nfunc F%d() {\n", f)
		for v := range 10 {
			fmt.Fprintf(&src, "\tunused%d := %d\n", v, v)
		}
		src.WriteString("}\n")
		writeFile(t, filepath.Join(root, "c", fmt.Sprintf("f%d.go", f)), src.String())
	}
	// (gopls may stop short of 300 in one package: what matters is more
	// than the cap.) The default lists fewer, and says how to get more.
	for _, c := range []struct{ limit, listed int }{{maxProblems, maxProblems}, {0, defaultProblems}} {
		args := map[string]any{"paths": []string{"c"}}
		if c.limit > 0 {
			args["limit"] = c.limit
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "diagnostics", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("diagnostics = %v, %v", res, err)
		}
		text := toolText(res)
		var checked, errs int
		fmt.Sscanf(text, "%d files checked: %d errors", &checked, &errs)
		listed := 0
		for _, line := range strings.Split(text, "\n") {
			if line != "" && line[0] >= '0' && line[0] <= '9' && strings.Contains(line, ": declared and not used") {
				listed += strings.Count(line, ", ") + 1 // places of one problem share a line
			}
		}
		if errs <= maxProblems || listed != c.listed || !strings.Contains(text, fmt.Sprintf("%d of %d problems listed", c.listed, errs)) || !strings.Contains(text, "raise limit") {
			t.Fatalf("limit %d: %d errors, %d listed, text:\n%s", c.limit, errs, listed, text)
		}
		if res.StructuredContent != nil || len(text) > maxResult {
			t.Errorf("the result takes %d bytes of text and a structured copy %v; the budget is %d of text alone", len(text), res.StructuredContent != nil, maxResult)
		}
	}
}

func TestCapProblemsKeepsTheMostSevere(t *testing.T) {
	p := func(sev string) Problem { return Problem{Severity: sev} }
	files := []fileReport{
		{Path: "a", Problems: []Problem{p("hint"), p("warning"), p("error")}},
		{Path: "b", Problems: []Problem{p("warning"), p("error"), p("information")}},
	}
	if n := capProblems(files, 4); n != 4 {
		t.Fatalf("kept %d; want 4", n)
	}
	for _, f := range files {
		for _, pr := range f.Problems {
			if pr.Severity != "error" && pr.Severity != "warning" {
				t.Errorf("%s kept a %s over a more severe problem", f.Path, pr.Severity)
			}
		}
	}
	files = []fileReport{{Path: "a", Problems: []Problem{p("error"), p("error"), p("error")}}}
	if n := capProblems(files, 2); n != 2 || len(files[0].Problems) != 2 {
		t.Fatalf("errors alone over the cap: kept %d (%v)", n, files[0].Problems)
	}
}

func TestCapResultCutsTheTextAtALine(t *testing.T) {
	text := strings.Repeat("0123456789\n", 10_000) // 110 kB
	got := capResult(text, 50_000)
	if len(got) > maxResult-50_000+200 || !strings.HasSuffix(got, "narrow the query for a shorter one)") || !strings.HasSuffix(strings.SplitN(got, "\n...", 2)[0], "0123456789") {
		t.Fatalf("capResult left %d bytes ending %q", len(got), got[len(got)-120:])
	}
	if got := capResult(text, 200_000); len(got) > minText+200 {
		t.Errorf("with a structured content over the budget the text keeps %d bytes; want about %d", len(got), minText)
	}
	if got := capResult("short", 99_000); got != "short" {
		t.Errorf("a short text was cut: %q", got)
	}
}

// TestLargeRenameIsCappedButAppliedWhole: a rename of 600 uses in 60
// files lists what fits in a result, says so, and apply writes all.
func TestLargeRenameIsCappedButAppliedWhole(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)
	for f := range 60 {
		var src strings.Builder
		fmt.Fprintf(&src, "package u\n\nimport \"example.com/m/a\"\n\nfunc U%d() {\n", f)
		for range 10 {
			src.WriteString("\t_ = a.Greet(\"x\")\n")
		}
		src.WriteString("}\n")
		writeFile(t, filepath.Join(root, "u", fmt.Sprintf("u%d.go", f)), src.String())
	}
	var out RenameSymbolOutput
	text, isErr := call(t, cs, "rename_symbol", map[string]any{"symbol": "a.Greet", "new_name": "Hello"}, &out)
	if isErr || out.Files != 62 || out.Edits != 603 || !strings.Contains(out.Note, "400 of 603 edits listed") {
		t.Fatalf("rename = files %d, edits %d, note %q; %.300s", out.Files, out.Edits, out.Note, text)
	}
	listed := 0
	for _, c := range out.Changes {
		listed += len(c.Edits)
	}
	if listed != maxRenameEdits || len(out.Diff) > maxRenameDiff || out.Diff == "" {
		t.Errorf("%d edits listed, a diff of %d bytes", listed, len(out.Diff))
	}
	text, isErr = call(t, cs, "rename_symbol", map[string]any{"symbol": "a.Greet", "new_name": "Hello", "apply": true}, &out)
	if isErr || !out.Applied {
		t.Fatalf("rename apply = %.300s", text)
	}
	for f := range 60 {
		data, _ := os.ReadFile(filepath.Join(root, "u", fmt.Sprintf("u%d.go", f)))
		if strings.Count(string(data), "a.Hello(") != 10 {
			t.Fatalf("u%d.go after apply:\n%s", f, data)
		}
	}
}

// TestDiagnosticsTextSaysEachThingOnce: a file's path over its problems,
// one problem repeated at several places on one line, the severity on
// each line only when the file has problems of more than one; no
// structured copy.
func TestDiagnosticsTextSaysEachThingOnce(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)
	writeFile(t, filepath.Join(root, "a", "w.go"), "package a\n\nfunc F() int { return \"x\" }\n\nfunc G() int { return \"x\" }\n\nfunc H() int { return undefinedThing }\n")

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{"paths": []string{"a/w.go"}}})
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := toolText(res), res.IsError
	want := "a/w.go: 3 errors\n" +
		"3:23, 5:23 [IncompatibleAssign]: cannot use \"x\" (untyped string constant) as int value in return statement\n" +
		"7:23 [UndeclaredName]: undefined: undefinedThing"
	if isErr || text != want || res.StructuredContent != nil {
		t.Errorf("diagnostics of a/w.go = %q (structured %v)\nwant %q alone", text, res.StructuredContent, want)
	}
	text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/w.go", "b/b.go"}}, nil)
	if want := "2 files checked: 3 errors\n" + want; isErr || text != want {
		t.Errorf("diagnostics of two files = %q\nwant %q", text, want)
	}
	if text, _ := call(t, cs, "diagnostics", map[string]any{"paths": []string{"b/b.go"}}, nil); text != "1 file checked: no problems" {
		t.Errorf("diagnostics of a clean file = %q", text)
	}
}

// TestDiagnosticsTextNamesMixedSeverities: when a file's problems are of
// several severities each line says its own, and a problem with related
// places keeps its own line.
func TestDiagnosticsTextNamesMixedSeverities(t *testing.T) {
	warn := Problem{Line: 6, Column: 2, Severity: "warning", Code: "default", Source: "printf", Message: "bad format"}
	out := diagnosticsAnswer{Checked: 1, Counts: Counts{Error: 1, Warning: 2}, Files: []fileReport{{Path: "a/w.go", Problems: []Problem{
		{Line: 10, Column: 23, Severity: "error", Code: "UndeclaredName", Message: "undefined: x",
			Related: []RelatedPlace{{Span: Span{Path: "a/v.go", Line: 3, Column: 1}, Message: "declared here"}}},
		warn, func() Problem { w := warn; w.Line = 7; return w }(),
	}}}}
	want := "a/w.go: 1 error, 2 warnings\n" +
		"10:23 error [UndeclaredName]: undefined: x\n\tsee a/v.go:3:1: declared here\n" +
		"6:2, 7:2 warning [printf]: bad format"
	if text := diagnosticsText(out); text != want {
		t.Errorf("diagnosticsText = %q\nwant %q", text, want)
	}
}
