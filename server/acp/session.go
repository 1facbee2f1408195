package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/server/internal/acpupdate"
	"github.com/darman-dev/darman/server/rpc"
)

// The permission modes a session offers. They decide how the questions
// darman's permission rules leave open are answered; what the rules allow
// or deny outright is not asked at all.
const (
	// modeAsk asks the user every open question.
	modeAsk = "default"
	// modeAcceptEdits allows file edits without asking, and asks the rest.
	modeAcceptEdits = "accept_edits"
	// modeReadOnly rejects every open question, and refuses to write files
	// even where a rule allows it.
	modeReadOnly = "read_only"
)

// permissionMode is the permission core's mode of a session mode.
func permissionMode(id string) permission.Mode {
	switch id {
	case modeAcceptEdits:
		return permission.ModeAcceptEdits
	case modeReadOnly:
		return permission.ModeReadOnly
	}
	return permission.ModeAsk
}

var modes = []struct{ id, name, description string }{
	{modeAsk, "Ask", "Ask before editing files, running commands that change things, or calling MCP tools (darman's permission rules)"},
	{modeAcceptEdits, "Accept edits", "Edit files without asking; ask before commands and MCP tools"},
	{modeReadOnly, "Read only", "Read and search only: no edits, and every question is answered no"},
}

// liveSession is a session a client opened with session/new or
// session/load on this connection.
type liveSession struct {
	s   *Server
	id  agent.ID
	cwd string
	// cur is the agent the session runs in: its directory's, replaced
	// when the user trusts the folder (see Server.retrust).
	cur atomic.Pointer[started]
	ws  *workspace
	// entry is the directory's agent the session runs in.
	entry *agentEntry

	mcpTools []tool.Tool
	mcpStop  func() error

	mu   sync.Mutex
	mode string
	// agentName is the agent the session's turns run (build when a
	// permission mode is chosen); see agents.go.
	agentName string
	terminals map[string]string // tool call id → the client's terminal id

	// retired is set, between turns (Sessions.Between), when the session
	// was loaded again on this connection: the new liveSession serves it
	// from then on.
	retired atomic.Bool
}

// ag is the agent the session runs in.
func (ls *liveSession) ag() *started { return ls.cur.Load() }

// adopt moves the session, between turns, to its directory's agent when
// that was replaced (the folder trusted), and tells the client its modes
// and commands as they now are.
func (ls *liveSession) adopt(ctx context.Context) {
	ls.s.mu.Lock()
	now := ls.entry.agent
	ls.s.mu.Unlock()
	if now == nil || now == ls.ag() {
		return
	}
	// Moved between turns, so a turn runs in one agent from its start
	// to its end; start sees the move (errMoved).
	was, moved := ls.ag(), false
	err := was.Sessions().Between(ctx, ls.id, func() error {
		moved = ls.cur.CompareAndSwap(was, now)
		return nil
	})
	if err == nil && moved {
		// The new agent's permission checker takes the session's mode.
		if err := now.Sessions().SetPermissionMode(ctx, ls.id, permissionMode(ls.currentMode())); err != nil {
			ls.s.log.Warn("acp: the session's mode did not follow it to the trusted agent", "session", ls.id, "err", err)
		}
		ls.agentsChanged(ctx)
	}
}

