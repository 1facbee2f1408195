package session

import (
	"context"
	"errors"
	"strings"

	"github.com/darman-dev/darman/agent"
)

// maxTitle bounds a session's title, in characters: it is shown on one
// line of a list.
const maxTitle = 200

// Rename sets a session's title, as lists show it. The title is trimmed
// and must not be empty or hold a line break; a running turn keeps
// running, and its first prompt no longer names the session.
func (s *Service) Rename(ctx context.Context, id agent.ID, title string) error {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return errors.New("the title is empty; give the session a name")
	case strings.ContainsAny(title, "\r\n"):
		return errors.New("the title has a line break; a title is one line")
	case len([]rune(title)) > maxTitle:
		return errors.New("the title is longer than 200 characters; shorten it")
	}
	s.records.Lock()
	defer s.records.Unlock()
	sess, err := s.opts.Store.Session(ctx, id)
	if err != nil {
		return err
	}
	sess.Title = title
	return s.opts.Store.PutSession(ctx, sess)
}
