package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/bus"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/tool"
)

// ErrBusy is returned by Start when the session is already running a turn.
var ErrBusy = errors.New("a turn is already running in this session; cancel it or wait for it to finish")

// Store is where sessions live. agent/store implements it; its methods are
// safe for concurrent use.
type Store interface {
	PutSession(ctx context.Context, s agent.Session) error
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	PutMessage(ctx context.Context, m agent.Message) error
	PutPart(ctx context.Context, p agent.Part) error
	// AppendPart adds text to the end of a stored part that grows as it
	// streams (its Text; a tool call's Tool.Terminal): seq numbers the
	// part's appends from 1. Readers see the part with its appends joined;
	// putting the part whole replaces them.
	AppendPart(ctx context.Context, p agent.Part, seq int, text string) error
	Messages(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error)
	// Window returns the session's history from its latest compaction on
	// (the message holding the compaction part, and every message after
	// it), or all of it when nothing was compacted: what a turn sends.
	Window(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error)
	// PutBlob keeps data (a prompt's image) with the session, once
	// however often it is put, and returns its key; Blob reads it back.
	PutBlob(ctx context.Context, session agent.ID, data []byte) (string, error)
	Blob(ctx context.Context, session agent.ID, key string) ([]byte, error)
}

// Options configure a Service. Store, Models and Workspace are required.
type Options struct {
	Store Store
	// Models resolves a "provider/model-id" reference to a provider and the
	// model id it knows.
	Models func(ref string) (llm.Provider, string, error)
	// Workspace is the files the tools work on; its root is the sessions'
	// workspace.
	Workspace tool.Workspace
	// WorkspaceFor, when set, gives the workspace a session's turns work
	// on, for a front whose client has a view of its own per session
	// (darman acp reads and writes through the client of each session). It
	// is asked at the start of each top-level turn with its session's id
	// (a sub-task works in its parent's); nil, or a nil answer, means
	// Workspace. Its root must be Workspace's.
	WorkspaceFor func(session agent.ID) tool.Workspace
	// Tools are offered to the model; nil offers none.
	Tools []tool.Tool
	// ToolSource, when set, gives a session's tools that come and go while
	// darman runs (the MCP servers'). A top-level turn asks it at its start
	// and again before each model call, and offers what it returns after
	// Tools, so a server that became ready, or a catalog it changed, is
	// seen without restarting the agent. An error fails the turn with it
	// before the user's message is stored: that is how a required MCP
	// server that is not ready stops a turn, naming the server and why.
	ToolSource func(session agent.ID) tool.Source
	// Tasks offers the model the task tool besides Tools: it runs a
	// sub-agent in a child session with the turn's tools but task and todo
	// (see the package doc). False leaves it out, for fronts that do not
	// render a sub-task's nested events.
	Tasks bool
	// System builds the system prompt for a step; nil sends a short
	// built-in one.
	System func(ctx context.Context, s agent.Session, tools []string) (string, error)
	// Rules, Grants, Asker and Fallback configure each session's permission
	// checker (see permission.Options).
	Rules    []permission.Rule
	Grants   permission.GrantStore
	Asker    permission.Asker
	Fallback permission.Action
	// AskerFor, when set, gives the Asker of a session's questions, asked
	// once when the session is first used in this service (so the asker
	// it returns must find what it needs by the session's id when it
	// asks); nil, or a nil answer, means Asker.
	AskerFor func(session agent.ID) permission.Asker
	// Refused, when set, hears each question refused because no one could
	// be asked (no Asker, no hook's "allow", Fallback deny), so that the
	// front can tell its user how to allow it. It is called on the turn's
	// goroutine, from sessions' turns at the same time, and must not block.
	Refused func(session agent.ID, req permission.Request)
	// MaxSteps caps the model calls of one turn; zero means 50.
	MaxSteps int
	// ToolTimeout bounds a tool call whose tool sets none; zero means 2
	// minutes.
	ToolTimeout time.Duration
	// Diagnostics reports the language servers' errors after every edit;
	// nil reports none.
	Diagnostics tool.Diagnostics
	// Checkpoints snapshots the workspace before steps that may change
	// files, so a turn can be reverted; nil takes none.
	Checkpoints Checkpoints
	// Logger receives the service's log lines; nil discards them.
	Logger *slog.Logger
	// Hooks runs the user's hooks on the turns' events (agent/hook);
	// nil runs none.
	Hooks Hooks
	// Agents are the named agents turns and sub-tasks run (Turn.Agent,
	// the task tool's agent); nil means the built-in build and plan.
	Agents *agents.Catalog
	// Commands finds the workspace's command files (prompt.LoadCommands);
	// it is called each time a prompt names a command and each time a
	// front lists them (Service.Commands), so a file added or changed
	// while darman runs is seen at once. nil has none but the built-in
	// commands.
	Commands func() *prompt.Commands
}

