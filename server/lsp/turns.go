package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/progress"
)

// errBusy is darman.prompt's answer while the session runs a turn (the
// service's session.ErrBusy, with the command that cancels it).
var errBusy = errors.New("a turn is already running in this session; cancel it (darman.cancel) or wait for it to finish")

// liveTurn is one darman.prompt or darman.command.run, which the agent's
// session service runs (session.Service.Start); the server follows it
// until its end.
type liveTurn struct {
	id      string // the turnId, also the progress token
	session agent.ID
	agent   *Agent // the agent that runs it
	title   string // the prompt's first line, for progress and messages
	// ended is closed once the turn's last event was passed on.
	ended     chan struct{}
	endedOnce sync.Once
	progress  *progress.Progress // nil when the client gets no progress for it
	// released is set, under Server.mu, once the session let go of the
	// turn: it is no longer the session's running one.
	released bool
}

func (t *liveTurn) markEnded() { t.endedOnce.Do(func() { close(t.ended) }) }

// cancel stops the turn; it ends as cancelled.
func (t *liveTurn) cancel() { t.agent.Sessions.Cancel(t.session) }

// live is what the server holds for a session it relays.
type live struct {
	relay *relay
	// turn is the running turn, to cancel, to relay and to name by its
	// turnId; nil when idle. Whether a turn runs is the session service's
	// to say (Sessions.Busy, session.ErrBusy).
	turn *liveTurn
}

// liveOf returns the server's state of a session, making it on first use.
// s.mu must be held.
func (s *Server) liveOf(id agent.ID) *live {
	if s.live == nil {
		s.live = map[agent.ID]*live{}
	}
	l := s.live[id]
	if l == nil {
		l = &live{}
		s.live[id] = l
	}
	return l
}

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

// runningTurn returns the session's running turn, or nil.
func (s *Server) runningTurn(id agent.ID) *liveTurn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.live[id]; l != nil {
		return l.turn
	}
	return nil
}

// runningTurns are the turns running now, in no particular order.
func (s *Server) runningTurns() []*liveTurn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*liveTurn
	for _, l := range s.live {
		if l.turn != nil {
			out = append(out, l.turn)
		}
	}
	return out
}

// findTurn returns a running turn that match accepts, or nil.
func (s *Server) findTurn(match func(*liveTurn) bool) *liveTurn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.live {
		if l.turn != nil && match(l.turn) {
			return l.turn
		}
	}
	return nil
}

// between runs do, the command name's work, between the session's turns
// (Sessions.Between): it fails when a turn runs, and no turn starts while
// do runs.
func (s *Server) between(ctx context.Context, a *Agent, name string, id agent.ID, do func() error) error {
	err := a.Sessions.Between(ctx, id, do)
	if errors.Is(err, session.ErrBusy) {
		return errors.New(name + ": the session is running a turn; cancel it (darman.cancel) or wait for it to end")
	}
	return err
}

// startTurn starts the turn tn of session tn.Session and returns once it
// has begun; title names it in progress and messages.
func (s *Server) startTurn(ctx context.Context, a *Agent, tn session.Turn, title string) (*liveTurn, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, errors.New("the server is shutting down")
	}
	id := tn.Session
	t := &liveTurn{id: newTurnID(), session: id, agent: a, title: titleOf(title), ended: make(chan struct{})}
	r, err := s.relayOf(ctx, a, id)
	if err != nil {
		return nil, err
	}
	if !s.client.opt.SessionUpdates {
		if s.client.progress() {
			t.progress = s.startProgress(t)
		}
		if s.transcriptOn() {
			s.goOwned(func() { s.openTranscript(s.ctx, a, id) })
		}
	}
	tn.ID = t.id // the turn can be reverted by its turnId
	tn.Events = func(u session.Update) {
		if u.Last {
			// The session may take its next prompt from now on, so free
			// it before the client hears that the turn ended.
			s.releaseTurn(t)
		}
		r.handle(t.id, t.progress, u)
		if u.Question != nil {
			// Asked here, in the session's order: after the tool call it
			// is about, and before whatever the session publishes next.
			s.askOnStream(t, u.Question)
		}
		if u.Last {
			t.markEnded()
		}
	}
	tn.Questions = true // the relay asks them, in the stream's order
	tn.Dropped = func() {
		// The client fell behind by thousands of events: say what was
		// lost; the turn's updates go on from now.
		s.log.Warn("lsp: the client fell behind a session's updates; some were dropped", "session", id)
		r.notice("warning", "some updates were dropped because the editor fell behind; reload the session to see all of it")
	}
	// The turn belongs to the server, not to the request that started it.
	running, err := a.Sessions.Start(s.ctx, tn)
	if err != nil {
		s.endTurn(t)
		if errors.Is(err, session.ErrBusy) {
			return nil, errBusy
		}
		return nil, err
	}
	s.mu.Lock()
	if !t.released { // else it has ended already
		s.liveOf(id).turn = t
	}
	s.mu.Unlock()
	s.goOwned(func() {
		defer s.endTurn(t)
		running.Wait()
	})
	return t, nil
}

// releaseTurn marks the turn no longer the session's running one.
func (s *Server) releaseTurn(t *liveTurn) {
	s.mu.Lock()
	t.released = true
	if l := s.live[t.session]; l != nil && l.turn == t {
		l.turn = nil
	}
	s.mu.Unlock()
}

// endTurn is the last thing a turn's goroutine does.
func (s *Server) endTurn(t *liveTurn) {
	s.releaseTurn(t)
	t.markEnded()
	if t.progress != nil {
		// The relay ended it with the turn's outcome already, unless the
		// session's events stopped coming (the server is stopping).
		t.progress.End("cancelled")
	}
}

// cancelTurn cancels the session's running turn and reports whether there
// was one.
func (s *Server) cancelTurn(id agent.ID) bool {
	t := s.runningTurn(id)
	if t == nil {
		return false
	}
	t.cancel()
	return true
}

// startProgress starts the work-done progress of turn t
// (server/lsp/internal/progress), on the server's connection.
func (s *Server) startProgress(t *liveTurn) *progress.Progress {
	p := progress.New(s.ctx, progressConn{s}, s.log, t.id, t.title)
	s.goOwned(p.Run)
	return p
}

// progressConn is the server's connection as progress uses it: calls
// with the server's timeout for requests to the editor.
type progressConn struct{ s *Server }

func (c progressConn) Call(ctx context.Context, method string, params, result any) error {
	return c.s.call(ctx, 0, method, params, result)
}

func (c progressConn) Notify(ctx context.Context, method string, params any) error {
	return c.s.conn.Notify(ctx, method, params)
}

// workDoneProgressCancel cancels the turn whose progress the user
// cancelled in the editor.
func (s *Server) workDoneProgressCancel(_ context.Context, raw json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	token := string(p.Token)
	if unq, err := strconv.Unquote(token); err == nil {
		token = unq
	}
	if found := s.findTurn(func(t *liveTurn) bool { return t.id == token }); found != nil {
		s.log.Info("lsp: the user cancelled the turn from its progress", "turn", token)
		found.cancel()
	}
	return nil
}

func newTurnID() string {
	return "turn_" + strings.TrimPrefix(string(agent.NewPartID()), agent.PartPrefix)
}

func titleOf(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return line
}
