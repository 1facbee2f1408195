package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestPromptContent: resource links and embedded resources reach the
// model; images are refused with a reason.
func TestPromptContent(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "seen"}}}})
	id := e.newSession()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	e.client.MustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "compare"},
		{"type": "resource_link", "uri": "file://" + e.root + "/main.go", "name": "main.go"},
		{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/util.go", "text": "package util // embedded", "mimeType": "text/x-go"}},
	}}, &res)
	body := string(e.model.ModelCalls()[0].Body)
	for _, want := range []string{"compare", e.root + "/main.go", "package util // embedded", e.root + "/util.go"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model's prompt lacks %q", want)
		}
	}
	err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "image", "data": "AAAA", "mimeType": "image/png"}}}, &res)
	if err == nil || !strings.Contains(err.Error(), "image") {
		t.Errorf("an image prompt: %v", err)
	}
	err = e.client.Call("session/prompt", map[string]any{"sessionId": "ses_unknown", "prompt": []map[string]any{{"type": "text", "text": "hi"}}}, &res)
	if err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("a prompt to an unknown session: %v", err)
	}
	err = e.client.Call("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}, &res)
	if err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative cwd: %v", err)
	}
}

// TestPromptResourcesRefused: a client's resource_link or embedded
// resource naming a file outside the workspace (directly or through a
// link) or a secret (.env) is refused with the reason, as darman.prompt's
// references are (complete.Attachable): the file's content, even the one
// the client embedded itself, never reaches the model; the next prompt
// does, without it.
func TestPromptResourcesRefused(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "seen"}}},
		files: map[string]string{
			".env": "API_KEY=sk-live-0123456789abcdef\n", "ok.go": "package ok\n",
			"deploy/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA-in-tree\n",
		},
	})
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("private notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.root, "notes-link.txt")); err != nil {
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
	id := e.newSession()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	for _, c := range []struct {
		block map[string]any
		want  string
	}{
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + outside, "text": "private notes"}}, "outside the workspace"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/notes-link.txt", "text": "private notes"}}, "outside the workspace"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/.env", "text": "API_KEY=sk-live-0123456789abcdef"}}, "looks like a secret"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": ".env", "text": "API_KEY=sk-live-0123456789abcdef"}}, "looks like a secret"},
		{map[string]any{"type": "resource_link", "uri": "file://" + outside, "name": "notes.txt"}, "outside the workspace"},
		{map[string]any{"type": "resource_link", "uri": "file://" + e.root + "/.env", "name": ".env"}, "looks like a secret"},
		{map[string]any{"type": "resource_link", "uri": "file://" + key, "name": "id_rsa"}, key + " is outside the workspace"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + key, "text": "-----BEGIN OPENSSH PRIVATE KEY-----"}}, "outside the workspace"},
		{map[string]any{"type": "resource_link", "uri": up, "name": "notes.txt"}, outside + " is outside the workspace"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/" + filepath.ToSlash(up), "text": "private notes"}}, outside + " is outside the workspace"},
		{map[string]any{"type": "resource_link", "uri": "file://" + e.root + "/deploy/id_ed25519", "name": "id_ed25519"}, "deploy/id_ed25519 looks like a secret"},
		{map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/env-link.txt", "text": "API_KEY=sk-live-0123456789abcdef"}}, "env-link.txt leads to .env looks like a secret"},
	} {
		err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "look"}, c.block}}, &res)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.block, err, c.want)
		}
	}
	e.client.MustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "now this"},
		{"type": "resource", "resource": map[string]any{"uri": "file://" + e.root + "/ok.go", "text": "package ok // embedded"}},
	}}, &res)
	calls := e.model.ModelCalls()
	if len(calls) != 1 || !strings.Contains(string(calls[0].Body), "package ok // embedded") {
		t.Fatalf("%d model calls; the allowed prompt did not reach the model", len(calls))
	}
	for _, leak := range []string{"sk-live", "private notes", outside, ".env", "PRIVATE KEY", "id_rsa", "id_ed25519"} {
		if strings.Contains(string(calls[0].Body), leak) {
			t.Errorf("%q reached the model", leak)
		}
	}
}

