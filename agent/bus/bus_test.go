package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/darman-dev/darman/agent/bus"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds every wait for an eventual state; it is far above what a
// passing run needs and only turns a hang into a failure.
const patience = 20 * time.Second

// ev is a cut-down session event: text deltas of a part, which may merge,
// and tool events, which never do.
type ev struct {
	Kind string // "delta" or "tool"
	Part int
	Text string
}

func delta(part int, text string) ev { return ev{Kind: "delta", Part: part, Text: text} }
func tool(n int) ev                  { return ev{Kind: "tool", Part: n} }

func joinDeltas(prev, next ev) (ev, bool) {
	if prev.Kind != "delta" || next.Kind != "delta" || prev.Part != next.Part {
		return ev{}, false
	}
	return delta(prev.Part, prev.Text+next.Text), true
}

// recv returns the next delivery of s, and false if its channel closed.
func recv[E any](t *testing.T, s *bus.Subscription[E]) (bus.Delivery[E], bool) {
	t.Helper()
	select {
	case d, ok := <-s.C():
		return d, ok
	case <-time.After(patience):
		t.Fatalf("subscription neither delivered nor ended within %v", patience)
		return bus.Delivery[E]{}, false
	}
}

// readThrough reads s until it delivers sequence number last, failing if it
// ends first.
func readThrough[E any](t *testing.T, s *bus.Subscription[E], last uint64) []bus.Delivery[E] {
	t.Helper()
	var got []bus.Delivery[E]
	for {
		d, ok := recv(t, s)
		if !ok {
			t.Fatalf("subscription ended (err %v) after %d deliveries, before seq %d", s.Err(), len(got), last)
		}
		got = append(got, d)
		if d.Seq >= last {
			return got
		}
	}
}

// drain reads s until its channel closes.
func drain[E any](t *testing.T, s *bus.Subscription[E]) []bus.Delivery[E] {
	t.Helper()
	var got []bus.Delivery[E]
	for {
		d, ok := recv(t, s)
		if !ok {
			return got
		}
		got = append(got, d)
	}
}

// assertClosedNow fails unless s's channel is already closed.
func assertClosedNow[E any](t *testing.T, s *bus.Subscription[E]) {
	t.Helper()
	select {
	case d, ok := <-s.C():
		if ok {
			t.Fatalf("subscription delivered seq %d; want its channel closed", d.Seq)
		}
	default:
		t.Fatal("subscription channel still open; want it closed")
	}
}

// reader collects a subscription's deliveries on its own goroutine until
// sequence number last or the end of the subscription.
type reader[E any] struct {
	got  []bus.Delivery[E]
	done chan struct{}
}

func startReader[E any](s *bus.Subscription[E], last uint64) *reader[E] {
	r := &reader[E]{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for d := range s.C() {
			r.got = append(r.got, d)
			if d.Seq >= last {
				return
			}
		}
	}()
	return r
}

func (r *reader[E]) wait(t *testing.T) []bus.Delivery[E] {
	t.Helper()
	select {
	case <-r.done:
		return r.got
	case <-time.After(patience):
		t.Fatalf("reader not done within %v", patience)
		return nil
	}
}

