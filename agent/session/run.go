package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/bus"
	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/tool"
)

// Turn is one turn as a front asks for it (Service.Start, Service.Run):
// every front — darman run, darman lsp, darman acp — and the task tool run
// their turns through it, so what a turn is, when it ends and what it
// came to are decided here once.
type Turn struct {
	// Session is the session the turn belongs to; required.
	Session agent.ID
	// Prompt is the user's message: typed text and the files the user
	// attached, in order (see Part). Typed text that starts with /name
	// runs the command of that name (Service.Commands), its arguments the
	// rest; an unknown name is Start's *prompt.UnknownCommandError.
	Prompt []Part
	// Context describes where the user is (the editor's file and
	// selection); it is added after the message, a command's expansion
	// included. "" adds nothing.
	Context string
	// Command, when set, is the command to run with Args, as a front's
	// picker names it (darman.command.run), instead of Prompt's /name.
	// A file's command makes the message: its template
	// expanded with Args (prompt.Command.Expand) through the session's
	// workspace, so @file reads what the session reads (an editor's
	// unsaved buffer), with the workspace check, and !`cmd` runs under the
	// session's bash permission. A template without !`cmd` is expanded
	// before the turn, so a mistake in it (a missing @file) is Start's
	// error; one with !`cmd` is expanded inside the turn, so its
	// permission question is the turn's, and a failure ends the turn
	// (Result.Err says why). Either way the message stored and shown is
	// what was typed ("/name args"), the expansion is what the model reads.
	Command *prompt.Command
	Args    string
	// Model is the "provider/model-id" this turn talks to; "" means the
	// command's model when it names one, else the session's. The session
	// keeps its own model for later turns.
	Model string
	// Agent names the agent that runs the turn (agent/agents: build,
	// plan, the workspace's files); it becomes the session's current
	// agent. "" is the session's current agent (build for a new session).
	// An unknown agent, or one that runs only as a sub-agent, is Start's
	// error.
	Agent string
	// Tools are this turn's own tools besides the service's (darman acp's:
	// the MCP servers a client named for the session, bash in the
	// client's terminal). One with a service tool's name takes its place;
	// the others come after the service's, in order. Sub-tasks of the turn
	// get them too.
	Tools []tool.Tool
	// Events, when set, receives every event the session publishes from
	// the turn's start to its end, the sub-tasks' included, in the
	// session's order, one at a time on a goroutine of the service's; the
	// last one has Update.Last set. The turn does not wait for it, but the
	// end of the turn (Running.Wait) does.
	Events func(Update)
	// ID is the front's own name of the turn (darman lsp's turnId),
	// recorded with its checkpoint so the turn can be reverted by it; ""
	// names it by its user message alone.
	ID string
	// Questions, with Events, makes Events the one that asks the user
	// the turn's permission questions, its sub-tasks' and its command's
	// included: each comes as the Update of its question event, with
	// Update.Question set, after every update published before it, and
	// the asking tool waits for Question.Answer. So do the MCP servers'
	// elicitations during the turn's tool calls (Question.Elicitation,
	// answered with AnswerElicitation). A front thus shows a question
	// after the tool call it is about without ordering of its own. False
	// asks them through the session's Asker (Options.Asker, AskerFor) and
	// the MCP client's Gate, beside the stream.
	Questions bool
	// Dropped, when set, is called when Events fell so far behind that
	// the session dropped events of the turn (bus.ErrOverflow); Events
	// goes on with the events from then on, and the turn's last event is
	// still passed. A front says so and offers to reload from the store.
	Dropped func()
	// Admit, when set, is asked by Start as the turn takes its session,
	// once no turn runs and no between-turns action (Between) holds it:
	// an error refuses the turn (Start returns it, nothing stored or
	// published). A front checks there, in the same step, what it changes
	// between turns itself (darman acp: the session was not replaced or
	// moved). It runs under the service's lock and must not call the
	// service.
	Admit func() error
}

