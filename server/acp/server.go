package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/server/rpc"
)

// ProtocolVersion is the ACP major version darman speaks.
const ProtocolVersion = 1

// Setup is what the server knows when it starts the agent of a working
// directory: the directory, and the server's views of the client that the
// agent must use.
type Setup struct {
	// Root is the session's cwd, absolute.
	Root string
	// Workspace is the directory's files on the disk (what its language
	// servers read).
	Workspace tool.Workspace
	// WorkspaceFor is a session's view, the session service's
	// Options.WorkspaceFor: it reads through the session's client (its
	// unsaved buffers) and writes through it when the client offers fs/*.
	WorkspaceFor func(session agent.ID) tool.Workspace
	// AskerFor asks the user of a session with session/request_permission,
	// the session service's Options.AskerFor.
	AskerFor func(session agent.ID) permission.Asker
}

// Sessions runs turns. *session.Service implements it.
type Sessions interface {
	Create(ctx context.Context, opts session.CreateOptions) (agent.Session, error)
	// Start begins one turn, with the session's own tools (its MCP
	// servers, bash in the client's terminal) in tn.Tools besides the
	// service's; its Wait returns once it has ended and tn.Events has had
	// its last event. It fails with session.ErrBusy while the session
	// runs a turn.
	Start(ctx context.Context, tn session.Turn) (*session.Running, error)
	// Busy says whether the session runs a turn now.
	Busy(id agent.ID) bool
	// Between runs do between the session's turns: session.ErrBusy while
	// one runs; no turn starts while do runs.
	Between(ctx context.Context, id agent.ID, do func() error) error
	Cancel(id agent.ID) bool
	// Commands are the commands a prompt runs by /name (the built-in ones
	// and the workspace's files, read again now), offered as slash
	// commands; Run runs them.
	Commands() *prompt.Commands
	// SetPermissionMode makes the session's permission checker answer
	// as its mode says (read_only, accept_edits).
	SetPermissionMode(ctx context.Context, id agent.ID, m permission.Mode) error
}

// Store reads and updates stored sessions. *store.Store implements it.
type Store interface {
	ListSessions(ctx context.Context, opts store.ListOptions) ([]agent.Session, error)
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error)
	PutSession(ctx context.Context, s agent.Session) error
	// Blob reads a blob of a session (a prompt's image), for session/load.
	Blob(ctx context.Context, session agent.ID, key string) ([]byte, error)
}

// Agent is the agent core of one working directory as the server drives
// it: darman's workspace runtime, with this front's views of its parts.
// Options.Start builds it, and the server calls Close when it stops.
type Agent interface {
	// Sessions runs the directory's turns.
	Sessions() Sessions
	// Store holds its sessions.
	Store() Store
	// Model picks the "provider/model-id" of a new session.
	Model(ctx context.Context) (string, error)
	// Models are the choices of the session's model config option,
	// besides the session's own.
	Models(ctx context.Context) []string
	// CheckModel says whether a "provider/model-id" can be used.
	CheckModel(ref string) error
	// Bash is the service's own bash tool, which runs the background
	// commands of a client whose terminal runs the others; nil keeps bash
	// in darman's process tree for such a client too.
	Bash() tool.Tool
	// Checkpoints reverts and redoes turns (the /revert and /redo
	// commands); nil offers neither.
	Checkpoints() Checkpoints
	// Agents are the named agents; its primary ones besides build are
	// offered as session modes next to the permission modes (see
	// agents.go). Nil offers the permission modes alone.
	Agents() *agents.Catalog
	// Trust is what was made of the folder's own configuration (trust.go).
	Trust() Trust
	// Meta is darman's own state for a client to show (the OS sandbox of
	// the model's commands), sent as _meta.darman in the answers to
	// session/new and session/load; nil sends none.
	Meta() map[string]any
	// Close releases the agent once its turns have ended.
	Close() error
}

