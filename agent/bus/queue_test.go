package bus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/darman-dev/darman/agent/bus"
)

// These tests pin down exactly what waits in a queue. Inside a synctest
// bubble, synctest.Wait returns once the subscription's goroutine is blocked
// offering its next event on C, so which event is "in hand" and which are
// queued is known.

func TestMergeOnlyIntoQueuedEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := bus.New(bus.Options[ev]{Coalesce: joinDeltas})
		defer b.Close()
		s := b.Subscribe(ctx)

		b.Publish(delta(1, "a")) // 1: offered on C, never merged into
		synctest.Wait()
		b.Publish(delta(1, "b")) // 2
		b.Publish(delta(1, "c")) // 3: merges into 2
		b.Publish(tool(7))       // 4: never merges
		b.Publish(delta(1, "d")) // 5: the last queued event is a tool event
		b.Publish(delta(2, "e")) // 6: another part
		b.Publish(delta(2, "f")) // 7: merges into 6

		got := readThrough(t, s, 7)
		want := []bus.Delivery[ev]{
			{Seq: 1, Event: delta(1, "a")},
			{Seq: 3, Event: delta(1, "bc")},
			{Seq: 4, Event: tool(7)},
			{Seq: 5, Event: delta(1, "d")},
			{Seq: 7, Event: delta(2, "ef")},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("deliveries:\n got %v\nwant %v", got, want)
		}

		// Once caught up, nothing waits, so nothing merges.
		b.Publish(delta(2, "g"))
		synctest.Wait()
		b.Publish(delta(2, "h"))
		got = readThrough(t, s, 9)
		want = []bus.Delivery[ev]{{Seq: 8, Event: delta(2, "g")}, {Seq: 9, Event: delta(2, "h")}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("deliveries after catching up:\n got %v\nwant %v", got, want)
		}
	})
}

func TestOverflowAtOneMoreThanMaxPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := bus.New(bus.Options[int]{MaxPending: 3})
		defer b.Close()
		s := b.Subscribe(ctx)

		b.Publish(0) // offered on C, not counted
		synctest.Wait()
		for i := 1; i <= 3; i++ {
			b.Publish(i)
		}
		if err := s.Err(); err != nil {
			t.Fatalf("with MaxPending events waiting, Err() = %v, want nil", err)
		}
		b.Publish(4)
		if !errors.Is(s.Err(), bus.ErrOverflow) {
			t.Fatalf("with MaxPending+1 events, Err() = %v, want ErrOverflow", s.Err())
		}
		synctest.Wait()
		assertClosedNow(t, s)
	})
}

func TestMergedEventsCountOnceTowardsMaxPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := bus.New(bus.Options[ev]{Coalesce: joinDeltas, MaxPending: 2})
		defer b.Close()
		s := b.Subscribe(ctx)

		b.Publish(tool(0))
		synctest.Wait()
		for range 1000 {
			b.Publish(delta(1, "x"))
		}
		b.Publish(tool(1))
		if err := s.Err(); err != nil {
			t.Fatalf("1000 merged deltas and a tool event ended the subscription: %v", err)
		}
		b.Publish(tool(2))
		if !errors.Is(s.Err(), bus.ErrOverflow) {
			t.Fatalf("a third waiting entry: Err() = %v, want ErrOverflow", s.Err())
		}
	})
}

func TestCancelWhileOffering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		b := bus.New(bus.Options[int]{})
		defer b.Close()
		s := b.Subscribe(ctx)
		b.Publish(1)
		b.Publish(2)
		synctest.Wait()
		cancel()
		synctest.Wait()
		assertClosedNow(t, s)
		if !errors.Is(s.Err(), context.Canceled) {
			t.Fatalf("Err() = %v, want context.Canceled", s.Err())
		}
	})
}