func TestConcurrentPublishersGiveEverySubscriberOneOrder(t *testing.T) {
	const publishers, perPublisher = 4, 500
	const total = publishers * perPublisher
	type pubEv struct{ P, I int }
	b := bus.New(bus.Options[pubEv]{MaxPending: total})
	defer b.Close()

	var readers []*reader[pubEv]
	for range 3 {
		readers = append(readers, startReader(b.Subscribe(t.Context()), total))
	}
	seqs := make([][]uint64, publishers)
	var wg sync.WaitGroup
	for p := range publishers {
		seqs[p] = make([]uint64, perPublisher)
		wg.Go(func() {
			for i := range perPublisher {
				seqs[p][i] = b.Publish(pubEv{p, i})
			}
		})
	}
	wg.Wait()

	first := readers[0].wait(t)
	if len(first) != total {
		t.Fatalf("subscriber got %d deliveries, want %d", len(first), total)
	}
	next := make([]int, publishers)
	for k, d := range first {
		if d.Seq != uint64(k+1) {
			t.Fatalf("delivery %d has seq %d, want %d", k, d.Seq, k+1)
		}
		if want := seqs[d.Event.P][d.Event.I]; d.Seq != want {
			t.Fatalf("event %+v delivered with seq %d, but Publish returned %d", d.Event, d.Seq, want)
		}
		if d.Event.I != next[d.Event.P] {
			t.Fatalf("publisher %d: event %d delivered where %d was due", d.Event.P, d.Event.I, next[d.Event.P])
		}
		next[d.Event.P]++
	}
	for n, r := range readers[1:] {
		got := r.wait(t)
		if len(got) != len(first) {
			t.Fatalf("subscriber %d got %d deliveries, subscriber 0 got %d", n+1, len(got), len(first))
		}
		for k := range got {
			if got[k] != first[k] {
				t.Fatalf("subscriber %d delivery %d is %+v, subscriber 0 saw %+v", n+1, k, got[k], first[k])
			}
		}
	}
}

func TestSlowSubscriberGetsMergedDeltasWhileFastGetsAll(t *testing.T) {
	const parts, perPart = 10, 100
	const total = parts * perPart
	b := bus.New(bus.Options[ev]{Coalesce: joinDeltas, MaxPending: 16})
	defer b.Close()
	fast := b.Subscribe(t.Context())
	slow := b.Subscribe(t.Context())

	// The fast reader takes each event as soon as it is published; the
	// slow one reads nothing until the end.
	var all []bus.Delivery[ev]
	for p := range parts {
		for i := range perPart {
			seq := b.Publish(delta(p, fmt.Sprintf("%d.%d ", p, i)))
			d, ok := recv(t, fast)
			if !ok || d.Seq != seq {
				t.Fatalf("fast subscriber got (%+v, %v), want seq %d", d, ok, seq)
			}
			all = append(all, d)
		}
	}
	got := readThrough(t, slow, total)

	// One delivery per part, plus the first event if it was already on
	// its way to the channel when the others arrived.
	if len(got) > parts+1 {
		t.Errorf("slow subscriber got %d deliveries, want at most %d merged ones", len(got), parts+1)
	}
	var slowText, fastText strings.Builder
	fastUpTo := 0
	for _, d := range got {
		slowText.WriteString(d.Event.Text)
		for fastUpTo < int(d.Seq) {
			fastText.WriteString(all[fastUpTo].Event.Text)
			fastUpTo++
		}
		if slowText.String() != fastText.String() {
			t.Fatalf("slow text through seq %d is %q, the events up to it say %q", d.Seq, slowText.String(), fastText.String())
		}
		if d.Event.Part != all[d.Seq-1].Event.Part {
			t.Fatalf("merged delivery with seq %d is of part %d, event %d was of part %d", d.Seq, d.Event.Part, d.Seq, all[d.Seq-1].Event.Part)
		}
	}
	if err := slow.Err(); err != nil {
		t.Fatalf("slow subscription ended: %v", err)
	}
}

func TestSlowSubscriberKeepsEveryUnmergeableEventWithinMaxPending(t *testing.T) {
	// 32 tool events, each followed by deltas that merge into one entry:
	// at most 64 entries ever wait.
	const tools, deltasPerTool = 32, 5
	const total = tools * (1 + deltasPerTool)
	b := bus.New(bus.Options[ev]{Coalesce: joinDeltas, MaxPending: 2 * tools})
	defer b.Close()
	slow := b.Subscribe(t.Context())
	for n := range tools {
		b.Publish(tool(n))
		for i := range deltasPerTool {
			b.Publish(delta(n, fmt.Sprint(i)))
		}
	}

	got := readThrough(t, slow, total)
	nextTool := 0
	texts := map[int]string{}
	for _, d := range got {
		switch d.Event.Kind {
		case "tool":
			if d.Event.Part != nextTool {
				t.Fatalf("tool event %d delivered where %d was due", d.Event.Part, nextTool)
			}
			nextTool++
		case "delta":
			if d.Event.Part != nextTool-1 {
				t.Fatalf("delta of part %d delivered after tool event %d", d.Event.Part, nextTool-1)
			}
			texts[d.Event.Part] += d.Event.Text
		}
	}
	if nextTool != tools {
		t.Fatalf("slow subscriber got %d tool events, want %d", nextTool, tools)
	}
	for n := range tools {
		if texts[n] != "01234" {
			t.Errorf("part %d text is %q, want %q", n, texts[n], "01234")
		}
	}
	if err := slow.Err(); err != nil {
		t.Fatalf("subscription ended within MaxPending: %v", err)
	}
	seq := b.Publish(tool(99))
	if d, ok := recv(t, slow); !ok || d.Seq != seq {
		t.Fatalf("after catching up got (%+v, %v), want seq %d", d, ok, seq)
	}
}

