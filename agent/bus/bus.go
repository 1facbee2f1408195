package bus

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
)

// DefaultMaxPending is the MaxPending of a bus whose Options leave it zero.
const DefaultMaxPending = 4096

var (
	// ErrOverflow ends a subscription whose reader fell more than
	// MaxPending events behind. Its reader must reload what it shows from
	// the store and subscribe again.
	ErrOverflow = errors.New("bus: subscriber fell more than MaxPending events behind; reload from the store and subscribe again")

	// ErrClosed ends the subscriptions of a closed bus.
	ErrClosed = errors.New("bus: the bus is closed")

	errNilContext = errors.New("bus: Subscribe was given a nil context; pass a context that ends when the subscriber goes away")
)

// Options configure a Bus. The zero value is a bus that never merges events,
// allows DefaultMaxPending events per subscriber and logs nothing.
type Options[E any] struct {
	// Coalesce reports whether next may be merged into prev, an event still
	// waiting in a slow subscriber's queue, and returns the merged event.
	// The agent uses it to join adjacent text deltas of the same part. It
	// is called with the bus locked, once per lagging subscriber, so it must
	// be quick, must not call the bus, and must return a new value rather
	// than modify memory that prev or next share with other subscribers.
	// Nil never merges.
	Coalesce func(prev, next E) (E, bool)

	// MaxPending is the most events that may wait in one subscription's
	// queue (merged events count once, the event being offered on the
	// channel does not count). One more ends the subscription with
	// ErrOverflow. Zero or negative means DefaultMaxPending.
	MaxPending int

	// LastSeq is the sequence number of the last event published before this
	// bus existed, so that a resumed session continues its numbering from
	// what the store holds. Zero numbers events from 1.
	LastSeq uint64

	// Logger receives subscription starts, ends and overflows. Nil discards.
	Logger *slog.Logger
}

// Delivery is one event as a subscriber receives it. Seq is the event's
// sequence number; for events merged by Options.Coalesce it is the number of
// the newest one merged.
type Delivery[E any] struct {
	Seq   uint64
	Event E
}

// Bus orders published events of type E and delivers them to its
// subscriptions. It lives as long as the stream it orders (for darman, a
// session); its owner calls Close, which ends every subscription. All methods
// are safe for concurrent use.
//
// Every subscriber receives a copy of the same event value, so an event that
// holds pointers, slices or maps shares them: neither the publisher nor a
// subscriber may modify an event once it is published.
type Bus[E any] struct {
	coalesce   func(prev, next E) (E, bool)
	maxPending int
	logger     *slog.Logger
	running    sync.WaitGroup // one per subscription goroutine

	mu     sync.Mutex
	seq    uint64 // of the last published event
	lastID uint64 // of the last subscription, for logs
	subs   []*Subscription[E]
	closed bool
}

// New returns an open bus configured by opts.
func New[E any](opts Options[E]) *Bus[E] {
	b := &Bus[E]{
		coalesce:   opts.Coalesce,
		maxPending: opts.MaxPending,
		logger:     opts.Logger,
		seq:        opts.LastSeq,
	}
	if b.maxPending <= 0 {
		b.maxPending = DefaultMaxPending
	}
	if b.logger == nil {
		b.logger = slog.New(slog.DiscardHandler)
	}
	return b
}

// Publish gives e the next sequence number, queues it for every current
// subscription and returns the number. It never waits for subscribers. On a
// closed bus it does nothing and returns 0.
func (b *Bus[E]) Publish(e E) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	b.seq++
	d := Delivery[E]{Seq: b.seq, Event: e}
	someEnded := false
	for _, s := range b.subs {
		if !s.push(d, b.coalesce, b.maxPending) {
			someEnded = true
		}
	}
	if someEnded {
		b.subs = slices.DeleteFunc(b.subs, (*Subscription[E]).ended)
	}
	return b.seq
}

// Subscribe starts a subscription to the events published from now on (see
// Subscription.Since). It ends when ctx is done, when Unsubscribe is called
// or when the bus closes; on a closed bus it has already ended with
// ErrClosed, and given a nil ctx it has already ended with an error saying
// so.
func (b *Bus[E]) Subscribe(ctx context.Context) *Subscription[E] {
	s := &Subscription[E]{
		bus:    b,
		c:      make(chan Delivery[E]),
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		logger: b.logger,
	}
	if ctx == nil {
		s.endUnstarted(errNilContext)
		return s
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.endUnstarted(ErrClosed)
		return s
	}
	b.lastID++
	s.since = b.seq
	s.logger = b.logger.With("subscription", b.lastID)
	b.subs = append(b.subs, s)
	b.running.Add(1)
	go s.run(ctx)
	s.logger.Debug("bus: subscribed", "since", s.since)
	return s
}

// Close ends every subscription with ErrClosed and returns once their
// goroutines have exited. Later Publish calls return 0. Close may be called
// more than once.
func (b *Bus[E]) Close() {
	b.mu.Lock()
	subs := b.subs
	b.subs = nil
	b.closed = true
	b.mu.Unlock()
	for _, s := range subs {
		s.end(ErrClosed)
	}
	b.running.Wait()
}

// detach ends s with err and forgets it.
func (b *Bus[E]) detach(s *Subscription[E], err error) {
	s.end(err)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = slices.DeleteFunc(b.subs, func(x *Subscription[E]) bool { return x == s })
}