// started is one agent Options.Start returned: the server tells a
// directory's agents (the one before the folder was trusted, the one
// after) apart by it.
type started struct{ Agent }

// withMeta adds the agent's _meta to a session/new or session/load answer.
func withMeta(ag *started, res map[string]any) map[string]any {
	if m := ag.Meta(); m != nil {
		res["_meta"] = map[string]any{"darman": m}
	}
	return res
}

// MCPServer is an MCP server a client names in session/new or
// session/load, for that session only.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// SSE selects the legacy HTTP+SSE transport for URL.
	SSE bool
}

// Options configure a Server. Start is required.
type Options struct {
	// Start builds the agent of a working directory, on the first session
	// in it.
	Start func(ctx context.Context, setup Setup) (Agent, error)
	// BindMCP starts a session's MCP servers in root and returns their
	// tools and how to stop them; nil refuses sessions that name servers.
	BindMCP func(ctx context.Context, root string, servers []MCPServer) (tools []tool.Tool, stop func() error, err error)
	// Version is darman's version, for initialize.
	Version string
	// Initialized, when set, runs after the answer to initialize is
	// written: the client is connected and may not open a session for a
	// long time (darman acp gives back its start-up memory then).
	Initialized func()
	// Logger receives protocol problems; nil discards.
	Logger *slog.Logger
	// Images says whether the model new sessions get takes images, for
	// initialize's promptCapabilities.image; nil says no. A session on a
	// text-only model refuses an image whatever was advertised.
	Images func() bool
}

// Server is darman's ACP agent: one client on one connection.
type Server struct {
	opts Options
	log  *slog.Logger
	c    *conn

	mu       sync.Mutex
	client   clientCapabilities
	agents   map[string]*agentEntry // by cwd
	sessions map[agent.ID]*liveSession
	closing  bool
	// watching are the directories whose agent files are watched
	// (agentcmds.go); stopWatch ends the watchers, which watchers counts.
	watching map[*agentEntry]bool
	// replaced are the agents retrust replaced, closed with the server.
	replaced  []*started
	stopWatch chan struct{}
	watchers  sync.WaitGroup
}

// agentEntry is a directory's agent. A start that failed (a broken
// configuration, no model) is tried again by the next session there, so
// fixing the configuration needs no restart.
type agentEntry struct {
	mu    sync.Mutex // held while starting
	root  string     // the directory, as s.agents keys it
	agent *started
	ws    *workspace
	// trustAsked: the folder's trust question was put (once per folder).
	trustAsked bool
}

// New returns a server.
func New(opts Options) (*Server, error) {
	if opts.Start == nil {
		return nil, errors.New("acp.New: Options.Start is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: log, agents: map[string]*agentEntry{}, sessions: map[agent.ID]*liveSession{}, stopWatch: make(chan struct{})}, nil
}

// Serve speaks ACP on r and w until r ends or ctx is done. It then cancels
// the running turns (they are stored as cancelled), stops the sessions'
// MCP servers and closes the agents. Either way of ending is a clean one:
// the error is a read error of r, or a failure to stop. When ctx ends
// first, a Read of r still blocked returns only when r is closed.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	rc := rpc.NewConn(stdio{r, w}, s.handlers(), &rpc.Options{Protocol: rpc.ACP, Logger: s.log})
	s.c = &conn{rc: rc, ctx: ctx}
	res := rc.Run(ctx)
	return errors.Join(res.Err, s.close())
}

// handlers are the methods darman answers. initialize is answered on the
// read loop, before anything that follows it: the capabilities it sets
// apply to every later message.
func (s *Server) handlers() rpc.Handlers {
	return rpc.Handlers{
		Initialize: s.initialize,
		Requests: map[string]rpc.RequestFunc{
			"authenticate":              s.authenticate,
			"session/new":               s.newSession,
			"session/load":              s.loadSession,
			"session/list":              s.listSessions,
			"session/prompt":            s.prompt,
			"session/set_mode":          s.setMode,
			"session/set_config_option": s.setConfigOption,
		},
		Notifications: map[string]rpc.NotificationFunc{
			"session/cancel": func(ctx context.Context, params json.RawMessage) error {
				s.cancel(ctx, params)
				return nil
			},
		},
	}
}

func (s *Server) close() error {
	s.mu.Lock()
	if !s.closing {
		close(s.stopWatch)
	}
	s.closing = true
	sessions := s.sessions
	s.sessions = map[agent.ID]*liveSession{}
	agents := s.replaced
	for _, e := range s.agents {
		if e.agent != nil { // set under s.mu
			agents = append(agents, e.agent)
		}
	}
	s.mu.Unlock()
	s.watchers.Wait()
	for id, ls := range sessions {
		ls.ag().Sessions().Cancel(id)
	}
	var errs []error
	// The agents wait for their turns to be stored as cancelled; the
	// sessions' MCP servers go after that, as their tools may be running.
	for _, ag := range agents {
		errs = append(errs, ag.Close())
	}
	for _, ls := range sessions {
		errs = append(errs, ls.stopMCP())
	}
	return errors.Join(errs...)
}

// decode reads a request's params, strictly enough to name what is wrong.
func decode(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return invalidParams("%s: params are required", method)
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("%s: %v", method, err)
	}
	return nil
}

