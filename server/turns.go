package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
)

// errBusy is darman.prompt's answer while the session runs a turn.
var errBusy = errors.New("a turn is already running in this session; cancel it (darman.cancel) or wait for it to finish")

// turn is one darman.prompt or darman.command.run: a Prompt call on its own
// goroutine, owned by the server.
type turn struct {
	id      string // the turnId, also the progress token
	session agent.ID
	agent   *Agent // the agent that runs it
	title   string // the prompt's first line, for progress and messages
	cancel  context.CancelFunc
	// ended is closed by the session's relay once it has passed on the
	// turn's last event.
	ended     chan struct{}
	endedOnce sync.Once
	progress  *progress // nil when the client gets no progress for it
}

func (t *turn) markEnded() { t.endedOnce.Do(func() { close(t.ended) }) }

// live is what the server holds for a session it relays.
type live struct {
	relay *relay
	turn  *turn // the running turn; nil when idle
	// prompting is closed when the last turn's Prompt call has returned.
	// The relay ends a turn as soon as its last event is out, so the
	// client may start the next one a moment before the agent's call
	// returns; the next turn waits for it instead of being refused.
	prompting chan struct{}
}

// turnKey carries the running turn in the context given to Prompt, so the
// permission asker knows which session and turn a question comes from:
// the agent's Asker interface does not say.
type turnKey struct{}

// turnOf returns the turn whose Prompt ctx belongs to, or nil.
func turnOf(ctx context.Context) *turn {
	t, _ := ctx.Value(turnKey{}).(*turn)
	return t
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

// runningTurn returns the session's running turn, or nil.
func (s *Server) runningTurn(id agent.ID) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.live[id]; l != nil {
		return l.turn
	}
	return nil
}

// startTurn starts a turn of session id with text as the user's message
// and returns at once; the turn runs on.
func (s *Server) startTurn(ctx context.Context, a *Agent, id agent.ID, text string, opts session.PromptOptions) (*turn, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the prompt is empty")
	}
	if err := s.ctx.Err(); err != nil {
		return nil, errors.New("the server is shutting down")
	}
	t := &turn{id: newTurnID(), session: id, agent: a, title: titleOf(text), ended: make(chan struct{})}
	s.mu.Lock()
	l := s.liveOf(id)
	if l.turn != nil {
		s.mu.Unlock()
		return nil, errBusy
	}
	l.turn = t
	previous := l.prompting
	prompting := make(chan struct{})
	l.prompting = prompting
	s.mu.Unlock()

	r, err := s.relayOf(ctx, a, id)
	if err != nil {
		close(prompting)
		s.endTurn(t)
		return nil, err
	}
	turnCtx, cancel := context.WithCancel(context.WithValue(s.ctx, turnKey{}, t))
	t.cancel = cancel
	if !s.client.opt.SessionUpdates {
		if s.client.progress() {
			t.progress = s.startProgress(t)
		}
		if s.transcriptOn() {
			s.goOwned(func() { s.openTranscript(s.ctx, a, id) })
		}
	}
	s.goOwned(func() {
		defer cancel()
		defer s.endTurn(t)
		if previous != nil {
			<-previous
		}
		_, err := a.Sessions.PromptWith(turnCtx, id, text, opts)
		close(prompting)
		if err != nil {
			// The turn did not start, so the session published nothing:
			// report its failure the way its last event would.
			s.turnFailed(t, err)
			return
		}
		select {
		case <-t.ended:
		case <-r.done:
		}
	})
	return t, nil
}

// releaseTurn frees the session for its next turn.
func (s *Server) releaseTurn(t *turn) {
	s.mu.Lock()
	if l := s.live[t.session]; l != nil && l.turn == t {
		l.turn = nil
	}
	s.mu.Unlock()
}

// endTurn is the last thing a turn's goroutine does.
func (s *Server) endTurn(t *turn) {
	s.releaseTurn(t)
	if t.progress != nil {
		// The relay ended it with the turn's outcome already, unless the
		// session's events stopped coming (the server is stopping).
		t.progress.end("cancelled")
	}
}

// turnFailed reports a turn that could not start.
func (s *Server) turnFailed(t *turn, err error) {
	s.log.Warn("lsp: the turn did not start", "session", t.session, "turn", t.id, "err", err)
	if s.client.opt.SessionUpdates {
		s.notifyUpdate(t.session, t.id, update{SessionUpdate: "state_update", State: stateFailed, Error: &updateError{Code: "turn_failed", Message: err.Error()}})
		return
	}
	if t.progress != nil {
		t.progress.end("failed: " + err.Error())
	}
	s.showMessage(protocol.MessageTypeError, "darman: the turn failed: "+err.Error())
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

// notifyUpdate sends one darman/sessionUpdate.
func (s *Server) notifyUpdate(id agent.ID, turnID string, u update) {
	err := s.conn.Notify(s.ctx, "darman/sessionUpdate", sessionUpdateParams{SessionID: string(id), TurnID: turnID, Update: u})
	if err != nil {
		s.log.Debug("lsp: session update not sent", "session", id, "err", err)
	}
}

// openDiffParams are darman/openDiff's: the client shows the change in a
// diff view (the VS Code extension uses vscode.diff).
type openDiffParams struct {
	URI     string `json:"uri"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Title   string `json:"title"`
}

// openDiff asks a client that opted in to show the change a tool call made.
func (s *Server) openDiff(call *agent.ToolCall) {
	d := call.Diff
	title := call.Title
	if title == "" {
		title = call.Name + " " + d.Path
	}
	err := s.conn.Notify(s.ctx, "darman/openDiff", openDiffParams{URI: pathToURI(d.Path), OldText: d.OldText, NewText: d.NewText, Title: title})
	if err != nil {
		s.log.Debug("lsp: openDiff not sent", "path", d.Path, "err", err)
	}
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

// sessionArg checks a sessionId argument.
func sessionArg(id string) (agent.ID, error) {
	if err := agent.ID(id).Validate(agent.SessionPrefix); err != nil {
		return "", fmt.Errorf("sessionId: %w", err)
	}
	return agent.ID(id), nil
}
