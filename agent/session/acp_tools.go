package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool"
)

// PromptWithTools is PromptWith for a turn that offers the model tools of
// the session's own besides the service's: the ACP front binds the MCP
// servers a client names for one session, and runs bash in that client's
// terminal. A tool of extra replaces the service's tool of the same name;
// the others come after the service's, in order. Sub-tasks of the turn get
// them too.
func (s *Service) PromptWithTools(ctx context.Context, id agent.ID, text string, opts PromptOptions, extra []tool.Tool) (agent.Message, error) {
	if strings.TrimSpace(text) == "" {
		return agent.Message{}, errors.New("the prompt is empty")
	}
	if opts.Model != "" {
		if _, _, err := s.opts.Models(opts.Model); err != nil {
			return agent.Message{}, fmt.Errorf("the turn's model %q: %w", opts.Model, err)
		}
	}
	l, err := s.get(ctx, id)
	if err != nil {
		return agent.Message{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if l.cancel != nil {
		s.mu.Unlock()
		return agent.Message{}, ErrBusy
	}
	l.cancel = cancel
	s.turns.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		l.cancel = nil
		s.mu.Unlock()
		s.turns.Done()
	}()
	t := &turn{svc: s, live: l, id: id, modelRef: opts.Model, tools: withTools(s.tools(), extra)}
	return t.run(ctx, text)
}

// withTools is base with extra over it: a tool of extra takes the place of
// base's tool of the same name, the rest are appended.
func withTools(base, extra []tool.Tool) []tool.Tool {
	out := slices.Clone(base)
	for _, tl := range extra {
		name := tl.Info().Name
		i := slices.IndexFunc(out, func(b tool.Tool) bool { return b.Info().Name == name })
		if i >= 0 {
			out[i] = tl
			continue
		}
		out = append(out, tl)
	}
	return out
}
