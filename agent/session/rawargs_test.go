package session_test

import (
	"context"
	"encoding/json"
	"github.com/darman-dev/darman/agent/session"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// The model's tool-call arguments go back to it byte for byte, though the
// store keeps parts as JSON (which would compact them): prompt caches key
// on the exact bytes.
func TestToolArgumentsGoBackAsWritten(t *testing.T) {
	const args = `{"x": "a",  "y": "<b> & c"}`
	p := &probe{name: "probe", readOnly: true}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "probe", Arguments: json.RawMessage(args)}}},
		{Text: "Done."},
		{Text: "Still done."},
	}}, nil, p)
	for _, prompt := range []string{"probe it", "and again"} {
		wait := f.events(t)
		if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text(prompt)}); err != nil {
			t.Fatal(err)
		}
		wait()
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls", len(calls))
	}
	for _, c := range calls[1:] {
		if got := c.Get("messages.1.content.0.input").Raw; got != args {
			t.Errorf("call %d sends the arguments as %s, want %s", c.Step+1, got, args)
		}
	}
}