type clientCapabilities struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal bool `json:"terminal"`
}

type initializeParams struct {
	ProtocolVersion    *int               `json:"protocolVersion"`
	ClientCapabilities clientCapabilities `json:"clientCapabilities"`
}

func (s *Server) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode("initialize", params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams("initialize: protocolVersion is required (darman speaks %d)", ProtocolVersion)
	}
	s.mu.Lock()
	s.client = p.ClientCapabilities
	s.mu.Unlock()
	// A client that asks for another version gets the one darman speaks,
	// as the protocol says; it disconnects if it cannot speak it.
	return rpc.Then{After: s.opts.Initialized, Result: map[string]any{
		"protocolVersion": ProtocolVersion,
		"agentCapabilities": map[string]any{
			"loadSession": true,
			"promptCapabilities": map[string]bool{
				"image": s.opts.Images != nil && s.opts.Images(), "audio": false, "embeddedContext": true,
			},
			"mcpCapabilities":     map[string]bool{"http": true, "sse": true},
			"sessionCapabilities": map[string]any{"list": map[string]any{}},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]string{"name": "darman", "title": "darman", "version": s.opts.Version},
	}}, nil
}

// authenticate succeeds: darman has no login of its own; the model
// providers' keys come from its configuration.
func (s *Server) authenticate(ctx context.Context, params json.RawMessage) (any, error) {
	return map[string]any{}, nil
}

func (s *Server) caps() clientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// agentFor returns the agent of a working directory, starting it on first
// use.
func (s *Server) agentFor(ctx context.Context, method, cwd string) (*agentEntry, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, invalidParams("%s: cwd %q must be an absolute path", method, cwd)
	}
	cwd = filepath.Clean(cwd)
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, invalidParams("%s: cwd %s is not a directory", method, cwd)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, errors.New("darman is shutting down")
	}
	e := s.agents[cwd]
	if e == nil {
		e = &agentEntry{root: cwd, ws: newWorkspace(s, cwd)}
		s.agents[cwd] = e
	}
	s.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agent != nil {
		return e, nil
	}
	ag, err := s.startAgent(ctx, e, cwd)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	closing := s.closing
	if !closing {
		e.agent = ag
	}
	s.mu.Unlock()
	if closing {
		ag.Close()
		return nil, errors.New("darman is shutting down")
	}
	return e, nil
}

