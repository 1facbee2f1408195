package session_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
)

// Run passes every event of the turn to Events, in order, with Last on
// the final one and nothing after it, and returns the turn's result: the
// last message's text, how it ended, its usage.
func TestRunPassesTheTurnAndItsResult(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "First I look.", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "probe", Arguments: []byte(`{"x":"a"}`)}}},
		{Text: "All is well.", Chunks: 3, Usage: &llmtest.Usage{Input: 50, Output: 5}},
	}}, nil, &probe{name: "probe", readOnly: true})
	var mu sync.Mutex
	var got []session.Update
	res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("check"),
		Events: func(u session.Update) {
			mu.Lock()
			got = append(got, u)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !got[len(got)-1].Last || got[len(got)-1].Event.State != agent.StateIdle {
		t.Fatalf("the last update is not the turn's end: %+v", got)
	}
	for i, u := range got[:len(got)-1] {
		if u.Last {
			t.Errorf("update %d of %d is marked last", i, len(got))
		}
		if i > 0 && u.Seq <= got[i-1].Seq {
			t.Errorf("update %d is out of order", i)
		}
	}
	if res.Finish != agent.FinishStop || res.Text != "All is well." || res.Usage.Input < 50 || res.Session != f.sess.ID || res.Message == "" || res.Duration <= 0 {
		t.Errorf("result %+v", res)
	}
}

// A front that hears a turn's end may start the next turn at once: the
// session is free by then, and the new turn's events are its own.
func TestNextTurnStartsOnTheLastEvent(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "one"}, {Text: "two"}}}, nil)
	next := make(chan error, 1)
	var second *session.Running
	_, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("first"),
		Events: func(u session.Update) {
			if u.Last {
				r, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("second"), Events: func(session.Update) {}})
				second = r
				next <- err
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-next; err != nil {
		t.Fatalf("the next turn, started on the last event: %v", err)
	}
	if res := second.Wait(); res.Text != "two" || res.Finish != agent.FinishStop {
		t.Errorf("the second turn: %+v", res)
	}
}

// Start refuses what cannot run, before anything is stored: a session
// that runs a turn, an empty prompt, an agent the workspace does not have.
func TestStartRefuses(t *testing.T) {
	f := setup(t, stallScript(), nil)
	r, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("wait")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("again")}); !errors.Is(err, session.ErrBusy) {
		t.Errorf("a second turn: %v; want ErrBusy", err)
	}
	f.svc.Cancel(f.sess.ID)
	if res := r.Wait(); res.Finish != agent.FinishCancelled {
		t.Errorf("the cancelled turn: %+v", res)
	}
	if _, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("  ")}); err == nil {
		t.Error("an empty prompt started")
	}
	if _, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("hi"), Agent: "planner"}); err == nil || !strings.Contains(err.Error(), "the agents are build, plan") {
		t.Errorf("an unknown agent: %v", err)
	}
}

func stallScript() llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{{Text: "thinking", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 3, Times: -1}}}}}
}
