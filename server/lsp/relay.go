package lsp

import (
	"context"
	"strings"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/update"
)

// relay passes one session's events to the client: as darman/sessionUpdate
// notifications to a client that opted in, and otherwise through the
// fallbacks (progress, the transcript file, error messages). The session
// service hands it each turn's events in the session's order (see
// session.Turn.Events), its permission questions among them, which it
// asks in that order (askOnStream); one relay serves a session the client has used,
// from then until the server stops or the session is deleted, and keeps
// its transcript current.
type relay struct {
	s       *Server
	a       *Agent
	session agent.ID
	done    chan struct{} // closed when run returns
	stop    context.CancelFunc

	mu    sync.Mutex
	dirty bool // the transcript is behind the session
}

// transcriptEvery is how often a transcript being watched is rewritten
// while its session changes.
const transcriptEvery = 300 * time.Millisecond

// relayOf returns the session's relay, starting it on first use.
func (s *Server) relayOf(ctx context.Context, a *Agent, id agent.ID) (*relay, error) {
	s.mu.Lock()
	if r := s.liveOf(id).relay; r != nil && r.a == a {
		s.mu.Unlock()
		return r, nil
	}
	s.mu.Unlock()
	if _, err := a.Store.Session(ctx, id); err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(s.ctx)
	s.mu.Lock()
	l := s.liveOf(id)
	if l.relay != nil && l.relay.a == a { // another request started one meanwhile
		s.mu.Unlock()
		stop()
		return l.relay, nil
	}
	// A relay of an agent the settings replaced has no turn left to
	// pass on (the session's turn would be running): it is retired.
	old := l.relay
	r := &relay{s: s, a: a, session: id, done: make(chan struct{}), stop: stop}
	l.relay = r
	s.mu.Unlock()
	if old != nil {
		old.stop()
	}
	s.goOwned(func() { r.run(rctx) })
	return r, nil
}

// run rewrites the transcript while the session changes, until ctx ends.
func (r *relay) run(ctx context.Context) {
	defer close(r.done)
	defer r.stop()
	tick := time.NewTicker(transcriptEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.mu.Lock()
			dirty := r.dirty
			r.dirty = false
			r.mu.Unlock()
			if dirty {
				r.s.writeTranscript(ctx, r.a, r.session)
			}
		}
	}
}

// handle passes one event of turn t on.
func (r *relay) handle(t *turn, u session.Update) {
	e := u.Event
	// A sub-task's events come with its parent's: they are shown as part
	// of the parent's turn, but its own beginning and end are not the
	// parent's.
	own := e.SessionID == r.session && e.ParentCallID == ""
	if !own && (e.Kind == agent.EventState || e.Kind == agent.EventUserMessage) {
		return
	}
	turnID := t.id
	opted := r.s.client.opt.SessionUpdates
	last := u.Last
	if last {
		// The session may take its next prompt from now on, so free it
		// before the client hears that the turn ended.
		r.s.releaseTurn(t)
	}
	if opted {
		for _, u := range update.Of(e) {
			r.s.notifyUpdate(r.session, turnID, u)
		}
	}
	if e.Kind == agent.EventNotice {
		r.s.showMessage(protocol.MessageTypeWarning, "darman: "+e.Text)
	}
	if r.s.client.opt.OpenDiff && e.Kind == agent.EventToolCallUpdate && e.Tool != nil &&
		e.Tool.Status == agent.ToolCompleted && e.Tool.Diff != nil {
		r.s.openDiff(e.Tool)
	}
	if !opted {
		if r.s.transcriptOn() {
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
		}
		if t.progress != nil && e.Kind == agent.EventToolCallUpdate && e.Tool != nil && e.Tool.Status == agent.ToolRunning {
			title := e.Tool.Title
			if title == "" {
				title = e.Tool.Name
			}
			t.progress.Report("running " + title)
		}
		if t.progress != nil && e.Kind == agent.EventPermission && e.Permission != nil && e.Permission.Answer == "" {
			p := e.Permission
			what := p.Title
			if what == "" {
				what = p.Permission + " " + strings.Join(p.Subjects, ", ")
			}
			t.progress.Report("waiting for your permission: " + what)
		}
	}
	if u.Question != nil {
		// Asked here, in the session's order: after the tool call it is
		// about, and before whatever the session publishes next.
		r.s.askOnStream(t, u.Question)
	}
	if !last {
		return
	}
	state := update.StateOf(e)
	if !opted {
		// The transcript is complete before the client hears the end.
		r.mu.Lock()
		dirty := r.dirty
		r.dirty = false
		r.mu.Unlock()
		if dirty {
			r.s.writeTranscript(context.WithoutCancel(r.s.ctx), r.a, r.session)
		}
		msg := "done"
		switch state {
		case update.StateFailed:
			msg = "failed: " + e.Reason
			r.s.showMessage(protocol.MessageTypeError, "darman: the turn failed: "+e.Reason)
		case update.StateCancelled:
			msg = "cancelled"
		}
		if t.progress != nil {
			t.progress.End(msg)
		}
	}
	t.markEnded()
}

// notice sends a notice update to a client that takes updates, and a log
// line to others.
func (r *relay) notice(level, msg string) {
	if r.s.client.opt.SessionUpdates {
		r.s.notifyUpdate(r.session, "", update.Notice(level, msg))
		return
	}
	r.s.logMessage(protocol.MessageTypeWarning, "darman: "+msg)
}
