package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A permission question comes on the turn's own stream:
// session/request_permission reaches the client after the session/update
// of the tool call it is about, even when that update waits behind a long
// streamed answer. And the person's time is not the tool's: with the
// write tool's timeout cut to 2 s, an answer given 3 s later (past the
// tool's whole time) still lets the write run. The 2 s are for the tool's
// own work (its read, diff and synced write), which a loaded CI machine's
// disk can make slow.
func TestQuestionComesAfterItsToolCallAndWaitsForTheAnswer(t *testing.T) {
	e := start(t, options{
		files:    map[string]string{"notes.txt": "old\n"},
		timeouts: map[string]time.Duration{"write": 2 * time.Second},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("read", `{"path":"notes.txt"}`)}},
			{Text: strings.Repeat("Rewriting the notes now. ", 400), ToolCalls: []llmtest.ToolCall{call("write", `{"path":"notes.txt","content":"new\n"}`)}},
			{Text: "Done."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method != "session/request_permission" {
				return defaultAnswer(method, params)
			}
			time.Sleep(3 * time.Second) // the person reads the diff
			return allowOnce(params), nil
		},
	})
	id := e.newSession()
	if stop := e.prompt(id, "rewrite notes.txt"); stop != "end_turn" {
		t.Fatalf("stopReason %q\n%s", stop, e.client.Dump())
	}
	asked, askedAt := e.client.Await(0, "the permission request", func(n note) bool { return n.Method == "session/request_permission" })
	var ask struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
	}
	json.Unmarshal(asked.Params, &ask)
	if ask.ToolCall.ToolCallID == "" {
		t.Fatalf("session/request_permission names no tool call: %s", asked.Params)
	}
	_, toldAt := e.client.Await(0, "the write's tool_call", func(n note) bool {
		var p struct{ Update map[string]any }
		json.Unmarshal(n.Params, &p)
		return n.Method == "session/update" && p.Update["sessionUpdate"] == "tool_call" && p.Update["toolCallId"] == ask.ToolCall.ToolCallID
	})
	if toldAt > askedAt {
		t.Errorf("the question about call %s came as message %d, its tool_call as %d: the client was asked about a call it had not been told of",
			ask.ToolCall.ToolCallID, askedAt, toldAt)
	}
	got, err := os.ReadFile(filepath.Join(e.root, "notes.txt"))
	if err != nil || string(got) != "new\n" {
		t.Errorf("notes.txt holds %q (%v) after the write was allowed 3 s later, want %q", got, err, "new\n")
	}
}