// Service runs the sessions of one workspace. It is safe for concurrent use.
// Close it to cancel running turns and end every subscription.
type Service struct {
	opts    Options
	log     *slog.Logger
	catalog *agents.Catalog

	mu     sync.Mutex
	live   map[agent.ID]*live
	closed bool
	turns  sync.WaitGroup
	// records serializes reading, changing and writing back a stored
	// session record (a turn's title and time, Rename), so that one change
	// does not undo another.
	records sync.Mutex
	// hookAllowed are the running calls a PreToolUse hook allowed, by
	// the session's checker (a sub-task shares its parent's) and call id,
	// with the hook's reason: their questions are answered without
	// asking. Under mu.
	hookAllowed map[allowedCall]string
	// holds are the sessions' between-turns actions in progress
	// (Between), by session. Under mu.
	holds map[agent.ID]*hold
}

// allowedCall names a call a hook allowed.
type allowedCall struct {
	checker *permission.Checker
	call    string
}

// live is what the service holds for a session while it is in use.
type live struct {
	bus     *bus.Bus[agent.Event]
	checker *permission.Checker
	// asker asks the checker's questions and the MCP servers'
	// elicitations (a sub-task's live shares its parent's checker and
	// asker; only a top-level turn sets its stream).
	asker *eventAsker
	files *tool.FileTimes
	jobs  *tool.Jobs
	// cancel stops the running turn; nil when the session is idle.
	cancel context.CancelFunc
	// recent are the last tool calls (name and input), for the doom-loop
	// guard.
	recent []string
	// current is the running turn; nil when the session is idle.
	current *turn
	// ended is closed once the last turn begun has ended and its last
	// event was passed on (Running.Done).
	ended <-chan struct{}
	// pruning is set once the session's history had to be pruned to fit
	// the context window, so that the following steps send the same
	// pruned prefix (and the provider's prompt cache keeps it) instead of
	// finding out again with a failed call. A compaction clears it.
	pruning bool
	// instructed holds the per-directory instruction files already added to
	// a tool's output in this session (see dirInstructions).
	instructed map[string]bool
	// started is set once the session's first turn in this service ran
	// its SessionStart hooks; SessionEnd runs for such sessions.
	started bool
}

// New returns a service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Models == nil || opts.Workspace == nil {
		return nil, errors.New("session.New: Store, Models and Workspace are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 50
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = 2 * time.Minute
	}
	catalog := opts.Agents
	if catalog == nil {
		catalog = agents.Load(agents.Options{})
	}
	return &Service{opts: opts, log: opts.Logger, live: map[agent.ID]*live{}, catalog: catalog}, nil
}

// CreateOptions describe a new session.
type CreateOptions struct {
	// Model is the "provider/model-id" the session talks to; required.
	Model string
	Title string
	// ParentID makes the session a sub-task of another.
	ParentID agent.ID
	// Agent is the session's agent; "" is build.
	Agent string
}

// Create stores a new session of the service's workspace.
func (s *Service) Create(ctx context.Context, opts CreateOptions) (agent.Session, error) {
	if opts.Model == "" {
		return agent.Session{}, errors.New("no model: set one in the config (\"model\": \"provider/model-id\") or with --model")
	}
	if _, _, err := s.opts.Models(opts.Model); err != nil {
		return agent.Session{}, err
	}
	now := time.Now().UTC()
	sess := agent.Session{ID: agent.NewSessionID(), ParentID: opts.ParentID, Workspace: s.opts.Workspace.Root(),
		Title: opts.Title, Model: opts.Model, Agent: opts.Agent, Created: now, Updated: now}
	return sess, s.opts.Store.PutSession(ctx, sess)
}

// get returns the live state of a session, making it on first use.
func (s *Service) get(ctx context.Context, id agent.ID) (*live, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the session service is closed")
	}
	if l, ok := s.live[id]; ok {
		return l, nil
	}
	if _, err := s.opts.Store.Session(ctx, id); err != nil {
		return nil, err
	}
	l := &live{bus: bus.New(bus.Options[agent.Event]{Coalesce: agent.CoalesceEvents, Logger: s.log}), files: &tool.FileTimes{}, jobs: tool.NewJobs(s.log),
		instructed: map[string]bool{}}
	inner := s.opts.Asker
	if s.opts.AskerFor != nil {
		if a := s.opts.AskerFor(id); a != nil {
			inner = a
		}
	}
	// Asking goes through the session, so that the question and its
	// answer are events too, and so that a PreToolUse hook's "allow"
	// answers it even where no one can be asked (inner is nil).
	asker := &eventAsker{inner: inner, bus: l.bus, session: id, hooks: s.opts.Hooks, root: s.opts.Workspace.Root(),
		allowed: func(callID string) (string, bool) { return s.allowedByHook(l.checker, callID) }}
	if s.opts.Refused != nil && s.opts.Fallback != permission.Allow {
		asker.refused = func(req permission.Request) { s.opts.Refused(id, req) }
	}
	checker, err := permission.New(ctx, permission.Options{
		Root:     s.opts.Workspace.Root(),
		Rules:    s.opts.Rules,
		Grants:   s.opts.Grants,
		Asker:    asker,
		Fallback: s.opts.Fallback,
		Logger:   s.log,
	})
	if err != nil {
		l.bus.Close()
		l.jobs.Close()
		return nil, err
	}
	l.checker, l.asker = checker, asker
	s.live[id] = l
	return l, nil
}

