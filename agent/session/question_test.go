package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// countingAsker counts the questions the session's Asker was given, and
// answers each allow-once.
type countingAsker struct{ n atomic.Int32 }

func (a *countingAsker) Ask(context.Context, permission.Request) (permission.Reply, error) {
	a.n.Add(1)
	return permission.Reply{Answer: permission.AllowOnce}, nil
}

// With Turn.Questions, a turn's permission question is an update of its
// own stream: it comes after the tool call it is about, carries the
// request, and the tool waits for Question.Answer — the session's Asker
// is not asked. Without it, the Asker is asked, as before.
func TestTurnQuestionsComeOnItsStream(t *testing.T) {
	root := t.TempDir()
	write := func(path string) llmtest.Step {
		in, _ := json.Marshal(map[string]string{"path": path, "content": "new\n"})
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "write", Arguments: in}}}
	}
	asker := &countingAsker{}
	f := newFixture(t, fixtureOptions{
		root:  root,
		asker: asker,
		tools: tool.Builtins(tool.Options{NoRipgrep: true}),
		script: llmtest.Script{Steps: []llmtest.Step{
			write("a.txt"), {Text: "Written."},
			write("b.txt"), {Text: "Written again."},
		}},
		service: func(o *session.Options) { o.Rules = permission.Defaults() },
	})

	var (
		told      = map[string]bool{} // tool calls the stream showed
		questions int
		before    []string // questions that came before their call
	)
	res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("write a.txt"), Questions: true,
		Events: func(u session.Update) {
			if e := u.Event; e.Kind == agent.EventToolCall && e.Tool != nil {
				told[e.Tool.CallID] = true
			}
			if q := u.Question; q != nil {
				questions++
				if !told[q.Request.CallID] {
					before = append(before, q.Request.CallID)
				}
				if q.Request.Session != f.sess.ID || q.Request.Permission != permission.Edit {
					t.Errorf("the question asks %q in %s, want %q in %s", q.Request.Permission, q.Request.Session, permission.Edit, f.sess.ID)
				}
				q.Answer(permission.Reply{Answer: permission.AllowOnce}, nil)
			}
		}})
	if err != nil || res.Finish != agent.FinishStop {
		t.Fatalf("the turn: %+v, %v", res, err)
	}
	if questions != 1 || len(before) > 0 || asker.n.Load() != 0 {
		t.Errorf("the stream asked %d questions (want 1), %v before their tool call; the Asker was asked %d (want 0)", questions, before, asker.n.Load())
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "new\n" {
		t.Errorf("a.txt = %q after the stream's allow, want %q", got, "new\n")
	}

	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("again"), Events: func(u session.Update) {
		if u.Question != nil {
			t.Error("a turn without Questions got a question on its stream")
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if asker.n.Load() != 1 {
		t.Errorf("without Turn.Questions the Asker was asked %d times, want 1", asker.n.Load())
	}
	if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "new\n" {
		t.Errorf("b.txt = %q after the Asker's allow, want %q", got, "new\n")
	}
}