func TestOverflowEndsOnlyTheSlowSubscription(t *testing.T) {
	const maxPending, total = 8, 200
	b := bus.New(bus.Options[int]{MaxPending: maxPending})
	defer b.Close()
	fast := b.Subscribe(t.Context())
	slow := b.Subscribe(t.Context())

	for i := range total {
		seq := b.Publish(i)
		if d, ok := recv(t, fast); !ok || d.Seq != seq || d.Event != i {
			t.Fatalf("fast subscriber got (%+v, %v), want seq %d event %d", d, ok, seq, i)
		}
	}
	got := drain(t, slow)
	if !errors.Is(slow.Err(), bus.ErrOverflow) {
		t.Fatalf("slow subscription Err() = %v, want ErrOverflow", slow.Err())
	}
	// Its queue is discarded; at most the event already offered on the
	// channel gets through.
	if len(got) > 1 || len(got) == 1 && got[0].Seq != 1 {
		t.Fatalf("overflowed subscription delivered %+v, want at most seq 1", got)
	}
	if err := fast.Err(); err != nil {
		t.Fatalf("fast subscription ended: %v", err)
	}
	seq := b.Publish(-1)
	if d, ok := recv(t, fast); !ok || d.Seq != seq {
		t.Fatalf("fast subscriber after the overflow got (%+v, %v), want seq %d", d, ok, seq)
	}
}

func TestPublishNeverWaitsForAReader(t *testing.T) {
	b := bus.New(bus.Options[int]{})
	defer b.Close()
	unread := b.Subscribe(t.Context())
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range 3 * bus.DefaultMaxPending {
			b.Publish(i)
		}
	}()
	select {
	case <-published:
	case <-time.After(patience):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	drain(t, unread)
	if !errors.Is(unread.Err(), bus.ErrOverflow) {
		t.Fatalf("unread subscription Err() = %v, want ErrOverflow", unread.Err())
	}
}

