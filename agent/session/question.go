package session

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/bus"
	"github.com/darman-dev/darman/agent/permission"
)

// Question is a question of a turn whose front answers its questions on
// the turn's stream (Turn.Questions): a permission question (the turn's
// own, a command's !`cmd` inside it, or a sub-task's, Request.Child), or
// an MCP server's request for input during one of the turn's tool calls
// (Elicitation). It comes as the Update of the question's event
// (agent.EventPermission with no Answer, agent.EventElicitation with no
// Action), so every update published before it has reached Turn.Events
// first, and the front shows it in that order. The asking tool waits
// until Answer (AnswerElicitation) is called or the question's context
// ends.
type Question struct {
	// Request is the permission asked; its Session is the turn's session.
	// Zero for an elicitation.
	Request permission.Request
	// Elicitation, when set, is an MCP server's request for the user's
	// input (a form, a URL to open); the front answers it with
	// AnswerElicitation, as a permission.Elicitor would.
	Elicitation *permission.Elicitation

	ctx   context.Context
	id    string // the event's RequestID
	n     int    // asked n-th in the session
	event agent.Event
	reply chan given // buffered: the first answer wins
	// passed is set once the question went to Turn.Events.
	passed bool
}

type given struct {
	reply  permission.Reply
	elicit permission.ElicitAnswer
	err    error
}

// Context is the asking call's: it ends when the question no longer
// waits (the turn was cancelled, the service closed). A front asks its
// client under it, so that its request is withdrawn with the question.
func (q *Question) Context() context.Context { return q.ctx }

// Answer gives the question its answer, or the error that kept the user
// from answering (the connection broke); the first call wins, later ones
// do nothing. Safe for concurrent use and after the question stopped
// waiting.
func (q *Question) Answer(r permission.Reply, err error) {
	select {
	case q.reply <- given{reply: r, err: err}:
	default:
	}
}

// AnswerElicitation gives an elicitation its answer, or the error that
// kept the user from answering (permission.ErrNoHuman: nobody can; the
// server is told decline); like Answer, the first call wins.
func (q *Question) AnswerElicitation(a permission.ElicitAnswer, err error) {
	select {
	case q.reply <- given{elicit: a, err: err}:
	default:
	}
}

// questions are the open questions of the turn whose front answers them
// on its stream; a session's is set while such a turn runs (launch). Safe
// for concurrent use.
type questions struct {
	mu   sync.Mutex
	open map[string]*Question
}

func (qs *questions) add(q *Question) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.open == nil {
		qs.open = map[string]*Question{}
	}
	qs.open[q.id] = q
}

func (qs *questions) remove(q *Question) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	delete(qs.open, q.id)
}

// pass returns the open question the delivered event asks, marking it
// passed; nil when the event asks none.
func (qs *questions) pass(e agent.Event) *Question {
	var id string
	switch {
	case e.Kind == agent.EventPermission && e.Permission != nil && e.Permission.Answer == "":
		id = e.Permission.RequestID
	case e.Kind == agent.EventElicitation && e.Elicitation != nil && e.Elicitation.Action == "":
		id = e.Elicitation.RequestID
	default:
		return nil
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.open[id]
	if q == nil || q.passed {
		return nil
	}
	q.passed = true
	return q
}

// unpassed returns, in the order they were asked, the open questions whose
// events the stream lost (an overflow), marking them passed: their events
// come again with them, so that no question waits for an event that will
// never reach the front.
func (qs *questions) unpassed() []*Question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	var out []*Question
	for _, q := range qs.open {
		if !q.passed {
			q.passed = true
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *Question) int { return a.n - b.n })
	return out
}

// onStream asks req, as event e, on the stream of the turn that answers
// its questions there (qs, nil when none runs), and waits for its answer;
// false when no such turn runs: the question is then inner's.
func (a *eventAsker) onStream(ctx context.Context, qs *questions, req permission.Request, n int, e agent.Event) (given, bool) {
	if qs == nil {
		return given{}, false
	}
	q := &Question{Request: req, ctx: ctx, id: e.Permission.RequestID, n: n, event: e, reply: make(chan given, 1)}
	qs.add(q)
	defer qs.remove(q)
	a.bus.Publish(e)
	a.notify(ctx, req)
	select {
	case got := <-q.reply:
		return got, true
	case <-ctx.Done():
		return given{err: ctx.Err()}, true
	}
}

// streaming reports whether a turn that answers the session's questions
// on its stream runs (then elicit asks there).
func (a *eventAsker) streaming() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stream != nil
}

// elicit asks e, an MCP server's request for input during the tool call
// callID (of the sub-task child, when set), on the stream of the turn that
// answers the session's questions there, and waits for the answer. With
// no such turn it returns permission.ErrNoHuman.
func (a *eventAsker) elicit(ctx context.Context, e permission.Elicitation, callID string, child agent.ID) (permission.ElicitAnswer, error) {
	a.mu.Lock()
	qs := a.stream
	a.n++
	n := a.n
	a.mu.Unlock()
	if qs == nil {
		return permission.ElicitAnswer{}, permission.ErrNoHuman
	}
	update := agent.ElicitationUpdate{RequestID: fmt.Sprintf("elicit-%d", n), Server: e.Server, Mode: e.Mode, Message: e.Message,
		CallID: callID, ChildSessionID: child}
	asked := agent.Event{Kind: agent.EventElicitation, SessionID: a.session, Elicitation: &update}
	q := &Question{Elicitation: &e, ctx: ctx, id: update.RequestID, n: n, event: asked, reply: make(chan given, 1)}
	qs.add(q)
	defer qs.remove(q)
	a.bus.Publish(agent.Event{Kind: agent.EventState, SessionID: a.session, State: agent.StateRequiresAction})
	a.bus.Publish(asked)
	var got given
	select {
	case got = <-q.reply:
	case <-ctx.Done():
		got.err = ctx.Err()
	}
	if got.err == nil {
		answered := update
		answered.Action = got.elicit.Action
		a.bus.Publish(agent.Event{Kind: agent.EventElicitation, SessionID: a.session, Elicitation: &answered})
	}
	a.bus.Publish(agent.Event{Kind: agent.EventState, SessionID: a.session, State: agent.StateRunning})
	return got.elicit, got.err
}

// streamQuestions makes the session's questions go to tn's stream while
// its turn runs, when tn answers them there; the returned func ends that.
func (l *live) streamQuestions(tn Turn) (qs *questions, stop func()) {
	if !tn.Questions || tn.Events == nil || l.asker == nil {
		return nil, func() {}
	}
	qs = &questions{}
	l.asker.mu.Lock()
	l.asker.stream = qs
	l.asker.mu.Unlock()
	return qs, func() {
		l.asker.mu.Lock()
		if l.asker.stream == qs {
			l.asker.stream = nil
		}
		l.asker.mu.Unlock()
	}
}

// withQuestion is the update of delivery d, with the question its event
// asks when the turn's questions come on the stream.
func withQuestion(qs *questions, d bus.Delivery[agent.Event]) Update {
	u := Update{Delivery: d}
	if qs != nil {
		u.Question = qs.pass(d.Event)
	}
	return u
}
