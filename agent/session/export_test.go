package session

import (
	"context"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/bus"
)

// Subscribe is, for the tests, a subscription to a session's events from
// now on, those published outside a turn included (Shell's question);
// the fronts hear a turn's through Turn.Events.
func (s *Service) Subscribe(ctx context.Context, id agent.ID) (*bus.Subscription[agent.Event], error) {
	l, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.bus.Subscribe(ctx), nil
}
