package client

import (
	"context"
	"sync"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/config"
)

// AudienceOf is who a session's turns are, for the servers they see: a
// session with a parent (one the task tool made) is the task agent
// (config.MCPAgentTask) working for that parent; any other session is the
// main agent (config.MCPAgentMain).
func AudienceOf(session, parent string) Audience {
	if parent != "" {
		return Audience{Session: session, Agent: config.MCPAgentTask, Parent: parent}
	}
	return Audience{Session: session, Agent: config.MCPAgentMain}
}

// SessionSource is the tool.Source of one turn of session: the tools of
// the servers visible to its audience (AudienceOf), as they are when the
// turn asks. parent reports the session's parent, "" for none; it is
// called once, at the first ask, since a session's parent never changes,
// and an error it returns is every ask's error.
func (m *Manager) SessionSource(session string, parent func(context.Context) (string, error)) tool.Source {
	return &sessionSource{m: m, session: session, parent: parent}
}

type sessionSource struct {
	m       *Manager
	session string
	parent  func(context.Context) (string, error)

	once     sync.Once
	audience Audience
	err      error
}

func (s *sessionSource) Tools(ctx context.Context) ([]tool.Tool, error) {
	s.once.Do(func() {
		parent, err := s.parent(ctx)
		s.audience, s.err = AudienceOf(s.session, parent), err
	})
	if s.err != nil {
		return nil, s.err
	}
	return s.m.ToolsFor(ctx, s.audience)
}
