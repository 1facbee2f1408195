package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNeovimElicit runs the shipped Neovim helper's darman/elicit handler
// (editors/nvim/darman.lua) in a headless Neovim 0.7.2 with a scripted
// person behind vim.ui.select and vim.ui.input: the answers it sends
// darman, as the LSP client encodes them, for a typed form, a form with a
// wrong value retyped, Decline, Escape, and URLs.
func TestNeovimElicit(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("Neovim is not installed (apt-get install -y neovim): skipping the Neovim tests")
	}
	form := map[string]any{"requestId": "elicit_1", "server": "crm", "mode": "form", "message": "Who are you?", "fields": []any{
		map[string]any{"name": "age", "type": "integer", "required": true, "minimum": 0, "maximum": 150},
		map[string]any{"name": "name", "title": "Your name", "type": "string", "required": true, "default": "Ada"},
		map[string]any{"name": "newsletter", "type": "boolean", "required": false},
		map[string]any{"name": "ok", "type": "boolean", "required": true},
		map[string]any{"name": "team", "type": "string", "required": false, "enum": []string{"red", "blue"}},
		map[string]any{"name": "tags", "type": "array", "required": false, "enum": []string{"a", "b"}},
	}}
	url := func(u string) map[string]any {
		return map[string]any{"requestId": "elicit_2", "server": "auth", "mode": "url", "message": "Sign in", "url": u}
	}
	cases := []map[string]any{
		{"params": form, "answers": []any{"Answer", "36.5", "36", "Grace", "Skip", "No", "blue", "a, b"}},
		{"params": form, "answers": []any{"Decline"}},
		{"params": form, "answers": []any{nil}},
		{"params": form, "answers": []any{"Answer", "36", nil}},
		{"params": map[string]any{"requestId": "elicit_3", "server": "s", "mode": "form", "message": "Go on?", "fields": []any{}}, "answers": []any{"Answer"}},
		{"params": url("https://auth.example.com/x"), "answers": []any{"Open"}},
		{"params": url("https://auth.example.com/x"), "answers": []any{"Decline"}},
		{"params": url("command:workbench.action.terminal.new"), "answers": []any{}},
	}
	dir := t.TempDir()
	casesFile, out := filepath.Join(dir, "cases.json"), filepath.Join(dir, "out.json")
	b, _ := json.Marshal(cases)
	if err := os.WriteFile(casesFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/nvim/elicit.lua")
	helper, _ := filepath.Abs("../../editors/nvim")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Env = append(os.Environ(), "CASES="+casesFile, "OUT="+out, "HELPER_DIR="+helper)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, stderr.String())
	}
	b, err = os.ReadFile(out)
	if err != nil {
		t.Fatalf("the script wrote nothing: %v\n%s", err, stderr.String())
	}
	var got struct {
		Capabilities map[string]any `json:"capabilities"`
		Runs         []struct {
			Encoded string `json:"encoded"`
			Asked   []struct {
				Kind, Prompt string
				Items        []string
				Default      any
			} `json:"asked"`
			Notes  []string `json:"notes"`
			Opened []string `json:"opened"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	t.Logf("Neovim answered: %s", b)
	if got.Capabilities["elicitation"] != true {
		t.Errorf("the helper's opt-ins %v lack elicitation", got.Capabilities)
	}
	if len(got.Runs) != len(cases) {
		t.Fatalf("%d runs, want %d: %s", len(got.Runs), len(cases), b)
	}
	want := []string{
		`{"action":"accept","content":{"age":36,"name":"Grace","ok":false,"tags":["a","b"],"team":"blue"}}`,
		`{"action":"decline"}`,
		`{"action":"cancel"}`,
		`{"action":"cancel"}`,
		`{"action":"accept","content":{}}`,
		`{"action":"accept"}`,
		`{"action":"decline"}`,
		`{"action":"decline"}`,
	}
	for i, w := range want {
		var g, wv any
		json.Unmarshal([]byte(got.Runs[i].Encoded), &g)
		json.Unmarshal([]byte(w), &wv)
		if !reflect.DeepEqual(g, wv) {
			t.Errorf("case %d answered %s, want %s", i, got.Runs[i].Encoded, w)
		}
	}
	typed := got.Runs[0]
	if len(typed.Notes) != 1 || !strings.Contains(typed.Notes[0], "whole number") {
		t.Errorf("retyping 36.5 as an integer: notes %v, want one saying it must be a whole number", typed.Notes)
	}
	if len(typed.Asked) < 3 || typed.Asked[0].Kind != "select" || !strings.Contains(typed.Asked[0].Prompt, "crm asks: Who are you?") ||
		typed.Asked[1].Kind != "input" || typed.Asked[3].Default != "Ada" {
		t.Errorf("prompts %+v: want the question naming crm, then an input box for age, one for the name starting at Ada", typed.Asked)
	}
	if o := got.Runs[5].Opened; len(o) != 1 || o[0] != "https://auth.example.com/x" {
		t.Errorf("Open opened %v", o)
	}
	for _, i := range []int{6, 7} {
		if len(got.Runs[i].Opened) != 0 {
			t.Errorf("case %d opened %v without Open", i, got.Runs[i].Opened)
		}
	}
	if r := got.Runs[7]; len(r.Asked) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "only http and https") {
		t.Errorf("a command: URL: asked %v, notes %v; want it declined unasked, saying why", r.Asked, r.Notes)
	}
}
