package bus

import (
	"context"
	"log/slog"
	"testing"
)

// A reader that stays just behind must not make the queue grow without
// bound, nor copy the queue on every event.
func TestQueueSpaceIsReusedWhileAReaderLags(t *testing.T) {
	const maxPending = 64
	s := &Subscription[int]{
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
		logger: slog.New(slog.DiscardHandler),
	}
	next, want := 0, 0
	for range maxPending - 1 {
		if !s.push(Delivery[int]{Seq: uint64(next + 1), Event: next}, nil, maxPending) {
			t.Fatal("push within maxPending ended the subscription")
		}
		next++
	}
	for range 100_000 {
		if !s.push(Delivery[int]{Seq: uint64(next + 1), Event: next}, nil, maxPending) {
			t.Fatal("push within maxPending ended the subscription")
		}
		next++
		d, ok := s.pop()
		if !ok || d.Event != want {
			t.Fatalf("pop = (%+v, %v), want event %d", d, ok, want)
		}
		want++
		if c := cap(s.queue); c > 4*maxPending {
			t.Fatalf("queue capacity grew to %d with at most %d events waiting", c, maxPending)
		}
	}
}

func TestEndedSubscriptionsAreForgotten(t *testing.T) {
	b := New(Options[int]{MaxPending: 1})
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	byContext := b.Subscribe(ctx)
	byUnsubscribe := b.Subscribe(t.Context())
	byOverflow := b.Subscribe(t.Context())

	cancel()
	for range byContext.C() {
	}
	byUnsubscribe.Unsubscribe()
	for i := range 3 {
		b.Publish(i)
	}
	for range byOverflow.C() {
	}
	b.mu.Lock()
	n := len(b.subs)
	b.mu.Unlock()
	if n != 0 {
		t.Fatalf("bus still holds %d ended subscriptions", n)
	}
}
