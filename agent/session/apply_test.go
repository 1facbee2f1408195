package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// A sub-task's session is part of its parent's turn: an edit applied to it
// while the parent runs is refused, and the file stays as it was. (Its own
// live state is idle once the sub-task answered, so only the parent says
// the turn still runs.)
func TestApplyToASubTaskWhileItsParentRunsIsRefused(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &probe{name: "probe", block: true, started: make(chan string, 1)}
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Look around", Steps: []llmtest.Step{{Text: "Nothing to change."}}},
		{Match: "Work on f", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "look", "Look around")}},
			{ToolCalls: []llmtest.ToolCall{{ID: "call_probe", Name: "probe", Arguments: json.RawMessage(`{"x":"a"}`)}}},
			{Text: "Done."},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: append(tool.Builtins(tool.Options{}), p), service: withTasks})
	ctx := context.Background()
	ran := make(chan error, 1)
	go func() {
		_, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("Work on f")})
		ran <- err
	}()
	<-p.started // the sub-task answered; the parent's turn runs on
	all, err := f.store.ListSessions(ctx, store.ListOptions{Children: true})
	if err != nil {
		t.Fatal(err)
	}
	var child agent.ID
	for _, s := range all {
		if s.ParentID == f.sess.ID {
			child = s.ID
		}
	}
	if child == "" {
		t.Fatalf("no sub-task session among %+v", all)
	}
	_, err = f.svc.Apply(ctx, child, "f.txt", "applied\n")
	if err == nil || !strings.Contains(err.Error(), "is a sub-task of session "+string(f.sess.ID)) {
		t.Errorf("an apply to the sub-task's session while its parent runs: %v, want an error naming the parent", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "before\n" {
		t.Errorf("f.txt = %q", b)
	}
	f.svc.Cancel(f.sess.ID)
	<-ran
}