// Part is one piece of a prompt.
type Part struct {
	// Text is typed text; with File and Embedded, the file's content as
	// the client sent it.
	Text string
	// File is a file the part is about, absolute: mentioned only (the
	// model reads it with its tools), embedded (Embedded), or a binary
	// file that is not shown (Size and MIME).
	File     string
	Embedded bool
	Size     int
	MIME     string
	// Image is an image's bytes (PNG, JPEG, GIF or WebP; MIME may say
	// which, File where it came from): sent to the model as an image,
	// fitted to the providers' limits, kept in the store beside the
	// message (see image.go).
	Image []byte
}

// Text is a prompt of typed text.
func Text(s string) []Part { return []Part{{Text: s}} }

// String is the part as the model reads it.
func (p Part) String() string {
	switch {
	case p.File == "":
		return p.Text
	case p.Embedded:
		return fenceFile(p.File, p.Text)
	case p.Size > 0 || p.MIME != "":
		return fmt.Sprintf("(%s: %d bytes of %s, not shown)", p.File, p.Size, p.MIME)
	}
	return fmt.Sprintf("(the file %s)", p.File)
}

// MessageText is a prompt's parts as the one message the model reads, a
// blank line between them.
func MessageText(parts []Part) string {
	s := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Image == nil {
			s = append(s, p.String())
		}
	}
	return strings.Join(s, "\n\n")
}

// shownText is a prompt as people are shown it: the typed text, then what
// was attached by name ("@main.go lines 5-7 @Problems"), not the content
// the model reads (MessageText).
func shownText(parts []Part) string {
	var s, names []string
	for _, p := range parts {
		switch {
		case p.Image != nil:
		case p.File == "":
			s = append(s, p.Text)
		default:
			names = append(names, "@"+p.File)
		}
	}
	if len(names) > 0 {
		s = append(s, strings.Join(names, " "))
	}
	return strings.Join(s, "\n\n")
}

