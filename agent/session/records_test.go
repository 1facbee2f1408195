package session_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
)

// countingStore counts the reads of a session's record.
type countingStore struct {
	session.Store
	reads atomic.Int32
}

func (c *countingStore) Session(ctx context.Context, id agent.ID) (agent.Session, error) {
	c.reads.Add(1)
	return c.Store.Session(ctx, id)
}

// A turn that names the agent its session already runs (as every ACP
// prompt does) reads the session's record no more often than one that
// names none: Start's read says the agent needs no storing.
func TestTurnNamingItsSessionsAgentReadsTheRecordOnce(t *testing.T) {
	var counted *countingStore
	f := newFixture(t, fixtureOptions{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "One."}, {Text: "Two."}}},
		service: func(o *session.Options) {
			counted = &countingStore{Store: o.Store}
			o.Store = counted
		},
	})
	reads := func(named string) int32 {
		t.Helper()
		sess, err := f.svc.Create(context.Background(), session.CreateOptions{Model: "anthropic/claude-sonnet-4-5", Agent: named})
		if err != nil {
			t.Fatal(err)
		}
		before := counted.reads.Load()
		if _, err := f.svc.Run(context.Background(), session.Turn{Session: sess.ID, Prompt: session.Text("hello"), Agent: named}); err != nil {
			t.Fatal(err)
		}
		return counted.reads.Load() - before
	}
	unnamed, named := reads(""), reads("build")
	if named > unnamed {
		t.Errorf("a turn naming its session's agent read the session's record %d times, one naming none %d", named, unnamed)
	}
}
