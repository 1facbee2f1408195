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