// tools are the tools a top-level turn offers: the service's, then those
// of its source (found), then task.
func (s *Service) tools(found []tool.Tool) []tool.Tool {
	tools := slices.Concat(s.opts.Tools, found)
	if s.opts.Tasks {
		tools = append(tools, &taskTool{svc: s})
	}
	return tools
}

// SetPermissionMode sets how the session answers what its permission
// rules leave open before anyone is asked (permission.Mode: an ACP
// client's read-only and accept-edits modes), for its turns, sub-tasks
// and commands from now on, the running turn's included.
func (s *Service) SetPermissionMode(ctx context.Context, id agent.ID, m permission.Mode) error {
	l, err := s.get(ctx, id)
	if err != nil {
		return err
	}
	l.checker.SetMode(m)
	return nil
}

// Busy reports whether the session runs a turn now: what Start would
// refuse with ErrBusy. A front asks it before work that must not happen
// beside a turn (restoring files, replacing the session); the answer may
// be stale by the time it acts, unless the front starts its own turns
// under the same lock it asks under.
func (s *Service) Busy(id agent.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.live[id]
	return ok && l.cancel != nil
}

// Cancel stops the session's running turn, if any, and reports whether
// there was one.
func (s *Service) Cancel(id agent.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.live[id]; ok && l.cancel != nil {
		l.cancel()
		return true
	}
	return false
}

// Close cancels every running turn, waits for them to record how they
// ended, stops the sessions' background commands, and ends every
// subscription.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, l := range s.live {
		if l.cancel != nil {
			l.cancel()
		}
	}
	s.mu.Unlock()
	s.turns.Wait()
	s.endSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for id, l := range s.live {
		errs = append(errs, l.jobs.Close())
		l.bus.Close()
		delete(s.live, id)
	}
	return errors.Join(errs...)
}

// eventAsker publishes a permission question and its answer around asking
// the human.
type eventAsker struct {
	// inner asks the human when no turn answers the session's questions
	// on its stream (stream); nil when no one can be asked: a question no
	// hook answered is then the Checker's Fallback's (ErrUnattended).
	inner   permission.Asker
	bus     *bus.Bus[agent.Event]
	session agent.ID
	n       int
	mu      sync.Mutex
	// stream, while a turn that answers questions on its stream runs
	// (Turn.Questions), holds its open questions; nil asks inner.
	stream *questions
	// hooks run Notification when a question is asked; nil runs none.
	hooks Hooks
	root  string
	// allowed reports the calls a PreToolUse hook allowed; nil, none.
	allowed func(callID string) (reason string, ok bool)
	// refused hears the questions refused for want of inner; nil, none.
	refused func(permission.Request)
}

func (a *eventAsker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	req.Session = a.session
	if reply, ok := a.hookAnswer(req); ok {
		return reply, nil
	}
	a.mu.Lock()
	stream := a.stream
	a.mu.Unlock()
	if a.inner == nil && stream == nil {
		if a.refused != nil {
			a.refused(req)
		}
		return permission.Reply{}, permission.ErrUnattended
	}
	a.mu.Lock()
	a.n++
	n := a.n
	a.mu.Unlock()
	update := agent.PermissionUpdate{RequestID: fmt.Sprintf("perm-%d", n), Permission: req.Permission, Subjects: req.Patterns, Title: req.Title, CallID: req.CallID,
		ChildSessionID: req.Child}
	asked := agent.Event{Kind: agent.EventPermission, SessionID: a.session, Permission: &update}
	a.bus.Publish(agent.Event{Kind: agent.EventState, SessionID: a.session, State: agent.StateRequiresAction})
	got, ok := a.onStream(ctx, stream, req, n, asked)
	if !ok {
		a.bus.Publish(asked)
		a.notify(ctx, req)
		got.reply, got.err = a.inner.Ask(ctx, req)
	}
	reply, err := got.reply, got.err
	if err == nil {
		answered := update
		answered.Answer = string(reply.Answer)
		a.bus.Publish(agent.Event{Kind: agent.EventPermission, SessionID: a.session, Permission: &answered})
	}
	a.bus.Publish(agent.Event{Kind: agent.EventState, SessionID: a.session, State: agent.StateRunning})
	return reply, err
}
