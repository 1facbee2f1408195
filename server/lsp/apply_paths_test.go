package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An apply to a link inside the workspace that leads to a secret (notes.txt
// -> .env) is that secret: refused before anything is asked, as an
// attachment of it is, and the secret keeps its content, even with edits
// allowed by the rules.
func TestApplyThroughALinkToASecretIsRefused(t *testing.T) {
	e, a, tr := startApply(t, editRules(), "allow_once", map[string]string{".env": "TOKEN=1\n", "keys/id_ed25519": "PRIVATE\n"})
	if err := os.Symlink(".env", filepath.Join(e.root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("keys", filepath.Join(e.root, "docs")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"notes.txt", "docs/id_ed25519"} {
		err := e.client.command("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri(rel), "text": "TOKEN=stolen\n"}, nil)
		if err == nil || !strings.Contains(err.Error(), "secret") {
			t.Errorf("apply to %s: %v, want an error saying it leads to a secret", rel, err)
		}
	}
	if got := e.read(".env"); got != "TOKEN=1\n" {
		t.Errorf(".env = %q after an apply through a link to it", got)
	}
	if got := e.read("keys/id_ed25519"); got != "PRIVATE\n" {
		t.Errorf("keys/id_ed25519 = %q after an apply through a linked directory", got)
	}
	if n := len(a.questions()); n != 0 {
		t.Errorf("%d questions asked for refused applies", n)
	}
}

// An apply to a protected path reached through a link (hooks -> .git/hooks)
// or a path with .. in it is asked as the protected path it is, edits
// allowed or not; rejected, nothing is written.
func TestApplyToAProtectedPathThroughALinkIsAsked(t *testing.T) {
	e, a, tr := startApply(t, editRules(), "reject_once", map[string]string{".git/hooks/README": "hooks\n", "src/a.go": "package a\n"})
	if err := os.Symlink(".git/hooks", filepath.Join(e.root, "hooks")); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{e.uri("hooks/pre-commit"), "file://" + e.root + "/src/../.git/hooks/post-checkout", "file://" + e.root + "/src/%2e%2e/.vscode/tasks.json"} {
		var res applyAnswer
		err := e.client.command("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": uri, "text": "#!/bin/sh\ntouch pwned\n"}, &res)
		if err == nil && (res.Applied || !res.Denied) {
			t.Errorf("apply to %s answered %+v", uri, res)
		}
	}
	for _, rel := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", ".vscode/tasks.json"} {
		if _, err := os.Lstat(filepath.Join(e.root, rel)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a rejected apply (%v)", rel, err)
		}
	}
	for _, q := range a.questions() {
		if !strings.Contains(string(q), `"protected_path"`) {
			t.Errorf("the question is not the protected path's: %s", q)
		}
	}
}

// Bad arguments are errors that say what is wrong; nothing is written.
func TestApplyBadArguments(t *testing.T) {
	e, a, tr := startApply(t, editRules(), "allow_once", map[string]string{"main.go": "package main\n"})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"uri": e.uri("main.go"), "text": "x"}, "sessionId"},
		{map[string]any{"sessionId": tr.SessionID, "text": "x"}, "uri"},
		{map[string]any{"sessionId": tr.SessionID, "uri": "untitled:Untitled-1", "text": "x"}, "file"},
		{map[string]any{"sessionId": tr.SessionID, "uri": "https://example.com/main.go", "text": "x"}, "file"},
		{map[string]any{"sessionId": tr.SessionID, "uri": "file:main.go", "text": "x"}, "absolute"},
		{map[string]any{"sessionId": tr.SessionID, "uri": "%zz", "text": "x"}, "URI"},
		{map[string]any{"sessionId": "ses_nope", "uri": e.uri("main.go"), "text": "x"}, "ses_nope"},
		{map[string]any{"sessionId": tr.SessionID, "uri": e.uri("."), "text": "x"}, ""},
		{map[string]any{"sessionId": tr.SessionID, "uri": e.uri("main.go"), "text": 5}, "text"},
	} {
		var res applyAnswer
		err := e.client.command("darman.turn.apply", tc.args, &res)
		t.Logf("%v -> %v %+v", tc.args, err, res)
		if err == nil && res.Applied {
			t.Errorf("%v applied: %+v", tc.args, res)
		}
		if err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to say %q", tc.args, err, tc.want)
		}
	}
	if e.read("main.go") != "package main\n" || len(a.questions()) != 0 {
		t.Errorf("main.go = %q, %d questions", e.read("main.go"), len(a.questions()))
	}
}
