package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
)

// partFailing is a store whose PutPart fails for the parts fail picks.
type partFailing struct {
	session.Store
	fail func(agent.Part) bool
}

func (s partFailing) PutPart(ctx context.Context, p agent.Part) error {
	if s.fail(p) {
		return errors.New("disk full (the test's)")
	}
	return s.Store.PutPart(ctx, p)
}

// A prompt the store cannot keep fails the turn, saying why, and is not
// sent: the model is sent the stored history, so it answered the turn
// without the prompt (or, with no history, the request had no messages).
// The session goes on: the next prompt is sent alone, as it should be.
func TestPromptTheStoreCannotKeepFailsTheTurn(t *testing.T) {
	f := newFixture(t, fixtureOptions{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "The second prompt, answered."}}},
		service: func(o *session.Options) {
			o.Store = partFailing{Store: o.Store, fail: func(p agent.Part) bool {
				return p.Kind == agent.PartText && strings.Contains(p.Text, "first prompt")
			}}
		},
	})
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: []session.Part{{Text: "the first prompt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "the prompt could not be stored") || !strings.Contains(msg.Error, "disk full (the test's)") {
		t.Fatalf("the turn whose prompt was not stored: %+v", msg)
	}
	if n := len(f.srv.ModelCalls()); n != 0 {
		t.Fatalf("the model was asked %d times without the prompt", n)
	}
	msg, err = f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: []session.Part{{Text: "the second prompt"}}})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the next turn: %+v, %v", msg, err)
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(calls))
	}
	if got := calls[0].Get("messages.#").Int(); got != 1 || !strings.Contains(calls[0].Get("messages.0.content.0.text").String(), "the second prompt") {
		t.Fatalf("the next turn sent %d messages: %s", got, calls[0].Body)
	}
}