// startAgent starts the agent of e, the directory cwd's; it outlives the
// request.
func (s *Server) startAgent(ctx context.Context, e *agentEntry, cwd string) (*started, error) {
	ag, err := s.opts.Start(context.WithoutCancel(ctx), Setup{Root: cwd, Workspace: e.ws,
		WorkspaceFor: func(id agent.ID) tool.Workspace { return e.ws.of(id) },
		AskerFor:     func(id agent.ID) permission.Asker { return &asker{s: s, id: id} }})
	if err == nil && ag == nil {
		err = errors.New("the agent did not start")
	}
	if err != nil {
		return nil, fmt.Errorf("darman could not start in %s: %w", cwd, err)
	}
	return &started{ag}, nil
}

// retrust replaces the agent of e's directory by one started
// now, once the user trusted the folder: it reads the folder's
// configuration with its trust. The sessions move to it between turns
// (liveSession.adopt), keeping their history (the store is the same);
// the old agent closes with the server.
func (s *Server) retrust(ctx context.Context, e *agentEntry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ag, err := s.startAgent(ctx, e, e.root)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ag.Close()
		return errors.New("darman is shutting down")
	}
	if e.agent != nil {
		s.replaced = append(s.replaced, e.agent)
	}
	e.agent = ag
	var live []*liveSession
	for _, ls := range s.sessions {
		if ls.entry == e {
			live = append(live, ls)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(live, func(a, b *liveSession) int { return cmp.Compare(a.id, b.id) })
	for _, ls := range live {
		ls.adopt(ctx)
	}
	return nil
}

// newSessionParams are session/new's and session/load's params.
type newSessionParams struct {
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	MCPServers []mcpServerJSON `json:"mcpServers"`
}

type mcpServerJSON struct {
	Type    string    `json:"type"`
	Name    string    `json:"name"`
	Command string    `json:"command"`
	Args    []string  `json:"args"`
	Env     []nameVal `json:"env"`
	URL     string    `json:"url"`
	Headers []nameVal `json:"headers"`
}

type nameVal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func mcpServers(method string, in []mcpServerJSON) ([]MCPServer, error) {
	out := make([]MCPServer, 0, len(in))
	seen := map[string]bool{}
	for i, j := range in {
		if j.Name == "" {
			return nil, invalidParams("%s: mcpServers[%d] has no name", method, i)
		}
		if seen[j.Name] {
			return nil, invalidParams("%s: two MCP servers are named %q; give each its own name", method, j.Name)
		}
		seen[j.Name] = true
		m := MCPServer{Name: j.Name}
		switch j.Type {
		case "", "stdio":
			if j.Command == "" {
				return nil, invalidParams("%s: MCP server %q has no command", method, j.Name)
			}
			m.Command, m.Args = j.Command, j.Args
			if len(j.Env) > 0 {
				m.Env = map[string]string{}
				for _, e := range j.Env {
					m.Env[e.Name] = e.Value
				}
			}
		case "http", "sse":
			if j.URL == "" {
				return nil, invalidParams("%s: MCP server %q has no url", method, j.Name)
			}
			m.URL, m.SSE = j.URL, j.Type == "sse"
			if len(j.Headers) > 0 {
				m.Headers = map[string]string{}
				for _, h := range j.Headers {
					m.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, invalidParams("%s: MCP server %q has type %q; darman speaks stdio, http and sse", method, j.Name, j.Type)
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *Server) newSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p newSessionParams
	if err := decode("session/new", params, &p); err != nil {
		return nil, err
	}
	servers, err := mcpServers("session/new", p.MCPServers)
	if err != nil {
		return nil, err
	}
	e, err := s.agentFor(ctx, "session/new", p.Cwd)
	if err != nil {
		return nil, err
	}
	ag := e.agent
	model, err := ag.Model(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := ag.Sessions().Create(ctx, session.CreateOptions{Model: model})
	if err != nil {
		return nil, err
	}
	ls, err := s.open(ctx, "session/new", e, sess, servers, modeAsk)
	if err != nil {
		return nil, err
	}
	known := s.known(ls)
	return rpc.Then{Result: withMeta(ag, map[string]any{"sessionId": sess.ID, "modes": ls.modeState(), "configOptions": ls.configOptions(ctx)}),
		After: func() { known(); s.tellTrust(ctx, e, ls) }}, nil
}

func (s *Server) loadSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p newSessionParams
	if err := decode("session/load", params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalidParams("session/load: sessionId is required")
	}
	servers, err := mcpServers("session/load", p.MCPServers)
	if err != nil {
		return nil, err
	}
	e, err := s.agentFor(ctx, "session/load", p.Cwd)
	if err != nil {
		return nil, err
	}
	ag := e.agent
	id := agent.ID(p.SessionID)
	sess, err := ag.Store().Session(ctx, id)
	if err != nil {
		return nil, &Error{Code: codeNotFound, Message: fmt.Sprintf("session/load: no session %s: %v", id, err)}
	}
	if filepath.Clean(sess.Workspace) != filepath.Clean(p.Cwd) {
		return nil, invalidParams("session/load: session %s belongs to %s, not %s; load it with that cwd", id, sess.Workspace, p.Cwd)
	}
	msgs, err := ag.Store().Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := s.sessions[id]
	s.mu.Unlock()
	mode := modeAsk
	if old != nil {
		// Loaded again on this connection: the client's mode holds.
		if !old.retire(ctx) {
			return nil, invalidParams("session/load: session %s is running a turn; cancel it first", id)
		}
		mode = old.currentMode()
		s.forget(old)
	}
	ls, err := s.open(ctx, "session/load", e, sess, servers, mode)
	if err != nil {
		return nil, err
	}
	// The history goes out before the answer, as the protocol asks.
	blob := func(key string) ([]byte, error) { return ag.Store().Blob(ctx, id, key) }
	for _, u := range historyUpdates(msgs, blob) {
		ls.send(u)
	}
	return rpc.Then{Result: withMeta(ag, map[string]any{"modes": ls.modeState(), "configOptions": ls.configOptions(ctx)}), After: s.known(ls)}, nil
}

// known watches the session's agent files, and returns what the client
// learns about the session once it knows it (after the answer that names
// it): the commands it may run.
func (s *Server) known(ls *liveSession) func() {
	s.watchAgents(ls.entry)
	out := ls.commands()
	return func() {
		if len(out) > 0 {
			ls.send(update{SessionUpdate: "available_commands_update", AvailableCommands: out})
		}
	}
}

type listParams struct {
	Cwd    string `json:"cwd"`
	Cursor string `json:"cursor"`
}

// listPage is how many sessions one session/list answer holds.
const listPage = 100

func (s *Server) listSessions(ctx context.Context, params json.RawMessage) (any, error) {
	var p listParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("session/list: %v", err)
		}
	}
	if p.Cwd == "" {
		return nil, invalidParams("session/list: darman lists the sessions of one directory: give cwd")
	}
	e, err := s.agentFor(ctx, "session/list", p.Cwd)
	if err != nil {
		return nil, err
	}
	list, err := e.agent.Store().ListSessions(ctx, store.ListOptions{Workspace: filepath.Clean(p.Cwd)})
	if err != nil {
		return nil, err
	}
	start := 0
	if p.Cursor != "" {
		start = -1
		for i, x := range list {
			if string(x.ID) == p.Cursor {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, invalidParams("session/list: cursor %q is not from a previous answer", p.Cursor)
		}
	}
	type info struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		Title     string `json:"title,omitempty"`
		UpdatedAt string `json:"updatedAt,omitempty"`
	}
	out := []info{}
	next := ""
	for i := start; i < len(list); i++ {
		x := list[i]
		if len(out) == listPage {
			next = string(x.ID)
			break
		}
		out = append(out, info{SessionID: string(x.ID), Cwd: x.Workspace, Title: x.Title, UpdatedAt: x.Updated.UTC().Format(time.RFC3339)})
	}
	res := map[string]any{"sessions": out}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}
