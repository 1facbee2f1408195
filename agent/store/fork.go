package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
)

// Fork makes a new session of the conversation of session id before its
// user message at: the messages before it, with their parts, under a new
// session of the same workspace and model. It returns the new session and
// the text of the message at, which the user may edit and send again.
// The original session is not changed.
func (s *Store) Fork(ctx context.Context, id, at agent.ID) (agent.Session, string, error) {
	e, err := s.Export(ctx, id)
	if err != nil {
		return agent.Session{}, "", err
	}
	cut := -1
	for i, m := range e.Messages {
		if m.Message.ID == at {
			cut = i
			break
		}
	}
	if cut < 0 || e.Messages[cut].Message.Role != agent.RoleUser {
		return agent.Session{}, "", fmt.Errorf("session %s has no user message %s to fork at; pass the id of one of its prompts: %w", id, at, ErrNotFound)
	}
	var text []string
	for _, p := range e.Messages[cut].Parts {
		if p.Kind == agent.PartText {
			text = append(text, p.Shown())
		}
	}
	now := time.Now().UTC()
	sess := e.Session
	sess.ID, sess.ParentID, sess.Created, sess.Updated, sess.Messages = agent.NewSessionID(), "", now, now, cut
	sess.Usage, sess.Cost = agent.Usage{}, 0
	if sess.Title != "" {
		sess.Title += " (fork)"
	}
	out := &Export{Version: ExportVersion, Session: sess}
	for _, m := range e.Messages[:cut] {
		m.Message.SessionID = sess.ID
		parts := make([]agent.Part, len(m.Parts))
		for i, p := range m.Parts {
			p.SessionID = sess.ID
			parts[i] = p
		}
		sess.Usage, sess.Cost = sess.Usage.Add(m.Message.Usage), sess.Cost+m.Message.Cost
		out.Messages = append(out.Messages, agent.MessageWithParts{Message: m.Message, Parts: parts})
	}
	out.Session.Usage, out.Session.Cost = sess.Usage, sess.Cost
	if err := s.Import(ctx, out); err != nil {
		return agent.Session{}, "", err
	}
	return out.Session, strings.Join(text, "\n\n"), nil
}
