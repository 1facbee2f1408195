package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// Two editors on one workspace, each with its own darman lsp and the same
// data directory: the plan made in the first is offered in the second as
// the hand-off code action, and running it there sends the plan to build.
func TestHandoffInAnotherEditor(t *testing.T) {
	e := newEnv(t)
	e.write("main.go", planMain)
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "Plan: make main panic."},
		{Text: "Done."},
	}})
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 1}
	}`, srv.URL))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")

	_, first, _, firstErr := startLSP(t, e, "--stdio")
	first.initialize(e.workspace, nil)
	var tr struct {
		SessionID string `json:"sessionId"`
	}
	if err := first.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
		"arguments": []any{map[string]any{"prompt": "plan making main panic", "agent": "plan"}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, firstErr)
	}
	first.await("the plan turn's end", isIdle)

	_, second, _, secondErr := startLSP(t, e, "--stdio")
	second.initialize(e.workspace, nil)
	uri := "file://" + e.workspace + "/main.go"
	second.Conn.Notify(t.Context(), "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "go", "version": 1, "text": planMain}})
	type action struct {
		Title   string `json:"title"`
		Command struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	want := "darman: carry out the plan with build (" + tr.SessionID + ")"
	var handoff *action
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for handoff == nil {
		var actions []action
		if err := second.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
			"range":   map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}},
			"context": map[string]any{"diagnostics": []any{}}}, &actions); err != nil {
			t.Fatalf("codeAction: %v\nstderr: %s", err, secondErr)
		}
		for _, a := range actions {
			if a.Title == want {
				handoff = &a
			}
		}
		if handoff != nil {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the second editor never offered %q; it offers %+v\nstderr: %s", want, actions, secondErr)
		}
	}
	var args map[string]any
	if err := json.Unmarshal(handoff.Command.Arguments[0], &args); err != nil || args["agent"] != "build" || args["sessionId"] != tr.SessionID {
		t.Fatalf("hand-off arguments %s (%v)", handoff.Command.Arguments[0], err)
	}
	if err := second.Call("workspace/executeCommand", map[string]any{"command": handoff.Command.Command, "arguments": []any{args}}, nil); err != nil {
		t.Fatalf("the hand-off: %v\nstderr: %s", err, secondErr)
	}
	second.await("the build turn's end", isIdle)
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	last := string(calls[1].Body)
	if !strings.Contains(last, "Carry out the plan") || !strings.Contains(last, "Plan: make main panic.") {
		t.Errorf("the build turn did not get the plan:\n%s", last)
	}
}
