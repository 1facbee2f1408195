package lsp_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// modelSaw reports whether the k-th model call was sent s (a tool's
// result, usually).
func (e *env) modelSaw(k int, s string) bool {
	calls := e.model.ModelCalls()
	return len(calls) > k && strings.Contains(string(calls[k].Body), s)
}

// The agent's read tool sees the editor's unsaved buffer, after full and
// incremental changes, not the file on disk.
func TestReadSeesUnsavedBuffer(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{toolStep("read", map[string]string{"path": "main.go"}), {Text: "read it"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.write("main.go", "package main // on disk\n")
	e.open("main.go", "package main // opened\n")
	e.client.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": e.uri("main.go"), "version": 2},
		"contentChanges": []any{
			map[string]any{"text": "package main\n\n// whole 𝄞 text\n"},
			map[string]any{"range": map[string]any{"start": map[string]int{"line": 2, "character": 9}, "end": map[string]int{"line": 2, "character": 11}}, "text": "EDITED"},
		},
	})
	e.prompt("read main.go")
	e.client.Await(0, "the end", isState("idle"))
	if !e.modelSaw(1, "// whole EDITED text") {
		t.Errorf("the read tool did not return the buffer; the model got:\n%s", e.model.ModelCalls()[1].Body)
	}
}

// A change that does not fit the buffer is reported, and reads fall back
// to the disk until the editor sends the whole text again.
func TestChangeOutOfRangeFallsBackToDisk(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{toolStep("read", map[string]string{"path": "main.go"}), {Text: "read it"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.write("main.go", "package main // on disk\n")
	e.open("main.go", "package main // opened\n")
	e.client.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": e.uri("main.go"), "version": 2},
		"contentChanges": []any{
			map[string]any{"range": map[string]any{"start": map[string]int{"line": 7, "character": 0}, "end": map[string]int{"line": 7, "character": 0}}, "text": "x"},
		},
	})
	msg, _ := e.client.Await(0, "a log line", isMethod("window/logMessage"))
	if !strings.Contains(string(msg.Params), "lost track") || !strings.Contains(string(msg.Params), "line 7") {
		t.Errorf("logMessage %s", msg.Params)
	}
	e.prompt("read main.go")
	e.client.Await(0, "the end", isState("idle"))
	if !e.modelSaw(1, "// on disk") {
		t.Errorf("the read tool did not fall back to the disk:\n%s", e.model.ModelCalls()[1].Body)
	}
}
