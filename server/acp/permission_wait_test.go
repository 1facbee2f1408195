package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A person may take longer over session/request_permission than the tool
// may run: the wait is not the tool's time. With the write tool's timeout
// cut to 200 ms, a question answered after a second still lets the write
// run, and the file changes on disk.
func TestPermissionAnsweredAfterTheToolsTimeout(t *testing.T) {
	e := start(t, options{
		files:    map[string]string{"notes.txt": "old\n"},
		timeouts: map[string]time.Duration{"write": 200 * time.Millisecond},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("read", `{"path":"notes.txt"}`)}},
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"notes.txt","content":"new\n"}`)}},
			{Text: "Done."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method != "session/request_permission" {
				return defaultAnswer(method, params)
			}
			time.Sleep(time.Second) // the person reads the diff
			return allowOnce(params), nil
		},
	})
	id := e.newSession()
	if stop := e.prompt(id, "rewrite notes.txt"); stop != "end_turn" {
		t.Fatalf("stopReason %q\n%s", stop, e.client.Dump())
	}
	got, err := os.ReadFile(filepath.Join(e.root, "notes.txt"))
	if err != nil || string(got) != "new\n" {
		t.Errorf("notes.txt holds %q (%v) after the write was allowed, want %q; the model was told: %s", got, err, "new\n",
			e.model.ModelCalls()[2].Get("messages.4.content.0.content.0.text"))
	}
}
