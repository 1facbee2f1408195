package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
)

// TestBetweenTurns: what a front does between a session's turns
// (Service.Between) is refused while a turn runs, and runs once it ended
// (AfterTurn cancels it first); a turn that starts while such an action
// runs waits for it, and one whose session the action deleted does not
// start: nothing reaches the model.
func TestBetweenTurns(t *testing.T) {
	p := &probe{name: "probe", block: true, started: make(chan string, 1)}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "probe", Arguments: json.RawMessage(`{"x":"1"}`)}}},
	}}, nil, p)
	ctx := context.Background()
	running, err := f.svc.Start(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("probe")})
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	ran := false
	if err := f.svc.Between(ctx, f.sess.ID, func() error { ran = true; return nil }); !errors.Is(err, session.ErrBusy) || ran {
		t.Fatalf("Between while a turn runs: %v (ran: %v), want ErrBusy and nothing run", err, ran)
	}
	err = f.svc.AfterTurn(ctx, f.sess.ID, func() error {
		select {
		case <-running.Done():
		default:
			t.Error("AfterTurn ran its action before the turn ended")
		}
		return nil
	})
	if err != nil || running.Wait().Finish != agent.FinishCancelled {
		t.Fatalf("AfterTurn: %v; the turn ended %q", err, running.Wait().Finish)
	}

	calls := len(f.srv.ModelCalls())
	holding, release := make(chan struct{}), make(chan struct{})
	deleted := make(chan error, 1)
	go func() {
		deleted <- f.svc.Between(ctx, f.sess.ID, func() error {
			close(holding)
			<-release
			return f.store.DeleteSession(ctx, f.sess.ID)
		})
	}()
	<-holding
	started := make(chan error, 1)
	go func() {
		_, err := f.svc.Start(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("again")})
		started <- err
	}()
	select {
	case err := <-started:
		t.Fatalf("Start returned (%v) while a between-turns action held the session", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if err := <-started; err == nil {
		t.Error("a turn of the session deleted while it waited started")
	}
	if n := len(f.srv.ModelCalls()); n != calls {
		t.Errorf("the model was called %d times after the delete", n-calls)
	}
}
