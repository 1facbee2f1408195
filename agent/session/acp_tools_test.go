package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// TestPromptWithToolsOffersTheTurnsOwnTools: a turn's extra tools are
// offered besides the service's, one with a service tool's name takes its
// place (and is the one that runs), and the next plain turn is back to the
// service's tools.
func TestPromptWithToolsOffersTheTurnsOwnTools(t *testing.T) {
	shared := &probe{name: "look"}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "look", Arguments: json.RawMessage(`{"x":"1"}`)}}},
		{Text: "looked"},
		{Text: "plain"},
	}}, nil, shared)
	own := &probe{name: "look"}
	extra := &probe{name: "session_only"}
	if _, err := f.svc.PromptWithTools(context.Background(), f.sess.ID, "look around", session.PromptOptions{}, []tool.Tool{own, extra}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Prompt(context.Background(), f.sess.ID, "again"); err != nil {
		t.Fatal(err)
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls", len(calls))
	}
	names := func(body []byte) []string {
		var req struct{ Tools []struct{ Name string } }
		json.Unmarshal(body, &req)
		var out []string
		for _, tl := range req.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := strings.Join(names(calls[0].Body), ","); got != "look,session_only" {
		t.Errorf("the turn with extra tools offered %s", got)
	}
	if got := strings.Join(names(calls[2].Body), ","); got != "look" {
		t.Errorf("the plain turn offered %s", got)
	}
	if own.maxSeen.Load() != 1 || shared.maxSeen.Load() != 0 {
		t.Errorf("the turn's own look ran %d times, the service's %d", own.maxSeen.Load(), shared.maxSeen.Load())
	}
}