// fenceFile puts an attached file's content in a fence longer than any in
// it, under its name.
func fenceFile(name, body string) string {
	ticks := "```"
	for strings.Contains(body, ticks) {
		ticks += "`"
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return name + ":\n" + ticks + "\n" + body + ticks
}

// Update is one event of a turn as Turn.Events receives it.
type Update struct {
	bus.Delivery[agent.Event]
	// Last is set on the event that ends the turn (its final state, idle
	// or failed); it is the last Update of the turn.
	Last bool
	// Question is set, with Turn.Questions, on the event of a question
	// the front must ask (see Question); nil on every other update.
	Question *Question
}

// Result is what a turn came to.
type Result struct {
	Session agent.ID
	// Message is the turn's last assistant message; "" when the turn ended
	// before the model answered.
	Message agent.ID
	// Finish is how the turn ended: stop, length, step_limit, cancelled,
	// error, ….
	Finish agent.Finish
	// Error says why a turn that ended with FinishError failed; Err is the
	// same as an error, for errors.As (a *permission.DeniedError of a
	// command's !`cmd`).
	Error string
	Err   error
	// Text is the answer: the text of the turn's last assistant message
	// that has any (a sub-task's is its own), its parts a blank line
	// apart.
	Text string
	// Usage and Cost add up every model call of the turn, its sub-tasks'
	// included.
	Usage agent.Usage
	Cost  float64
	// Duration is from Start to the turn's end.
	Duration time.Duration

	msg agent.Message
}

// Running is a turn that Start started.
type Running struct {
	// Session is the turn's session.
	Session agent.ID
	done    chan struct{}
	res     Result
}

// Wait returns the turn's result once it has ended and Turn.Events (when
// set) has received its last event.
func (r *Running) Wait() Result {
	<-r.done
	return r.res
}

// Done is closed when Wait would return.
func (r *Running) Done() <-chan struct{} { return r.done }

// Run runs one turn and returns what it came to once it has ended: Start
// then Wait.
func (s *Service) Run(ctx context.Context, tn Turn) (Result, error) {
	r, err := s.Start(ctx, tn)
	if err != nil {
		return Result{}, err
	}
	return r.Wait(), nil
}

// errShellInTurn stops a command's expansion before the turn at its first
// !`cmd`, which runs inside the turn.
var errShellInTurn = errors.New("the command runs a shell command")

// Start begins one turn of tn.Session and returns while it runs; the turn
// runs under ctx and stops when ctx is done or Cancel is called, and is
// then recorded as cancelled. A prompt that starts with /name runs the
// command of that name in Commands (a built-in one, or a command file's
// template expanded), the same in every front; the message stored and
// shown is what was typed, the model is sent the expansion. Start fails,
// with nothing stored or published, when the prompt is empty, names a
// command there is not (prompt.UnknownCommandError), its model or agent
// is unknown, the session already runs a turn (ErrBusy), or a command's
// template does not expand. While a between-turns action of the session
// runs (Between), Start waits for it before the turn takes the session.
func (s *Service) Start(ctx context.Context, tn Turn) (*Running, error) {
	began := time.Now()
	typed := MessageText(tn.Prompt)
	if tn.Command == nil {
		if _, _, ok := prompt.ParseInvocation(typed); ok {
			cmd, args, err := s.Commands().Invocation(typed)
			if err != nil {
				return nil, err
			}
			tn.Command, tn.Args = cmd, args
		}
	} else {
		typed = strings.TrimSpace("/" + tn.Command.Name + " " + tn.Args)
	}
	if strings.TrimSpace(typed) == "" && tn.Command == nil && !hasImages(tn.Prompt) {
		return nil, errors.New("the prompt is empty")
	}
	sess, err := s.opts.Store.Session(ctx, tn.Session)
	if err != nil {
		return nil, err
	}
	// A sub-task's session is run by its parent's turn (runTask), not
	// through Start, and holds no turn of its own while it runs: a turn
	// started in it then would write into the sub-task's history beside
	// the sub-task's own.
	if sess.ParentID != "" && s.Busy(sess.ParentID) {
		return nil, fmt.Errorf("session %s is a sub-task of session %s, whose turn is running: send the prompt once that turn has ended", sess.ID, sess.ParentID)
	}
	if tn.Command != nil && tn.Command.Origin == prompt.Builtin {
		return s.startBuiltin(ctx, tn, sess, typed, began)
	}
	ag, err := s.turnAgent(sess, tn.Agent)
	if err != nil {
		return nil, err
	}
	model := tn.Model
	if model == "" && tn.Command != nil {
		model = tn.Command.Model
	}
	if model == "" {
		model = ag.Model
	}
	if model != "" {
		if _, _, err := s.opts.Models(model); err != nil {
			return nil, fmt.Errorf("the turn's model %q: %w", model, err)
		}
	}
	l, err := s.get(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	t := &turn{svc: s, live: l, id: sess.ID, modelRef: model, own: tn.Tools, ws: s.workspaceOf(sess.ID), label: tn.ID, agent: ag}
	if s.opts.ToolSource != nil {
		t.source = s.opts.ToolSource(sess.ID)
	}
	t.tools = withTools(s.tools(nil), t.own)
	text := MessageText(tn.Prompt)
	if tn.Command != nil {
		cmd, args, where := *tn.Command, tn.Args, tn.Context
		opts := t.expandOptions(sess.ID)
		run := opts.Run
		opts.Run = func(context.Context, string) (string, error) { return "", errShellInTurn }
		expanded, err := cmd.Expand(ctx, args, opts)
		switch {
		case errors.Is(err, errShellInTurn):
			opts.Run = run
			t.expand = func(ctx context.Context) (string, error) {
				out, err := cmd.Expand(ctx, args, opts)
				if err != nil {
					return "", err
				}
				return withContext(out, where), nil
			}
		case err != nil:
			return nil, err
		default:
			text = withContext(expanded, where)
		}
	} else {
		text = withContext(text, tn.Context)
		// Attached files and texts are the model's to read; the user's
		// message names them.
		typed = shownText(tn.Prompt)
	}
	if text != typed || t.expand != nil {
		t.typed = typed
	}
	if err := t.prepare(sess); err != nil {
		return nil, err
	}
	if err := t.takeImages(tn.Prompt); err != nil {
		return nil, err
	}
	return s.launch(ctx, tn, t, text, began)
}

// launch runs the prepared turn t with text as the user's message, once
// it has taken its session (ErrBusy when another turn has it).
func (s *Service) launch(ctx context.Context, tn Turn, t *turn, text string, began time.Time) (*Running, error) {
	id, l := t.id, t.live
	s.mu.Lock()
	// A between-turns action (Between) finishes first; the session it
	// may have deleted is not taken.
	for h := s.holds[id]; h != nil; h = s.holds[id] {
		s.mu.Unlock()
		select {
		case <-h.free:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if _, err := s.opts.Store.Session(ctx, id); err != nil {
			return nil, err
		}
		s.mu.Lock()
	}
	if l.cancel != nil {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the session service is closed")
	}
	if tn.Admit != nil {
		if err := tn.Admit(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	tctx, cancel := context.WithCancel(ctx)
	r := &Running{Session: id, done: make(chan struct{})}
	l.cancel, l.current, l.ended = cancel, t, r.done
	s.turns.Add(1)
	// Subscribed while the session is taken: the previous turn published
	// its last event before it let go (see turn.end), so nothing of it
	// comes here.
	var sub *bus.Subscription[agent.Event]
	subCtx, stopSub := context.WithCancel(context.WithoutCancel(ctx))
	if tn.Events != nil {
		sub = l.bus.Subscribe(subCtx)
	}
	qs, noQuestions := l.streamQuestions(tn)
	s.mu.Unlock()
	// The session as Start read it says whether the agent must be
	// stored: most turns name the agent the session has (an ACP
	// session's), and need no second read of its record.
	if tn.Agent != "" && t.builtin == nil && !isAgent(t.sess.Agent, tn.Agent) {
		if err := s.setSessionAgent(ctx, id, tn.Agent); err != nil {
			s.log.Error("cannot store the session's agent", "session", id, "agent", tn.Agent, "err", err)
		}
	}

	ended := make(chan final, 1)
	forwarded := make(chan struct{})
	if sub != nil {
		go func() {
			defer close(forwarded)
			defer stopSub()
			forward(subCtx, l.bus, sub, id, tn, qs, ended)
		}()
	} else {
		stopSub()
		close(forwarded)
	}
	go func() {
		defer s.turns.Done()
		defer cancel()
		msg := t.run(tctx, text)
		noQuestions()
		t.release() // when the turn ended before it began
		ended <- t.final
		<-forwarded
		r.res = t.result(msg, time.Since(began))
		close(r.done)
	}()
	return r, nil
}

func withContext(text, context string) string {
	if context == "" {
		return text
	}
	return text + "\n\n" + context
}

// final is the event that ended a turn and its number on the bus.
type final struct {
	seq   uint64
	event agent.Event
}

// endsTurn reports whether e is the end of the turn of session id: its
// final state. A sub-task's turn ends inside its parent's, with its own
// SessionID and ParentCallID set, and is not the end.
func endsTurn(e agent.Event, id agent.ID) bool {
	return e.Kind == agent.EventState && e.SessionID == id && e.ParentCallID == "" &&
		(e.State == agent.StateIdle || e.State == agent.StateFailed)
}

// forward passes a turn's events to tn.Events until its last, which it
// passes even when the subscription lost it (an overflow, the bus
// closing as the service closes), with the questions qs holds (nil when
// the turn's questions are not on its stream): a question whose event an
// overflow lost is passed once the stream resumes.
func forward(ctx context.Context, b *bus.Bus[agent.Event], sub *bus.Subscription[agent.Event], id agent.ID, tn Turn, qs *questions, ended <-chan final) {
	var fin *final
	last := func() {
		tn.Events(Update{Delivery: bus.Delivery[agent.Event]{Seq: fin.seq, Event: fin.event}, Last: true})
	}
	for {
		endc := ended
		if fin != nil {
			endc = nil
		}
		select {
		case d, ok := <-sub.C():
			if !ok {
				if errors.Is(sub.Err(), bus.ErrOverflow) && ctx.Err() == nil {
					if tn.Dropped != nil {
						tn.Dropped()
					}
					sub = b.Subscribe(ctx)
					if qs != nil {
						for _, q := range qs.unpassed() {
							tn.Events(Update{Delivery: bus.Delivery[agent.Event]{Event: q.event}, Question: q})
						}
					}
					if fin != nil && (fin.seq == 0 || sub.Since() >= fin.seq) {
						last()
						return
					}
					continue
				}
				if fin == nil {
					f := <-ended
					fin = &f
				}
				last()
				return
			}
			if endsTurn(d.Event, id) {
				tn.Events(Update{Delivery: d, Last: true})
				return
			}
			tn.Events(withQuestion(qs, d))
		case f := <-endc:
			fin = &f
			if f.seq == 0 || sub.Since() >= f.seq {
				last()
				return
			}
		}
	}
}

// answer follows a turn's text as it streams, for Result.Text: the text
// parts of the last assistant message that has any.
type answer struct {
	mu      sync.Mutex
	message agent.ID
	parts   []agent.ID
	text    map[agent.ID]*strings.Builder
	usage   agent.Usage
	cost    float64
}

// see takes in an event the turn published.
func (a *answer) see(e agent.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e.Kind {
	case agent.EventUsage:
		if e.Usage != nil {
			a.usage, a.cost = a.usage.Add(*e.Usage), a.cost+e.Cost
		}
	case agent.EventMessageChunk:
		if e.Text == "" {
			return
		}
		if e.MessageID != a.message {
			a.message, a.parts, a.text = e.MessageID, nil, map[agent.ID]*strings.Builder{}
		}
		b := a.text[e.PartID]
		if b == nil {
			b = &strings.Builder{}
			a.text[e.PartID] = b
			a.parts = append(a.parts, e.PartID)
		}
		b.WriteString(e.Text)
	}
}

func (a *answer) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var texts []string
	for _, p := range a.parts {
		if s := a.text[p].String(); strings.TrimSpace(s) != "" {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n\n")
}

// result is what the turn came to, once it returned msg.
func (t *turn) result(msg agent.Message, took time.Duration) Result {
	r := Result{Session: t.id, Message: msg.ID, Finish: msg.Finish, Error: msg.Error, Err: t.err,
		Text: t.answer.String(), Duration: took, msg: msg}
	t.answer.mu.Lock()
	r.Usage, r.Cost = t.answer.usage, t.answer.cost
	t.answer.mu.Unlock()
	if r.Finish == agent.FinishError && r.Err == nil && r.Error != "" {
		r.Err = errors.New(r.Error)
	}
	return r
}

// expandOptions are how a command's template expands in session id:
// @file through the turn's workspace (an editor's unsaved buffer; the
// workspace check applies to it as to the disk) and never a secret, as
// the fronts' attachments (complete.Attachable), !`cmd` under the
// session's bash permission.
func (t *turn) expandOptions(id agent.ID) prompt.ExpandOptions {
	return prompt.ExpandOptions{
		Root:       t.ws.Root(),
		ReadFile:   t.ws.ReadFile,
		Attachable: complete.Attachable,
		Run: func(ctx context.Context, line string) (string, error) {
			return t.svc.shell(ctx, id, t.ws, line)
		},
	}
}

// workspaceOf is the workspace a session's turns work on.
func (s *Service) workspaceOf(id agent.ID) tool.Workspace {
	if s.opts.WorkspaceFor != nil {
		if ws := s.opts.WorkspaceFor(id); ws != nil {
			return ws
		}
	}
	return s.opts.Workspace
}
