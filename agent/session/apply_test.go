package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
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
	f, child, stop := parentPastItsSubTask(t, root)
	defer stop()
	_, err := f.svc.Apply(context.Background(), child, "f.txt", "applied\n")
	if err == nil || !strings.Contains(err.Error(), "is a sub-task of session "+string(f.sess.ID)) {
		t.Errorf("an apply to the sub-task's session while its parent runs: %v, want an error naming the parent", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "before\n" {
		t.Errorf("f.txt = %q", b)
	}
}

// An edit applied after a turn that compacted the conversation midway
// belongs to that turn, not to the compaction's summary (a user message
// the session stores within the turn): the turn's revert, by its user
// message, takes the edit back.
func TestApplyAfterACompactedTurnIsRevertedWithTheTurn(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var write tool.Tool
	for _, tl := range tool.Builtins(tool.Options{}) {
		if tl.Info().Name == "write" {
			write = tl
		}
	}
	var keeper *checkpoint.Keeper
	var steps atomic.Int32
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if isSummaryCall(c) {
			return llmtest.Step{Text: "Goal: read the logs.\nRemains: the rest."}
		}
		if k := int(steps.Add(1)); k <= 6 {
			return llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog(fmt.Sprintf("call_%d", k), fmt.Sprintf("t%d", k))}}
		}
		return llmtest.Step{Text: "f.txt could read:\n```\nafter\n```"}
	}}, root: root, tools: []tool.Tool{logTool{size: 5000}, write}, models: tinyModel, service: func(o *session.Options) {
		var err error
		if keeper, err = checkpoint.New(checkpoint.Options{Dir: t.TempDir(), Store: o.Store.(*store.Store)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(keeper.Close)
		o.Checkpoints = keeper
	}})
	ctx := context.Background()
	if msg, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("Read the logs t1 to t6.")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the turn: %+v, %v", msg, err)
	}
	msgs, err := f.store.Messages(ctx, f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	prompt, compacted := msgs[0].Message.ID, false
	for _, m := range msgs {
		for _, p := range m.Parts {
			compacted = compacted || p.Kind == agent.PartCompaction
		}
	}
	if !compacted {
		t.Fatal("the turn was not compacted")
	}
	res, err := f.svc.Apply(ctx, f.sess.ID, "f.txt", "after\n")
	if err != nil || !res.Written {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if res.Turn != prompt {
		t.Errorf("the apply is a step of %s, want the turn's user message %s", res.Turn, prompt)
	}
	if _, err := keeper.Revert(ctx, checkpoint.RevertOptions{Session: f.sess.ID, Turn: string(prompt)}); err != nil {
		t.Errorf("revert of the turn: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "before\n" {
		t.Errorf("f.txt = %q after the turn's revert", b)
	}
}