func (s *Server) open(ctx context.Context, method string, e *agentEntry, sess agent.Session, servers []MCPServer, mode string) (*liveSession, error) {
	ls := &liveSession{s: s, id: sess.ID, cwd: sess.Workspace, ws: e.ws, entry: e, mode: mode, terminals: map[string]string{},
		agentName: sess.Agent}
	s.mu.Lock()
	ls.cur.Store(e.agent) // set under s.mu
	s.mu.Unlock()
	if err := e.agent.Sessions().SetPermissionMode(ctx, sess.ID, permissionMode(mode)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if len(servers) > 0 {
		if s.opts.BindMCP == nil {
			return nil, invalidParams("%s: this darman does not bind MCP servers per session", method)
		}
		tools, stop, err := s.opts.BindMCP(ctx, ls.cwd, servers)
		if err != nil {
			return nil, fmt.Errorf("%s: the session's MCP servers: %w", method, err)
		}
		ls.mcpTools, ls.mcpStop = tools, stop
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ls.stopMCP()
		return nil, errors.New("darman is shutting down")
	}
	s.sessions[sess.ID] = ls
	s.mu.Unlock()
	return ls, nil
}

// forget drops a session the client loads again: its MCP servers stop.
func (s *Server) forget(ls *liveSession) {
	s.mu.Lock()
	if s.sessions[ls.id] == ls {
		delete(s.sessions, ls.id)
	}
	s.mu.Unlock()
	if err := ls.stopMCP(); err != nil {
		s.log.Warn("acp: stopping a session's MCP servers", "session", ls.id, "err", err)
	}
}

func (ls *liveSession) stopMCP() error {
	if ls.mcpStop == nil {
		return nil
	}
	stop := ls.mcpStop
	ls.mcpStop = nil
	return stop()
}

// retire takes the session out of service for a load that replaces it,
// unless a turn runs: the check and the retiring are one step
// (Sessions.Between), so a prompt cannot start in between.
func (ls *liveSession) retire(ctx context.Context) bool {
	return ls.ag().Sessions().Between(ctx, ls.id, func() error {
		ls.retired.Store(true)
		return nil
	}) == nil
}

func (ls *liveSession) currentMode() string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.mode
}

// send sends one session/update.
func (ls *liveSession) send(u update) {
	if err := ls.s.c.notify("session/update", map[string]any{"sessionId": ls.id, "update": u}); err != nil {
		ls.s.log.Debug("acp: session/update not sent", "session", ls.id, "err", err)
	}
}

