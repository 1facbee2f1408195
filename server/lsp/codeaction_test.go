package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/server/lsp"
)

type codeAction struct {
	Title       string            `json:"title"`
	Kind        string            `json:"kind"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
	Command     *struct {
		Title     string            `json:"title"`
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	} `json:"command"`
}

func codeActionParams(uri string, l1, c1, l2, c2 int, diags ...any) map[string]any {
	if diags == nil {
		diags = []any{}
	}
	return map[string]any{
		"textDocument": map[string]string{"uri": uri},
		"range":        rng(l1, c1, l2, c2),
		"context":      map[string]any{"diagnostics": diags},
	}
}

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]int{"line": l1, "character": c1}, "end": map[string]int{"line": l2, "character": c2}}
}

func findAction(actions []codeAction, prefix string) *codeAction {
	for i := range actions {
		if strings.HasPrefix(actions[i].Title, prefix) {
			return &actions[i]
		}
	}
	return nil
}

func titles(actions []codeAction) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Title)
	}
	return out
}

const brokenGo = `package main

import "fmt"

func main() {
	x := 1 // darman: use x in the Println
	fmt.Println("hi")
}
`

// A diagnostic in range gets "fix this problem", whose prompt holds the
// diagnostic (code included) and the code around it; running it starts a
// turn with that prompt.
func TestFixThisProblem(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "fixed"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.write("main.go", brokenGo)
	e.open("main.go", brokenGo)
	diag := map[string]any{"range": rng(5, 1, 5, 2), "severity": 1, "source": "compiler", "code": "UnusedVar", "message": "declared and not used: x"}
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("main.go"), 5, 1, 5, 1, diag), &actions)
	fix := findAction(actions, "darman: fix this problem")
	if fix == nil || fix.Kind != "quickfix" || len(fix.Diagnostics) != 1 || fix.Command.Command != "darman.prompt" {
		t.Fatalf("actions %v; want a quickfix running darman.prompt", titles(actions))
	}
	var arg struct {
		Prompt  string `json:"prompt"`
		Context struct {
			URI   string `json:"uri"`
			Range struct{ Start, End struct{ Line int } }
		} `json:"context"`
	}
	json.Unmarshal(fix.Command.Arguments[0], &arg)
	for _, want := range []string{"main.go at line 6", "compiler UnusedVar", "declared and not used: x"} {
		if !strings.Contains(arg.Prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, arg.Prompt)
		}
	}
	// The context is the lines around the problem.
	if arg.Context.URI != e.uri("main.go") || arg.Context.Range.Start.Line != 2 || arg.Context.Range.End.Line != 8 {
		t.Errorf("context %s, want lines 3-9 of main.go", fix.Command.Arguments[0])
	}
	if findAction(actions, "darman: do it") == nil {
		t.Errorf("no \"do it\" for the darman: comment on the line: %v", titles(actions))
	}
	var tr turn
	e.client.MustCall("workspace/executeCommand", map[string]any{"command": fix.Command.Command, "arguments": fix.Command.Arguments}, &tr)
	e.client.Await(0, "the end", isState("idle"))
	for _, want := range []string{"declared and not used: x", `6\t\tx := 1`, "fmt.Println"} {
		if !e.modelSaw(0, want) {
			t.Errorf("the model's prompt lacks %q:\n%s", want, e.model.ModelCalls()[0].Body)
		}
	}
}

// A selection gets the prompt actions; settings replace them, and a bad
// setting is refused with a message naming the key.
func TestSelectionActionsAndSettings(t *testing.T) {
	e := start(t, options{})
	e.write("a.go", brokenGo)
	e.open("a.go", brokenGo)
	get := func() []codeAction {
		var actions []codeAction
		e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 4, 0, 7, 1), &actions)
		return actions
	}
	for _, want := range []string{"darman: explain", "darman: improve", "darman: write tests", "darman: document"} {
		if a := findAction(get(), want); a == nil || a.Kind != "refactor.rewrite" {
			t.Errorf("no %q refactor.rewrite action: %v", want, titles(get()))
		}
	}
	e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"darman": map[string]any{
		"codeActions": []map[string]string{{"title": "darman: translate", "prompt": "Translate the comments to French."}},
	}}})
	e.client.Await(0, "settings applied", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings applied")
	})
	if got := titles(get()); findAction(get(), "darman: translate") == nil || findAction(get(), "darman: explain") != nil {
		t.Errorf("after the settings: %v", got)
	}
	e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"darman": map[string]any{
		"codeActions": []map[string]string{{"title": "darman: nothing", "prompt": ""}},
	}}})
	msg, _ := e.client.Await(0, "the error", isMethod("window/showMessage"))
	if !strings.Contains(string(msg.Params), "codeActions[0].prompt") {
		t.Errorf("showMessage %s does not name the key", msg.Params)
	}
	if findAction(get(), "darman: translate") == nil {
		t.Error("the previous settings are not in force after a bad one")
	}
}

// Each .darman/command/*.md is a code action running darman.command.run.
func TestCommandCodeActions(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "reviewed"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	dir := filepath.Join(e.root, ".darman", "command")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "review.md"), []byte("---\ndescription: review\n---\nReview this carefully: $ARGUMENTS"), 0o644)
	// The agent read the commands when it started; restart it by changing
	// a configuration key.
	e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"darman": map[string]any{"agent": map[string]any{"maxSteps": 5}}}})
	e.client.Await(0, "settings applied", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings applied")
	})
	e.write("a.go", "package a\n")
	e.open("a.go", "package a\n")
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 0, 0, 0, 0), &actions)
	review := findAction(actions, "darman: /review")
	if review == nil || review.Command.Command != "darman.command.run" {
		t.Fatalf("no command action: %v", titles(actions))
	}
	e.client.MustCall("workspace/executeCommand", map[string]any{"command": review.Command.Command, "arguments": review.Command.Arguments}, nil)
	e.client.Await(0, "the end", isState("idle"))
	if !e.modelSaw(0, "Review this carefully") {
		t.Error("the model did not get the expanded command")
	}
}

// TestConfiguredPromptActions: code actions from the configuration file
// replace the built-in selection prompts, and the editor's own settings win
// over them.
func TestConfiguredPromptActions(t *testing.T) {
	e := start(t, options{promptActions: []lsp.PromptAction{{Title: "darman: add logging", Prompt: "Add logging to this code."}}})
	// darman.session.list answers once the agent (and its configuration) is up.
	e.client.mustCommand("darman.session.list", nil, nil)
	e.write("a.go", "package a\n\nfunc A() {}\n")
	e.open("a.go", "package a\n\nfunc A() {}\n")
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 2, 0, 2, 11), &actions)
	if findAction(actions, "darman: add logging") == nil || findAction(actions, "darman: explain") != nil {
		t.Fatalf("with the config file's actions: %v", titles(actions))
	}
	e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"darman": map[string]any{
		"codeActions": []map[string]string{{"title": "darman: from the editor", "prompt": "Do it."}}}}})
	e.client.Await(0, "settings applied", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings applied")
	})
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 2, 0, 2, 11), &actions)
	if findAction(actions, "darman: from the editor") == nil || findAction(actions, "darman: add logging") != nil {
		t.Fatalf("with the editor's actions: %v", titles(actions))
	}
}
