package acp

import (
	"context"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/server/internal/acpupdate"
)

// Trust is what the agent made of its folder's own configuration, and how
// the user changes it (see tellTrust).
type Trust struct {
	// Notice is the one line said when the folder's widening settings
	// were left out; "" when none were.
	Notice string
	// Question is the folder's summary, asked once per folder; "" when
	// nothing is to be asked (trusted, or never).
	Question string
	// Record keeps the user's answer (never false: trusted). Once it is
	// trusted, the server starts the folder's agent again, which reads
	// its configuration with trust, and moves the sessions to it.
	Record func(ctx context.Context, never bool) error
}

// tellTrust runs after a session/new answer: the first session of an
// untrusted folder asks, through session/request_permission, whether to
// trust it; later ones, and a folder already decided, get the one line.
func (s *Server) tellTrust(ctx context.Context, e *agentEntry, ls *liveSession) {
	t := e.agent.Trust()
	if t.Notice == "" {
		return
	}
	e.mu.Lock()
	ask := t.Question != "" && t.Record != nil && !e.trustAsked
	e.trustAsked = true
	e.mu.Unlock()
	say := func(text string) {
		ls.send(notice(text))
	}
	if !ask {
		say(t.Notice)
		return
	}
	// The question outlives the session/new request; the server's close
	// waits for it (the connection's end ends the question).
	ctx = context.WithoutCancel(ctx)
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		reply, err := (&asker{s: s, id: ls.id}).Ask(ctx, permission.Request{Permission: "workspace_trust", Title: "Trust this folder's configuration?",
			Reasons: []string{t.Question}})
		if err != nil {
			say(t.Notice)
			return
		}
		switch reply.Answer {
		case permission.AllowOnce, permission.AllowAlways:
			if err := t.Record(ctx, false); err != nil {
				say("the folder could not be trusted: " + err.Error())
				return
			}
			if err := s.retrust(ctx, e); err != nil {
				say("this folder is trusted, but darman could not start with its configuration: " + err.Error() + "; its sessions keep the settings they began with")
				return
			}
			say("this folder is trusted; its configuration applies now, from the next prompt of each of its sessions")
		case permission.RejectAlways:
			if err := t.Record(ctx, true); err != nil {
				say(err.Error())
				return
			}
			say(t.Notice)
		default:
			say(t.Notice)
		}
	}()
}

// notice is a darman notice as a session update, as the turns' notices
// are shown.
func notice(s string) update {
	return update{SessionUpdate: acpupdate.AgentMessageChunk, Content: text(noticeText(s))}
}
