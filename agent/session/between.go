package session

import (
	"context"
	"time"

	"github.com/darman-dev/darman/agent"
)

// hold is a between-turns action of a session (Service.Between): while it
// is in Service.holds, Start waits and other actions queue; free is closed
// once it is done.
type hold struct{ free chan struct{} }

// Between runs do for session id between its turns, for a front's work
// that must not overlap a turn: restoring files (revert, redo, fork),
// deleting the session, changing its agent or moving it elsewhere. It
// fails with ErrBusy, without calling do, when a turn runs; while do
// runs, a Start of the session waits for it to return, so no turn begins
// halfway through. One session's actions run one after another; do must
// not start a turn of the session or call Between for it. Between returns
// do's error, or ctx's when it ends while waiting for another action.
func (s *Service) Between(ctx context.Context, id agent.ID, do func() error) error {
	return s.between(ctx, id, false, do)
}

// AfterTurn runs do for session id as Between does, but first cancels the
// session's running turn, if any, and waits until it has ended and its
// last event was passed to its Turn.Events.
func (s *Service) AfterTurn(ctx context.Context, id agent.ID, do func() error) error {
	return s.between(ctx, id, true, do)
}

func (s *Service) between(ctx context.Context, id agent.ID, cancel bool, do func() error) error {
	h, err := s.hold(ctx, id)
	if err != nil {
		return err
	}
	defer s.unhold(id, h)
	for {
		s.mu.Lock()
		l := s.live[id]
		if l == nil || l.cancel == nil {
			s.mu.Unlock()
			break
		}
		if !cancel {
			s.mu.Unlock()
			return ErrBusy
		}
		l.cancel()
		ended := l.ended
		s.mu.Unlock()
		var wait <-chan time.Time
		if !open(ended) {
			// Not a turn that holds the session but what takes it as one
			// does (Apply), which lets it go soon once cancelled.
			wait, ended = time.After(10*time.Millisecond), nil
		}
		select {
		case <-wait:
		case <-ended:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return do()
}

// hold makes a between-turns action the session's, once the one before
// it is done.
func (s *Service) hold(ctx context.Context, id agent.ID) (*hold, error) {
	for {
		s.mu.Lock()
		if s.holds == nil {
			s.holds = map[agent.ID]*hold{}
		}
		h := s.holds[id]
		if h == nil {
			h = &hold{free: make(chan struct{})}
			s.holds[id] = h
			s.mu.Unlock()
			return h, nil
		}
		s.mu.Unlock()
		select {
		case <-h.free:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Service) unhold(id agent.ID, h *hold) {
	s.mu.Lock()
	delete(s.holds, id)
	s.mu.Unlock()
	close(h.free)
}

// open reports whether c is a channel not closed yet.
func open(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return false
	default:
		return true
	}
}