func TestSubscriptionGetsOnlyLaterEvents(t *testing.T) {
	b := bus.New(bus.Options[string]{})
	defer b.Close()
	for _, e := range []string{"a", "b", "c"} {
		b.Publish(e)
	}
	s := b.Subscribe(t.Context())
	if s.Since() != 3 {
		t.Fatalf("Since() = %d, want 3", s.Since())
	}
	b.Publish("d")
	b.Publish("e")
	got := readThrough(t, s, 5)
	want := []bus.Delivery[string]{{Seq: 4, Event: "d"}, {Seq: 5, Event: "e"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLastSeqContinuesNumbering(t *testing.T) {
	b := bus.New(bus.Options[string]{LastSeq: 41})
	defer b.Close()
	s := b.Subscribe(t.Context())
	if s.Since() != 41 {
		t.Fatalf("Since() = %d, want 41", s.Since())
	}
	if seq := b.Publish("x"); seq != 42 {
		t.Fatalf("first Publish returned %d, want 42", seq)
	}
	if d, _ := recv(t, s); d.Seq != 42 {
		t.Fatalf("delivered seq %d, want 42", d.Seq)
	}
}

func TestUnsubscribe(t *testing.T) {
	b := bus.New(bus.Options[int]{})
	defer b.Close()
	leaving := b.Subscribe(t.Context())
	staying := b.Subscribe(t.Context())
	blocked := b.Subscribe(t.Context()) // never read: its goroutine waits on C

	b.Publish(1)
	b.Publish(2)
	readThrough(t, leaving, 1)
	leaving.Unsubscribe()
	assertClosedNow(t, leaving)
	if err := leaving.Err(); err != nil {
		t.Fatalf("Err() after Unsubscribe = %v, want nil", err)
	}
	leaving.Unsubscribe()

	blocked.Unsubscribe()
	assertClosedNow(t, blocked)

	seq := b.Publish(3)
	got := readThrough(t, staying, seq)
	if len(got) != 3 {
		t.Fatalf("remaining subscriber got %v, want seqs 1 to 3", got)
	}
}

func TestContextEndsSubscription(t *testing.T) {
	b := bus.New(bus.Options[int]{})
	defer b.Close()

	ctx, cancel := context.WithCancel(t.Context())
	plain := b.Subscribe(ctx)
	why := errors.New("editor went away")
	ctx, cancelCause := context.WithCancelCause(t.Context())
	caused := b.Subscribe(ctx)
	other := b.Subscribe(t.Context())

	b.Publish(1)
	cancel()
	cancelCause(why)
	drain(t, plain)
	drain(t, caused)
	if !errors.Is(plain.Err(), context.Canceled) {
		t.Errorf("Err() after cancel = %v, want context.Canceled", plain.Err())
	}
	if !errors.Is(caused.Err(), why) {
		t.Errorf("Err() after cancel with cause = %v, want %v", caused.Err(), why)
	}
	seq := b.Publish(2)
	if got := readThrough(t, other, seq); len(got) != 2 {
		t.Fatalf("other subscriber got %v, want seqs 1 and 2", got)
	}
	plain.Unsubscribe()
	if !errors.Is(plain.Err(), context.Canceled) {
		t.Errorf("Unsubscribe after the end changed Err() to %v", plain.Err())
	}
}

func TestClose(t *testing.T) {
	b := bus.New(bus.Options[int]{})
	reading := b.Subscribe(t.Context())
	unread := b.Subscribe(t.Context())
	b.Publish(1)
	readThrough(t, reading, 1)
	b.Publish(2)
	b.Publish(3)

	b.Close()
	for _, s := range []*bus.Subscription[int]{reading, unread} {
		assertClosedNow(t, s)
		if !errors.Is(s.Err(), bus.ErrClosed) {
			t.Errorf("Err() after Close = %v, want ErrClosed", s.Err())
		}
	}
	if seq := b.Publish(4); seq != 0 {
		t.Errorf("Publish after Close returned %d, want 0", seq)
	}
	late := b.Subscribe(t.Context())
	assertClosedNow(t, late)
	if !errors.Is(late.Err(), bus.ErrClosed) {
		t.Errorf("Subscribe after Close: Err() = %v, want ErrClosed", late.Err())
	}
	late.Unsubscribe()
	reading.Unsubscribe()
	b.Close()
}

func TestSubscribeWithNilContextFails(t *testing.T) {
	b := bus.New(bus.Options[int]{})
	defer b.Close()
	var ctx context.Context
	s := b.Subscribe(ctx)
	assertClosedNow(t, s)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "nil context") {
		t.Fatalf("Err() = %v, want an error about the nil context", err)
	}
	s.Unsubscribe()
}

func TestEveryEndingLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := bus.New(bus.Options[int]{MaxPending: 2})
	ctx, cancel := context.WithCancel(t.Context())
	byContext := b.Subscribe(ctx)
	byUnsubscribe := b.Subscribe(t.Context())
	byOverflow := b.Subscribe(t.Context())
	byClose := b.Subscribe(t.Context())

	cancel()
	drain(t, byContext)
	byUnsubscribe.Unsubscribe()
	for i := range 5 {
		seq := b.Publish(i)
		readThrough(t, byClose, seq)
	}
	drain(t, byOverflow)
	if !errors.Is(byOverflow.Err(), bus.ErrOverflow) {
		t.Fatalf("Err() = %v, want ErrOverflow", byOverflow.Err())
	}
	b.Close()
	assertClosedNow(t, byClose)
}