func (s *Server) session(method string, id string) (*liveSession, error) {
	if id == "" {
		return nil, invalidParams("%s: sessionId is required", method)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := s.sessions[agent.ID(id)]
	if ls == nil {
		return nil, &Error{Code: codeNotFound, Message: fmt.Sprintf("%s: no session %s on this connection; create it with session/new or open it with session/load", method, id)}
	}
	return ls, nil
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

func (ls *liveSession) modeState() map[string]any {
	avail := make([]sessionMode, len(modes))
	for i, m := range modes {
		avail[i] = sessionMode{m.id, m.name, m.description}
	}
	avail = append(avail, ls.agentModes()...)
	return map[string]any{"currentModeId": ls.currentModeID(), "availableModes": avail}
}

type selectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type configOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category"`
	Type         string         `json:"type"`
	CurrentValue string         `json:"currentValue"`
	Options      []selectOption `json:"options"`
}

// configOptions are the session's selectors: its model and its permission
// mode (the same as session/set_mode, for clients that show only config
// options).
func (ls *liveSession) configOptions(ctx context.Context) []configOption {
	current := ""
	if sess, err := ls.ag().Store().Session(ctx, ls.id); err == nil {
		current = sess.Model
	}
	refs := ls.ag().Models(ctx)
	if current != "" && !slices.Contains(refs, current) {
		refs = append([]string{current}, refs...)
	}
	model := configOption{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: current,
		Description: `The session's "provider/model-id"`}
	for _, r := range refs {
		model.Options = append(model.Options, selectOption{Value: r, Name: r})
	}
	mode := configOption{ID: "mode", Name: "Permissions", Category: "mode", Type: "select", CurrentValue: ls.currentModeID()}
	for _, m := range modes {
		mode.Options = append(mode.Options, selectOption{Value: m.id, Name: m.name, Description: m.description})
	}
	for _, m := range ls.agentModes() {
		mode.Options = append(mode.Options, selectOption{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	return []configOption{model, mode}
}

func validMode(id string) bool {
	return slices.ContainsFunc(modes, func(m struct{ id, name, description string }) bool { return m.id == id })
}

func (s *Server) setMode(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
	}
	if err := decode("session/set_mode", params, &p); err != nil {
		return nil, err
	}
	ls, err := s.session("session/set_mode", p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := ls.setMode(ctx, "session/set_mode", p.ModeID); err != nil {
		return nil, err
	}
	// The options as this change left them, not as they are when the
	// answer is out: the client may have changed them again by then.
	opts := ls.configOptions(ctx)
	return rpc.Then{Result: map[string]any{}, After: func() {
		ls.send(update{SessionUpdate: "config_option_update", ConfigOptions: opts})
	}}, nil
}

func (ls *liveSession) setMode(ctx context.Context, method, id string) error {
	if ls.isAgentMode(id) {
		return ls.setAgent(ctx, id)
	}
	if !validMode(id) {
		return invalidParams("%s: mode %q is not one of %s", method, id, strings.Join(ls.modeIDs(), ", "))
	}
	if err := ls.setAgent(ctx, agents.Build); err != nil {
		return err
	}
	if err := ls.ag().Sessions().SetPermissionMode(ctx, ls.id, permissionMode(id)); err != nil {
		return err
	}
	ls.mu.Lock()
	ls.mode = id
	ls.mu.Unlock()
	return nil
}

func (s *Server) setConfigOption(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     json.RawMessage `json:"value"`
	}
	if err := decode("session/set_config_option", params, &p); err != nil {
		return nil, err
	}
	ls, err := s.session("session/set_config_option", p.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil {
		return nil, invalidParams("session/set_config_option: %s takes a value id (a string), not %s", p.ConfigID, p.Value)
	}
	var after func() // once the answer is out
	switch p.ConfigID {
	case "mode":
		if err := ls.setMode(ctx, "session/set_config_option", value); err != nil {
			return nil, err
		}
		after = func() { ls.send(update{SessionUpdate: "current_mode_update", CurrentModeID: value}) }
	case "model":
		if value == "" {
			return nil, invalidParams(`session/set_config_option: model takes a "provider/model-id"`)
		}
		if err := ls.ag().CheckModel(value); err != nil {
			return nil, invalidParams("session/set_config_option: model %q: %v", value, err)
		}
		sess, err := ls.ag().Store().Session(ctx, ls.id)
		if err != nil {
			return nil, err
		}
		sess.Model = value
		if err := ls.ag().Store().PutSession(ctx, sess); err != nil {
			return nil, err
		}
	default:
		return nil, invalidParams("session/set_config_option: darman has no option %q (it has model and mode)", p.ConfigID)
	}
	return rpc.Then{Result: map[string]any{"configOptions": ls.configOptions(ctx)}, After: after}, nil
}

// cancel stops a session's turn; the turn's session/prompt answers
// "cancelled" once its end is stored.
func (s *Server) cancel(ctx context.Context, params json.RawMessage) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		s.log.Warn("acp: session/cancel with bad params", "err", err)
		return
	}
	s.mu.Lock()
	ls := s.sessions[agent.ID(p.SessionID)]
	s.mu.Unlock()
	if ls != nil {
		ls.ag().Sessions().Cancel(ls.id)
	}
}

func (s *Server) prompt(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID string            `json:"sessionId"`
		Prompt    []json.RawMessage `json:"prompt"`
	}
	if err := decode("session/prompt", params, &p); err != nil {
		return nil, err
	}
	ls, err := s.session("session/prompt", p.SessionID)
	if err != nil {
		return nil, err
	}
	parts, err := promptParts(p.Prompt, ls.cwd)
	if err != nil {
		return nil, err
	}
	if res, ok, err := ls.checkpointCommand(ctx, session.MessageText(parts)); ok {
		return res, err
	}
	ls.adopt(ctx)
	s.refreshAgents(ctx, ls.ag())
	parts, done, err := ls.agentPrompt(ctx, parts)
	switch {
	case err != nil:
		return nil, err
	case done:
		return map[string]string{"stopReason": "end_turn"}, nil
	}
	// A prompt that starts with /name runs the command (Sessions.Start
	// finds it, as every front's).
	tn := session.Turn{Session: ls.id, Prompt: parts, Agent: ls.turnAgent()}
	// The turn's questions come on its stream, in its order: each is
	// sent after the updates before it (the tool call it is about).
	tn.Questions = true
	tn.Events = func(u session.Update) {
		if u.Last {
			return
		}
		if up, ok := ls.updateOf(u.Event); ok {
			ls.send(up)
		}
		if u.Question != nil {
			ls.question(u.Question)
		}
	}
	running, err := ls.start(ctx, tn)
	if errors.Is(err, prompt.ErrUnknownCommand) {
		return nil, invalidParams("session/prompt: %v", err)
	}
	if err != nil {
		if name, _, ok := prompt.ParseInvocation(session.MessageText(parts)); ok {
			return nil, fmt.Errorf("/%s: %w", name, err)
		}
		return nil, err
	}
	res := running.Wait()
	switch res.Finish {
	case agent.FinishError:
		return nil, &Error{Code: codeInternalError, Message: "the turn failed: " + res.Error}
	case agent.FinishCancelled:
		return map[string]string{"stopReason": "cancelled"}, nil
	case agent.FinishLength, "context_window":
		return map[string]string{"stopReason": "max_tokens"}, nil
	case agent.FinishStepLimit:
		return map[string]string{"stopReason": "max_turn_requests"}, nil
	case "refusal", "content_filter":
		return map[string]string{"stopReason": "refusal"}, nil
	}
	return map[string]string{"stopReason": "end_turn"}, nil
}

// errMoved refuses a turn that would begin in the agent the session was
// moved away from (adopt): start begins it in the new one.
var errMoved = errors.New("the session moved to its directory's new agent")

// start begins the session's turn, with the session's own tools, unless
// the session was loaded again as the prompt came or the core runs a
// turn in it already (session.ErrBusy); the turn then runs under ctx.
func (ls *liveSession) start(ctx context.Context, tn session.Turn) (*session.Running, error) {
	for {
		ag := ls.ag()
		tn.Tools = ls.tools(ag)
		// Checked as the turn takes the session, in one step with what
		// retire and adopt change between turns.
		tn.Admit = func() error {
			switch {
			case ls.retired.Load():
				return invalidParams("session/prompt: session %s was being loaded again as this prompt came; send it again", ls.id)
			case ls.ag() != ag:
				return errMoved
			}
			return nil
		}
		running, err := ag.Sessions().Start(ctx, tn)
		switch {
		case errors.Is(err, errMoved):
			continue
		case errors.Is(err, session.ErrBusy):
			return nil, invalidParams("session/prompt: session %s is already running a turn; cancel it or wait for its answer", ls.id)
		}
		return running, err
	}
}

// tools are the session's own tools for a turn in ag: its MCP servers',
// and bash in the client's terminal when the client offers one.
func (ls *liveSession) tools(ag *started) []tool.Tool {
	tools := slices.Clone(ls.mcpTools)
	if ls.s.caps().Terminal && ag.Bash() != nil {
		tools = append(tools, tool.NewTerminalBash(&terminal{ls: ls}, ag.Bash()))
	}
	return tools
}

// question asks the client a question of the turn's stream: sent now,
// in the stream's order; its answer goes back to the turn when the user
// gives it, on a goroutine that ends with the answer or the question's
// context.
func (ls *liveSession) question(q *session.Question) {
	if e := q.Elicitation; e != nil {
		// ACP has no request for a form or a URL to open: the user reads
		// why, in its place in the answer, and the server is told
		// decline.
		ls.send(update{SessionUpdate: acpupdate.AgentMessageChunk, Content: text(noticeText(fmt.Sprintf(
			"the MCP server %s asked for your input (%q), which darman cannot ask through this client; it was declined", e.Server, e.Message)))})
		q.AnswerElicitation(permission.ElicitAnswer{}, permission.ErrNoHuman)
		return
	}
	p, err := ls.askPermission(q.Context(), q.Request)
	if err != nil {
		q.Answer(permission.Reply{}, err)
		return
	}
	go func() { q.Answer(p.wait()) }()
}
