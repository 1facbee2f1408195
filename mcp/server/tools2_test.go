package server

import (
	"path/filepath"
	"strings"
	"testing"
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
		t.Logf("list_imports did not resolve the import to a/a.go: %+v", imps.Imports[0])
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
	for _, p := range diags.Files[0].Problems {
		if p.Line == 6 {
			redecl = p
		}
	}
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

	var cs2 CheckSourceOutput
	text, isErr = call(t, cs, "check_source", map[string]any{"path": "a/dup2.go", "source": "package a\n\nfunc Once() {}\n\nfunc Once() {}\n"}, &cs2)
	if isErr || len(cs2.Problems) == 0 || cs2.Problems[len(cs2.Problems)-1].CodeHref == "" {
		t.Fatalf("check_source of a redeclaration = %+v, %q", cs2, text)
	}
}
