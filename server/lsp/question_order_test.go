package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A permission question comes on the turn's own stream: darman/requestPermission
// reaches the client after the darman/sessionUpdate of the tool call it is
// about, even when that update waits behind a long streamed answer. And the
// person's time is not the tool's: with the write tool's timeout cut to
// 2 s, an answer given 3 s later (past the tool's whole time) still lets
// the write run. The 2 s are for the tool's own work (its read, diff and
// synced write), which a loaded CI machine's disk can make slow.
func TestQuestionComesAfterItsToolCallAndWaitsForTheAnswer(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			toolStep("read", map[string]string{"path": "notes.txt"}),
			{Text: strings.Repeat("Rewriting the notes now. ", 400), ToolCalls: toolStep("write", map[string]string{"path": "notes.txt", "content": "new\n"}).ToolCalls},
			{Text: "written"},
		}},
		timeouts: map[string]time.Duration{"write": 2 * time.Second},
		optIns:   map[string]bool{"sessionUpdates": true, "requestPermission": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method != "darman/requestPermission" {
				return defaultAnswer(method, params)
			}
			time.Sleep(3 * time.Second) // the person reads the diff
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		},
	})
	e.write("notes.txt", "old\n")
	e.prompt("rewrite notes.txt")
	e.client.Await(0, "the end", isState("idle"))

	var question struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
	}
	msgs := e.client.Since(0)
	at := -1
	for i, m := range msgs {
		if m.Method == "darman/requestPermission" {
			json.Unmarshal(m.Params, &question)
			at = i
			break
		}
	}
	if at < 0 || question.ToolCall.ToolCallID == "" {
		t.Fatalf("no darman/requestPermission naming its tool call came (at %d)", at)
	}
	told := -1
	for i, m := range msgs {
		var u update
		if m.Method == "darman/sessionUpdate" && json.Unmarshal(m.Params, &u) == nil &&
			u.Update["sessionUpdate"] == "tool_call" && u.Update["toolCallId"] == question.ToolCall.ToolCallID {
			told = i
			break
		}
	}
	if told < 0 || told > at {
		t.Errorf("the question about call %s came as message %d, its tool_call as %d: the client was asked about a call it had not been told of",
			question.ToolCall.ToolCallID, at, told)
	}
	if got := e.read("notes.txt"); got != "new\n" {
		t.Errorf("notes.txt holds %q after the edit was allowed 3 s later, want %q; the model was told:\n%s", got, "new\n", e.toolResult(2))
	}
}
