package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// darman.prompt's references reach the model: a file (the editor's unsaved
// buffer when it is open), some lines of one, a folder's entries and text
// the editor holds, after the typed text.
func TestPromptReferencesReachTheModel(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Seen."}}},
		optIns: map[string]bool{"sessionUpdates": true},
		files: map[string]string{
			"main.go":         "package main\n\nfunc main() {}\n",
			"util/strings.go": "package util\n\n// Reverse reverses s.\nfunc Reverse(s string) string {\n\treturn s\n}\n",
			"util/doc.go":     "package util\n",
		},
	})
	// main.go is open with unsaved changes: its buffer is what is attached.
	e.open("main.go", "package main\n\nfunc main() { println(\"from the buffer\") }\n")
	e.client.mustCommand("darman.prompt", map[string]any{
		"prompt": "look at these",
		"references": []map[string]any{
			{"uri": e.uri("main.go")},
			{"uri": e.uri("util/strings.go"), "range": map[string]any{"start": map[string]int{"line": 2, "character": 0}, "end": map[string]int{"line": 4, "character": 0}}},
			{"kind": "folder", "uri": e.uri("util")},
			{"kind": "text", "label": "Problems", "text": "main.go:3:1: error: undefined: greeting"},
		},
	}, nil)
	e.client.Await(0, "the end", isState("idle"))
	calls := e.model.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	body := string(calls[0].Body)
	for _, want := range []string{
		`look at these`,
		`main.go:\n` + "```" + `\npackage main\n\nfunc main() { println(\"from the buffer\") }`,
		`util/strings.go lines 3-4:\n` + "```" + `\n3\t// Reverse reverses s.\n4\tfunc Reverse(s string) string {\n` + "```",
		`the folder util:\n` + "```" + `\ndoc.go\nstrings.go\n`,
		`Problems:\n` + "```" + `\nmain.go:3:1: error: undefined: greeting`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the model's request lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `return s`) {
		t.Errorf("lines outside the range were sent")
	}
}

// A reference outside the workspace, a secret, a missing file or a bad
// kind is refused with the reason, and no turn runs: nothing reaches the
// model.
func TestPromptReferencesRefused(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}},
		files: map[string]string{
			".env": "API_KEY=sk-live-0123456789abcdef\n", "ok.go": "package ok\n",
			"deploy/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA-in-tree\n",
		},
	})
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("private notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.root, "notes-link.txt")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// A home's SSH key, outside the workspace, and the same notes named
	// by a path that climbs out of it.
	key := filepath.Join(t.TempDir(), ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA-home\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(e.root, "env-link.txt")); err != nil {
		t.Fatal(err)
	}
	up, err := filepath.Rel(e.root, outside)
	if err != nil || !strings.HasPrefix(up, "..") {
		t.Fatalf("no path from %s up to %s: %v", e.root, outside, err)
	}
	for _, c := range []struct {
		ref  map[string]any
		want string
	}{
		{map[string]any{"uri": fileURI(outside)}, "outside the workspace"},
		{map[string]any{"uri": e.uri("notes-link.txt")}, "outside the workspace"},
		{map[string]any{"uri": e.uri(".env")}, "looks like a secret"},
		{map[string]any{"uri": fileURI(key)}, key + " is outside the workspace"},
		{map[string]any{"kind": "folder", "uri": fileURI(filepath.Dir(key))}, filepath.Dir(key) + " is outside the workspace"},
		{map[string]any{"uri": "file://" + e.root + "/" + filepath.ToSlash(up)}, outside + " is outside the workspace"},
		{map[string]any{"uri": e.uri("deploy/id_ed25519")}, "deploy/id_ed25519 looks like a secret"},
		{map[string]any{"uri": e.uri("env-link.txt")}, "env-link.txt leads to .env looks like a secret"},
		{map[string]any{"uri": e.uri("gone.go")}, "gone.go"},
		{map[string]any{"kind": "folder", "uri": e.uri("ok.go")}, "is a file, not a folder"},
		{map[string]any{"kind": "terminal", "uri": e.uri("ok.go")}, `unknown kind "terminal"`},
		{map[string]any{"kind": "text", "text": "x"}, "needs a label"},
		{map[string]any{"uri": e.uri("ok.go"), "range": map[string]any{"start": map[string]int{"line": 40}, "end": map[string]int{"line": 41, "character": 3}}}, "ok.go has 1 line; lines 41-42 are not in it"},
	} {
		err := e.client.command("darman.prompt", map[string]any{"prompt": "look", "references": []any{c.ref}}, nil)
		if err == nil || !strings.Contains(err.Error(), "references: reference 1") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.ref, err, c.want)
		}
	}
	for _, call := range e.model.ModelCalls() {
		if strings.Contains(string(call.Body), "sk-live") || strings.Contains(string(call.Body), "private notes") || strings.Contains(string(call.Body), "PRIVATE KEY") {
			t.Fatalf("a refused reference reached the model: %s", call.Body)
		}
	}
	if n := len(e.model.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}

// A selection that ends at column 0 of a line (a whole-line selection, as
// VS Code makes it) holds the lines above that line: darman.prompt's
// context names and sends those lines, as the panel's chip does, not the
// line the cursor sits at the start of.
func TestPromptContextSelectionEndingAtColumnZero(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Seen."}, {Text: "Seen."}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.open("main.go", "package main\n\nfunc a() {}\nfunc b() {}\nfunc c() {}\n")
	rng := func(l0, c0, l1, c1 int) map[string]any {
		return map[string]any{"start": map[string]int{"line": l0, "character": c0}, "end": map[string]int{"line": l1, "character": c1}}
	}
	for i, c := range []struct {
		rng  map[string]any
		want string
	}{
		{rng(2, 0, 4, 0), "The user selected main.go lines 3-4:\n```go\n3\tfunc a() {}\n4\tfunc b() {}\n```"},
		{rng(2, 0, 4, 1), "The user selected main.go lines 3-5:\n```go\n3\tfunc a() {}\n4\tfunc b() {}\n5\tf\n```"},
	} {
		from := e.client.Count()
		e.client.mustCommand("darman.prompt", map[string]any{"prompt": "look", "context": map[string]any{"uri": e.uri("main.go"), "range": c.rng}}, nil)
		e.client.Await(from, "the end", isState("idle"))
		calls := e.model.ModelCalls()
		if len(calls) != i+1 {
			t.Fatalf("%d model calls, want %d", len(calls), i+1)
		}
		quoted, _ := json.Marshal(c.want)
		body := string(calls[i].Body)
		if !strings.Contains(body, strings.Trim(string(quoted), `"`)) {
			at := strings.Index(body, "The user selected")
			t.Errorf("selection %v: the model's request lacks %q; it has: %.120s", c.rng, c.want, body[max(at, 0):])
		}
	}
}
