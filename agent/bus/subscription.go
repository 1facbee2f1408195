package bus

import (
	"context"
	"log/slog"
	"sync"
)

// Subscription is one subscriber's view of a bus: the events published after
// it started, in order, on C. It is created by Bus.Subscribe and lives until
// Unsubscribe, the end of its context, the bus's Close, or an overflow;
// its goroutine is owned by the bus. Its methods are safe for concurrent use.
type Subscription[E any] struct {
	bus    *Bus[E]
	since  uint64
	logger *slog.Logger
	c      chan Delivery[E] // unbuffered: what waits, waits in queue
	notify chan struct{}    // one slot; filled when queue stops being empty
	done   chan struct{}    // closed when the subscription ends
	exited chan struct{}    // closed when run has closed c and returns

	mu    sync.Mutex
	queue []Delivery[E] // waiting events are queue[head:]
	head  int
	over  bool
	err   error
}

// C returns the channel that delivers the subscription's events in sequence
// order. It is closed when the subscription ends; Err then says why.
func (s *Subscription[E]) C() <-chan Delivery[E] { return s.c }

// Since returns the sequence number of the last event published before the
// subscription started. It delivers exactly the events numbered above it,
// some of them merged by Options.Coalesce.
func (s *Subscription[E]) Since() uint64 { return s.since }

// Err says why the subscription ended: ErrOverflow if its reader fell too
// far behind, ErrClosed if the bus closed, the context's cause if its context
// ended. It is nil while the subscription runs and after Unsubscribe.
func (s *Subscription[E]) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Unsubscribe ends the subscription, discarding what is still queued for it,
// and returns once its channel is closed. It may be called more than once and
// from any goroutine, including the one reading C.
func (s *Subscription[E]) Unsubscribe() {
	s.bus.detach(s, nil)
	<-s.exited
}

// push queues d, merging it into the last queued event when coalesce allows,
// and reports whether the subscription is still running. It ends the
// subscription with ErrOverflow when maxPending events already wait. The
// caller holds the bus's lock.
func (s *Subscription[E]) push(d Delivery[E], coalesce func(prev, next E) (E, bool), maxPending int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return false
	}
	waiting := len(s.queue) - s.head
	if waiting > 0 && coalesce != nil {
		last := &s.queue[len(s.queue)-1]
		if merged, ok := coalesce(last.Event, d.Event); ok {
			*last = Delivery[E]{Seq: d.Seq, Event: merged}
			return true
		}
	}
	if waiting >= maxPending {
		s.logger.Warn("bus: subscriber fell behind; ending its subscription",
			"seq", d.Seq, "maxPending", maxPending)
		s.endLocked(ErrOverflow)
		return false
	}
	if len(s.queue) == cap(s.queue) && s.head > 0 && s.head >= waiting {
		// At least half the slice is delivered events: reuse their space
		// rather than grow. Waiting for half keeps the copying amortised
		// O(1) per event.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue = s.queue[:n]
		s.head = 0
	}
	s.queue = append(s.queue, d)
	if waiting == 0 {
		select {
		case s.notify <- struct{}{}:
		default: // run has a wake-up pending already
		}
	}
	return true
}

// pop takes the oldest waiting event, if any.
func (s *Subscription[E]) pop() (Delivery[E], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over || s.head == len(s.queue) {
		return Delivery[E]{}, false
	}
	d := s.queue[s.head]
	s.queue[s.head] = Delivery[E]{} // let the event be collected once read
	s.head++
	if s.head == len(s.queue) {
		s.queue = s.queue[:0]
		s.head = 0
	}
	return d, true
}

// run moves queued events to c until the subscription ends.
func (s *Subscription[E]) run(ctx context.Context) {
	defer s.bus.running.Done()
	defer close(s.exited)
	defer close(s.c)
	for {
		d, ok := s.pop()
		if !ok {
			select {
			case <-s.notify:
				continue
			case <-s.done:
				return
			case <-ctx.Done():
				s.bus.detach(s, context.Cause(ctx))
				return
			}
		}
		select {
		case s.c <- d:
		case <-s.done:
			return
		case <-ctx.Done():
			s.bus.detach(s, context.Cause(ctx))
			return
		}
	}
}

func (s *Subscription[E]) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}

// end ends the subscription with err unless it has ended already.
func (s *Subscription[E]) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(err)
}

func (s *Subscription[E]) endLocked(err error) {
	if s.over {
		return
	}
	s.over = true
	s.err = err
	s.queue, s.head = nil, 0
	close(s.done)
	s.logger.Debug("bus: subscription ended", "err", err)
}

// endUnstarted ends a subscription whose goroutine was never started.
func (s *Subscription[E]) endUnstarted(err error) {
	s.endLocked(err)
	close(s.c)
	close(s.exited)
}
