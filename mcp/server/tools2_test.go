package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	var diags DiagnosticsOutput
	if text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/bad.go"}}, &diags); isErr || diags.Counts.Error != 1 {
		t.Fatalf("diagnostics = %+v, %q", diags, text)
	}
	code := diags.Files[0].Problems[0].Code
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

	var diags DiagnosticsOutput
	text, isErr := call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/dup.go"}}, &diags)
	if isErr || diags.Counts.Error == 0 {
		t.Fatalf("diagnostics = %+v, %q", diags, text)
	}
	var redecl Problem
	links := map[string]string{} // a code's link comes once, with its first problem
	for _, p := range diags.Files[0].Problems {
		if p.CodeHref != "" {
			if links[p.Code] != "" {
				t.Errorf("the link of %s is sent twice:\n%+v", p.Code, diags.Files[0].Problems)
			}
			links[p.Code] = p.CodeHref
		}
		if p.Line == 6 {
			redecl = p
		}
	}
	redecl.CodeHref = links[redecl.Code]
	if redecl.Code == "" || redecl.CodeHref == "" || len(redecl.Related) == 0 {
		t.Fatalf("the redeclaration = %+v; want a code, gopls's link and the other declaration\n%s", redecl, text)
	}
	if r := redecl.Related[0]; r.Path != "a/dup.go" || r.Line != 4 || r.Context != "func Twice() {}" {
		t.Errorf("related place = %+v; want a/dup.go:4 with its line", r)
	}
	if !strings.Contains(text, "\tsee a/dup.go:4:6: ") {
		t.Errorf("diagnostics text does not show the other declaration:\n%s", text)
	}

	var ex ExplainDiagnosticOutput
	text, isErr = call(t, cs, "explain_diagnostic", map[string]any{"code": redecl.Code, "path": "a/dup.go"}, &ex)
	if isErr || !ex.Known || ex.Link != redecl.CodeHref || len(ex.Occurrences) == 0 || len(ex.Occurrences[0].Related) == 0 {
		t.Fatalf("explain_diagnostic(%q) = %+v, %q", redecl.Code, ex, text)
	}
	if !strings.Contains(text, "documented at "+redecl.CodeHref) || !strings.Contains(text, "\tsee a/dup.go:4:6: ") {
		t.Errorf("explain_diagnostic text =\n%s", text)
	}

	// Problems of one kind share a code and its link: the link comes once.
	writeFile(t, filepath.Join(root, "a", "ws.go"), "package a\n\nfunc Unused() {\n\tx := 1\n\ty := 2\n}\n")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{"paths": []string{"a/ws.go"}}})
	if err != nil || res.IsError {
		t.Fatalf("diagnostics of a/ws.go = %v, %v", toolText(res), err)
	}
	wire, _ := json.Marshal(res)
	var ws DiagnosticsOutput
	sc, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(sc, &ws)
	if len(ws.Files) != 1 || len(ws.Files[0].Problems) != 2 {
		t.Fatalf("diagnostics of two unused variables = %s", wire)
	}
	first, second := ws.Files[0].Problems[0], ws.Files[0].Problems[1]
	if first.CodeHref == "" || second.CodeHref != "" || first.Code != second.Code || first.Source != second.Source ||
		strings.Count(string(wire), first.CodeHref) != 1 || strings.Count(toolText(res), "declared and not used") != 2 {
		t.Errorf("the shared link is not sent once, with the first problem:\n%s", wire)
	}

	var cs2 CheckSourceOutput
	text, isErr = call(t, cs, "check_source", map[string]any{"path": "a/dup2.go", "source": "package a\n\nfunc Once() {}\n\nfunc Once() {}\n"}, &cs2)
	if isErr || len(cs2.Problems) == 0 || cs2.Problems[len(cs2.Problems)-1].CodeHref == "" {
		t.Fatalf("check_source of a redeclaration = %+v, %q", cs2, text)
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
		var out DiagnosticsOutput
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, f := range out.Files {
			listed += len(f.Problems)
		}
		if out.Counts.Error <= maxProblems || listed != c.listed || !strings.Contains(out.Note, fmt.Sprintf("%d of %d problems listed", c.listed, out.Counts.Error)) || !strings.Contains(out.Note, "raise limit") {
			t.Fatalf("limit %d: counts %+v, %d listed, note %q", c.limit, out.Counts, listed, out.Note)
		}
		if size := len(data) + len(toolText(res)); size > maxResult {
			t.Errorf("the result takes %d bytes; the budget is %d", size, maxResult)
		}
	}
}

func TestCapProblemsKeepsTheMostSevere(t *testing.T) {
	p := func(sev string) Problem { return Problem{Severity: sev} }
	files := []FileProblems{
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
	files = []FileProblems{{Path: "a", Problems: []Problem{p("error"), p("error"), p("error")}}}
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
// each line only when the file has problems of more than one; the
// structured copy keeps every problem apart.
func TestDiagnosticsTextSaysEachThingOnce(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)
	writeFile(t, filepath.Join(root, "a", "w.go"), "package a\n\nfunc F() int { return \"x\" }\n\nfunc G() int { return \"x\" }\n\nfunc H() int { return undefinedThing }\n")

	var out DiagnosticsOutput
	text, isErr := call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/w.go"}}, &out)
	want := "a/w.go: 3 errors\n" +
		"3:23, 5:23 [IncompatibleAssign]: cannot use \"x\" (untyped string constant) as int value in return statement\n" +
		"7:23 [UndeclaredName]: undefined: undefinedThing"
	if isErr || text != want || len(out.Files) != 1 || len(out.Files[0].Problems) != 3 {
		t.Errorf("diagnostics of a/w.go = %q, %+v\nwant %q", text, out, want)
	}
	out = DiagnosticsOutput{}
	text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/w.go", "b/b.go"}}, &out)
	if want := "2 files checked: 3 errors\n" + want; isErr || text != want || out.Counts != (Counts{Error: 3}) {
		t.Errorf("diagnostics of two files = %q, %+v\nwant %q", text, out.Counts, want)
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
	out := DiagnosticsOutput{Checked: 1, Counts: Counts{Error: 1, Warning: 2}, Files: []FileProblems{{Path: "a/w.go", Problems: []Problem{
		{Line: 10, Column: 23, Severity: "error", Code: "UndeclaredName", Message: "undefined: x",
			Related: []RelatedPlace{{Span: Span{Path: "a/v.go", Line: 3, Column: 1}, Message: "declared here"}}},
		warn, func() Problem { w := warn; w.Line = 7; return w }(),
	}}}}
	want := "a/w.go: 1 error, 2 warnings\n" +
		"10:23 error [UndeclaredName]: undefined: x\n\tsee a/v.go:3:1: declared here\n" +
		"6:2, 7:2 warning: bad format"
	if text := diagnosticsText(out); text != want {
		t.Errorf("diagnosticsText = %q\nwant %q", text, want)
	}
}
