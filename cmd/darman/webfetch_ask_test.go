package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A fetch the address policy refuses whatever the user says (loopback,
// by address or as localhost) is refused without a question, through an
// editor; a fetch that is asked offers to always allow its origin, the
// host the question names, not the one URL.
func TestWebFetchAsksOnlyWhatAnAnswerCanAllow(t *testing.T) {
	e := newEnv(t)
	srv := e.userModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			{ID: "loop", Name: "webfetch", Arguments: json.RawMessage(`{"url":"http://127.0.0.1:9/admin"}`)},
			{ID: "local", Name: "webfetch", Arguments: json.RawMessage(`{"url":"http://app.localhost:8080/"}`)},
			{ID: "far", Name: "webfetch", Arguments: json.RawMessage(`{"url":"https://docs.example.invalid/guide/a"}`)},
		}},
		{Text: "Fetched what could be."},
	}}, "")
	answer := func(method string, _ json.RawMessage) (any, error) {
		if method == "darman/requestPermission" {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		}
		return nil, nil
	}
	p := startPeer(t, e, jsonrpc2.VSCodeObjectCodec{}, answer, "lsp")
	p.call("initialize", map[string]any{"processId": nil,
		"capabilities":     map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true, "requestPermission": true}}},
		"workspaceFolders": []map[string]string{{"uri": "file://" + e.workspace, "name": "project"}}}, nil)
	p.conn.Notify(context.Background(), "initialized", map[string]any{})
	from := p.count()
	var tr struct{ TurnID string }
	p.call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "fetch them"}}}, &tr)
	p.await(from, "the turn's end", func(n jsonrpc2.Request) bool {
		return n.Method == "darman/sessionUpdate" && gjson.Get(params(n), "update.sessionUpdate").String() == "state_update" &&
			strings.Contains("idle cancelled failed", gjson.Get(params(n), "update.state").String())
	})
	asked := p.since(from, "darman/requestPermission")
	if len(asked) != 1 {
		t.Fatalf("%d permission questions, want 1 (only the fetch an answer can allow): %v", len(asked), asked)
	}
	q := params(asked[0])
	if s := gjson.Get(q, "toolCall.subjects.0").String(); s != "https://docs.example.invalid/guide/a" {
		t.Errorf("the question is about %q", s)
	}
	if always := gjson.Get(q, "toolCall.always").String(); !strings.Contains(always, "https://docs.example.invalid/*") {
		t.Errorf(`"always" would grant %q, want the origin https://docs.example.invalid/*`, always)
	}
	calls := srv.ModelCalls()
	if len(calls) < 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	for _, id := range []string{"loop", "local"} {
		res := calls[1].Get(`messages.@reverse.0.content.#(tool_use_id=="` + id + `")`).Raw
		if !strings.Contains(res, "refused") || !strings.Contains(res, "loopback") {
			t.Errorf("the %s fetch answered %s", id, res)
		}
	}
}