// TestCommandFileOutsideTheWorkspaceIsRefused: a command's @path that
// leaves the workspace (the user's SSH key) is refused before anything is
// read, as darman run refuses it, even though the client would read any
// file it is asked for: the key's content never reaches the model, and the
// client is never asked for it (issue 15, finding 6).
func TestCommandFileOutsideTheWorkspaceIsRefused(t *testing.T) {
	home := t.TempDir()
	key := filepath.Join(home, ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(key), 0o700)
	const secret = "-----BEGIN OPENSSH PRIVATE KEY----- not-for-the-model"
	os.WriteFile(key, []byte(secret+"\n"), 0o600)
	var mu sync.Mutex
	var asked []string
	e := start(t, options{
		caps:   fsCaps,
		files:  map[string]string{".darman/command/look.md": "Look at $1 closely.\n"},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}, {Text: "never"}}},
		answer: func(method string, params json.RawMessage) (any, error) {
			var p struct {
				Path string `json:"path"`
			}
			json.Unmarshal(params, &p)
			if method == "fs/read_text_file" {
				mu.Lock()
				asked = append(asked, p.Path)
				mu.Unlock()
				data, err := os.ReadFile(p.Path) // a client that reads whatever it is asked
				if err != nil {
					return nil, &jsonrpc2.Error{Code: -32002, Message: err.Error()}
				}
				return map[string]string{"content": string(data)}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	for _, ref := range []string{"@" + key, "@../" + filepath.Base(home) + "/.ssh/id_rsa"} {
		err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "/look " + ref}}}, nil)
		if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("/look %s: %v; want it refused as outside the workspace", ref, err)
		}
	}
	for _, c := range e.model.ModelCalls() {
		if strings.Contains(string(c.Body), "not-for-the-model") {
			t.Fatalf("the key reached the model:\n%s", c.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if strings.Contains(p, ".ssh") {
			t.Errorf("the client was asked for %s", p)
		}
	}
}

// TestCommandFileSecretIsRefused: a command's @path naming a secret
// inside the workspace (.env, directly or through a link), in the
// workspace's own command file or in what the user typed after the name,
// is refused with the reason attachments are (complete.Attachable): the
// secret is never read, from the client or the disk, nor sent.
func TestCommandFileSecretIsRefused(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	e := start(t, options{
		caps: fsCaps,
		files: map[string]string{
			".env":                     "API_KEY=sk-live-0123456789abcdef\n",
			".darman/command/setup.md": "Set the project up with these settings:\n@.env\n",
			".darman/command/look.md":  "Look at $1 closely.\n",
		},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "fs/read_text_file" {
				var p struct {
					Path string `json:"path"`
				}
				json.Unmarshal(params, &p)
				mu.Lock()
				asked = append(asked, p.Path)
				mu.Unlock()
				data, err := os.ReadFile(p.Path)
				if err != nil {
					return nil, &jsonrpc2.Error{Code: -32002, Message: err.Error()}
				}
				return map[string]string{"content": string(data)}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	if err := os.Symlink(".env", filepath.Join(e.root, "settings.txt")); err != nil {
		t.Fatal(err)
	}
	id := e.newSession()
	for _, c := range []struct{ text, want string }{
		{"/setup", "command /setup: @.env: .env looks like a secret"},
		{"/look @.env", "command /look: @.env: .env looks like a secret"},
		{"/look @settings.txt", "command /look: @settings.txt: settings.txt leads to .env looks like a secret"},
	} {
		err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": c.text}}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.text, err, c.want)
		}
	}
	for _, c := range e.model.ModelCalls() {
		if strings.Contains(string(c.Body), "sk-live") {
			t.Fatalf("the secret reached the model:\n%s", c.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 0 {
		t.Errorf("the client was asked for %v", asked)
	}
}

// TestCommandFileReadsTheEditorsBuffer: a command's @file inside the
// workspace is what the client's buffer holds, not the disk.
func TestCommandFileReadsTheEditorsBuffer(t *testing.T) {
	e := start(t, options{
		caps:   fsCaps,
		files:  map[string]string{"notes.txt": "on disk\n", ".darman/command/look.md": "Look at:\n@notes.txt\n"},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Seen."}}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "fs/read_text_file" && strings.Contains(string(params), `notes.txt"`) {
				return map[string]string{"content": "in the editor, unsaved\n"}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	if reason := e.prompt(id, "/look"); reason != "end_turn" {
		t.Fatalf("stop reason %q", reason)
	}
	body := string(e.model.ModelCalls()[0].Body)
	if !strings.Contains(body, "in the editor, unsaved") || strings.Contains(body, "on disk") {
		t.Errorf("the model was sent:\n%.2000s", body)
	}
}
