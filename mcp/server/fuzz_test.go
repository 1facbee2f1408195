package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzResolve checks that no path escapes the root and none panics.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/x.go", "../x", `..\..\x`, "/etc/passwd", "C:\\x", "out/../../x", "./././a", "a/\x00", "", "in/../.."} {
		f.Add(s)
	}
	base, _ := filepath.EvalSymlinks(f.TempDir())
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "a"), 0o755)
	os.Symlink(base, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "in"))
	r := Root{Dir: root, Source: RootFromFlag}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Resolve(p)
		if err != nil {
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("Resolve(%q) failed without a code: %v", p, err)
			}
			return
		}
		if !within(root, got) {
			t.Fatalf("Resolve(%q) = %q, outside %s", p, got, root)
		}
	})
}

// decodes is decodeArguments with In's real schema, for the fuzzer.
func decodes[In any](t *testing.T, args string) {
	t.Helper()
	if _, err := decodeArguments[In](schemaOf[In](t), json.RawMessage(args)); err != nil {
		var te *ToolError
		if !errors.As(err, &te) || te.Code != CodeInvalidInput {
			t.Fatalf("decoding %T from %q failed without MCP-INVALID-INPUT: %v", *new(In), args, err)
		}
	}
}

// FuzzToolArguments decodes arbitrary arguments as every tool does
// (schema, then Go type: a refusal is MCP-INVALID-INPUT, never a panic)
// and runs the validation each tool does before reaching a language
// server.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{"query":"Foo","limit":3}`, `{"path":"../x","source":"\xff"}`, `{"symbol":"","new_name":"1x"}`, `{"paths":["a",".."],"severity":"loud"}`, `{"code":""}`, `null`, `[]`, `{"limit":1e400}`, `{"apply":"yes"}`, `{"Query":"x"}`, `"x"`, ``} {
		f.Add(s)
	}
	root, _ := filepath.EvalSymlinks(f.TempDir())
	s := &Server{root: Root{Dir: root}, overlay: newOverlay()}
	f.Fuzz(func(t *testing.T, args string) {
		decodes[DiagnosticsInput](t, args)
		decodes[CheckSourceInput](t, args)
		decodes[LookupSymbolInput](t, args)
		decodes[FindReferencesInput](t, args)
		decodes[RenameSymbolInput](t, args)
		decodes[FormatSourceInput](t, args)
		decodes[ExplainDiagnosticInput](t, args)
		decodes[OutlineInput](t, args)

		var rn RenameSymbolInput
		if json.Unmarshal([]byte(args), &rn) == nil && !identifier.MatchString(rn.NewName) {
			if _, _, err := s.renameSymbol(context.Background(), rn); err == nil || !strings.HasPrefix(err.Error(), "MCP-") {
				t.Fatalf("rename_symbol(%s) = %v", args, err)
			}
		}
		var cs CheckSourceInput
		if json.Unmarshal([]byte(args), &cs) == nil {
			if _, err := s.root.Resolve(cs.Path); err != nil {
				if _, _, err := s.checkSource(context.Background(), cs); err == nil || !strings.HasPrefix(err.Error(), "MCP-") {
					t.Fatalf("check_source(%s) = %v", args, err)
				}
			}
		}
		var ls LookupSymbolInput
		if json.Unmarshal([]byte(args), &ls) == nil && (strings.TrimSpace(ls.Query) == "" || ls.Limit < 0 || ls.Limit > 200) {
			if _, _, err := s.lookupSymbol(context.Background(), ls); err == nil || !strings.HasPrefix(err.Error(), "MCP-INVALID-INPUT") {
				t.Fatalf("lookup_symbol(%s) = %v", args, err)
			}
		}
		var li ListImportsInput
		if json.Unmarshal([]byte(args), &li) == nil {
			parseImports(filepath.Join(root, "x.ts"), li.Path)
			parseImports(filepath.Join(root, "x.py"), li.Path)
			parseImports(filepath.Join(root, "x.go"), li.Path)
		}
	})
}

