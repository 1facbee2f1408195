package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// TestPermissionModes: a session's permission mode is the core's, for
// every front: read-only refuses a write a rule allows and answers open
// questions no without asking; accept-edits writes without asking.
func TestPermissionModes(t *testing.T) {
	root := t.TempDir()
	write := func(name string) llmtest.Step {
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "write", Arguments: json.RawMessage(`{"path":"` + name + `","content":"x\n"}`)}}}
	}
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.AllowOnce}}
	f := newFixture(t, fixtureOptions{root: root, asker: asker, tools: tool.Builtins(tool.Options{NoRipgrep: true}),
		script: llmtest.Script{Conversations: []llmtest.Conversation{
			{Match: "allowed", Steps: []llmtest.Step{write("allowed.txt"), {Text: "refused"}}},
			{Match: "asked", Steps: []llmtest.Step{write("asked.txt"), {Text: "refused"}}},
			{Match: "accept", Steps: []llmtest.Step{write("accepted.txt"), {Text: "written"}}},
		}},
		service: func(o *session.Options) {
			o.Rules = append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "allowed.txt", Action: permission.Allow})
		}})
	ctx := context.Background()
	// Each prompt in a session of its own, in mode m.
	run := func(m permission.Mode, text string) {
		t.Helper()
		sess, err := f.svc.Create(ctx, session.CreateOptions{Model: f.sess.Model})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.SetPermissionMode(ctx, sess.ID, m); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Run(ctx, session.Turn{Session: sess.ID, Prompt: session.Text(text)}); err != nil {
			t.Fatal(err)
		}
	}
	run(permission.ModeReadOnly, "allowed")
	run(permission.ModeReadOnly, "asked")
	for _, name := range []string{"allowed.txt", "asked.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was written in read-only mode", name)
		}
	}
	if len(asker.asked) != 0 {
		t.Errorf("read-only mode asked %d questions", len(asker.asked))
	}
	if body := string(f.srv.ModelCalls()[1].Body); !strings.Contains(body, "read-only mode") {
		t.Errorf("the model was not told why: %.2000s", body)
	}
	run(permission.ModeAcceptEdits, "accept")
	if _, err := os.Stat(filepath.Join(root, "accepted.txt")); err != nil || len(asker.asked) != 0 {
		t.Errorf("accept-edits: %v, %d questions", err, len(asker.asked))
	}
}
