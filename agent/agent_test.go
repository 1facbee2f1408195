package agent_test

import (
	"slices"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
)

func TestIDsSortInCreationOrder(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = string(agent.NewPartID())
	}
	if !slices.IsSorted(ids) {
		t.Fatal("IDs made one after another do not sort in that order")
	}
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatal("duplicate IDs")
	}
}

func TestIDValidateAndTime(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	id := agent.NewSessionID()
	if err := id.Validate(agent.SessionPrefix); err != nil {
		t.Fatal(err)
	}
	if at := id.Time(); at.Before(before) || at.After(time.Now()) {
		t.Fatalf("Time() = %v, made at %v", at, before)
	}
	for _, bad := range []agent.ID{"", "ses_", "msg_01J00000000000000000000000", "ses_not-a-ulid", agent.ID(string(id) + "X")} {
		if bad.Validate(agent.SessionPrefix) == nil {
			t.Errorf("%q validated as a session ID", bad)
		}
	}
	if !agent.ID("garbage").Time().IsZero() {
		t.Error("a malformed ID has a time")
	}
}

func TestCoalesceEvents(t *testing.T) {
	chunk := func(kind agent.EventKind, part agent.ID, text string) agent.Event {
		return agent.Event{Kind: kind, SessionID: "s", PartID: part, Text: text}
	}
	merged, ok := agent.CoalesceEvents(chunk(agent.EventMessageChunk, "p1", "Hel"), chunk(agent.EventMessageChunk, "p1", "lo"))
	if !ok || merged.Text != "Hello" {
		t.Fatalf("two deltas of one part: %+v, %v", merged, ok)
	}
	for _, c := range []struct{ prev, next agent.Event }{
		{chunk(agent.EventMessageChunk, "p1", "a"), chunk(agent.EventMessageChunk, "p2", "b")},
		{chunk(agent.EventMessageChunk, "p1", "a"), chunk(agent.EventThoughtChunk, "p1", "b")},
		{agent.Event{Kind: agent.EventState, State: agent.StateRunning}, agent.Event{Kind: agent.EventState, State: agent.StateIdle}},
		{agent.Event{Kind: agent.EventToolCallUpdate, PartID: "p"}, agent.Event{Kind: agent.EventToolCallUpdate, PartID: "p"}},
	} {
		if _, ok := agent.CoalesceEvents(c.prev, c.next); ok {
			t.Errorf("merged %v into %v", c.next, c.prev)
		}
	}
}

func TestPriceCost(t *testing.T) {
	p := agent.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	u := agent.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 10_000}
	// 3 + 1.5 + 0.6 + 0.0375
	if got := p.Cost(u); got < 5.1374 || got > 5.1376 {
		t.Fatalf("cost = %v, want 5.1375", got)
	}
	if got := u.Add(u).Total(); got != 2*(1_000_000+100_000+2_000_000+10_000) {
		t.Fatalf("total of the sum = %d", got)
	}
}