func TestParseImports(t *testing.T) {
	ts := "import { a } from './a';\nimport * as b from \"lib/b\";\nconst c = require('c');\nexport { d } from './d';\n"
	got, err := parseImports("x.ts", ts)
	var mods []string
	for _, g := range got {
		mods = append(mods, g.Module)
	}
	if err != nil || strings.Join(mods, ",") != "./a,lib/b,c,./d" || got[1].Line != 2 || got[1].pos.Column != 21 {
		t.Fatalf("TypeScript imports = %+v, %v", got, err)
	}
	py := "import os, sys\nfrom .pkg import thing\n"
	got, err = parseImports("x.py", py)
	mods = nil
	for _, g := range got {
		mods = append(mods, g.Module)
	}
	if err != nil || strings.Join(mods, ",") != "os,sys,.pkg" {
		t.Fatalf("Python imports = %+v, %v", got, err)
	}
	if _, err := parseImports("x.txt", ""); err == nil || !strings.HasPrefix(err.Error(), "MCP-INVALID-INPUT") {
		t.Fatalf("imports of a text file = %v", err)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	b := strings.Replace(strings.Replace(a, "two", "TWO", 1), "nine", "NINE", 1)
	want := "--- a/f\n+++ b/f\n@@ -1,10 +1,10 @@\n one\n-two\n+TWO\n three\n four\n five\n six\n seven\n eight\n-nine\n+NINE\n ten\n"
	if got := unifiedDiff("f", a, b); got != want {
		t.Fatalf("diff =\n%s\nwant\n%s", got, want)
	}
	long := strings.Repeat("x\n", 20)
	got := unifiedDiff("f", "a\n"+long+"b\n", "A\n"+long+"B\n")
	if strings.Count(got, "@@ ") != 2 || !strings.Contains(got, "@@ -1,4 +1,4 @@") || !strings.Contains(got, "@@ -19,4 +19,4 @@") {
		t.Fatalf("two hunks expected:\n%s", got)
	}
	if got := unifiedDiff("f", "a", "b"); got != "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n" {
		t.Fatalf("no final newline:\n%s", got)
	}
}

func TestDecodeArguments(t *testing.T) {
	resolved := schemaOf[LookupSymbolInput](t)
	in, err := decodeArguments[LookupSymbolInput](resolved, json.RawMessage(`{"query":"Foo","kinds":["function"],"limit":3}`))
	if err != nil || in.Query != "Foo" || in.Limit != 3 || len(in.Kinds) != 1 {
		t.Fatalf("good arguments = %+v, %v", in, err)
	}
	for args, want := range map[string]string{
		`{"query":3}`:                 "validating the arguments",
		`{"query":"x","extra":1}`:     "validating the arguments",
		`{"Query":"x"}`:               "validating the arguments",
		`[]`:                          "not a JSON object",
		`{"query":"x","limit":1.5}`:   "validating the arguments",
		`{"query":"x","limit":1e400}`: "",
	} {
		_, err := decodeArguments[LookupSymbolInput](resolved, json.RawMessage(args))
		if err == nil || !strings.HasPrefix(err.Error(), "MCP-INVALID-INPUT: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("decoding %s = %v; want MCP-INVALID-INPUT with %q", args, err, want)
		}
	}
	// No arguments at all are an empty object: the schema decides.
	if _, err := decodeArguments[DiagnosticsInput](schemaOf[DiagnosticsInput](t), nil); err != nil {
		t.Errorf("no arguments for diagnostics: %v", err)
	}
	if _, err := decodeArguments[LookupSymbolInput](resolved, nil); err == nil || !strings.Contains(err.Error(), "query") {
		t.Errorf("no arguments for lookup_symbol (query is required) = %v", err)
	}
}

// schemaOf is In's input schema, resolved.
func schemaOf[In any](t *testing.T) *jsonschema.Resolved {
	t.Helper()
	r, err := inputSchema[In]().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
