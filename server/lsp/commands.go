package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/update"
	"github.com/darman-dev/darman/server/rpc"
)

// A command answers at once: whatever it starts (a turn) runs on. Its
// argument is the one object of executeCommand's arguments, nil when
// there is none.
type command func(s *Server, ctx context.Context, arg json.RawMessage) (any, error)

var commands = map[string]command{
	"darman.prompt":            (*Server).cmdPrompt,
	"darman.cancel":            (*Server).cmdCancel,
	"darman.session.new":       (*Server).cmdSessionNew,
	"darman.session.list":      (*Server).cmdSessionList,
	"darman.session.load":      (*Server).cmdSessionLoad,
	"darman.session.image":     (*Server).cmdSessionImage,
	"darman.session.delete":    (*Server).cmdSessionDelete,
	"darman.session.rename":    (*Server).cmdSessionRename,
	"darman.permission.answer": (*Server).cmdPermissionAnswer,
	"darman.transcript.open":   (*Server).cmdTranscriptOpen,
	"darman.command.run":       (*Server).cmdCommandRun,
	"darman.command.list":      (*Server).cmdCommandList,
	"darman.model.list":        (*Server).cmdModelList,
	"darman.status":            (*Server).cmdStatus,
	"darman.turn.revert":       (*Server).cmdTurnRevert,
	"darman.turn.redo":         (*Server).cmdTurnRedo,
	"darman.turn.apply":        (*Server).cmdTurnApply,
	"darman.session.fork":      (*Server).cmdSessionFork,
	"darman.trust":             (*Server).cmdTrust,
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	cmd, ok := commands[p.Command]
	if !ok {
		return nil, rpc.InvalidParams("unknown command %q; darman's commands are %s", p.Command, strings.Join(commandNames(), ", "))
	}
	if len(p.Arguments) > 1 {
		return nil, rpc.InvalidParams("%s takes one argument, an object; got %d arguments", p.Command, len(p.Arguments))
	}
	var arg json.RawMessage
	if len(p.Arguments) == 1 {
		arg = p.Arguments[0]
	}
	return cmd(s, ctx, arg)
}

// args decodes a command's argument object, refusing unknown fields.
func args(name string, arg json.RawMessage, v any) error {
	err := rpc.DecodeStrict(arg, v)
	var je *rpc.Error
	if errors.As(err, &je) {
		return rpc.InvalidParams("%s: %s", name, strings.TrimPrefix(je.Message, "invalid params: "))
	}
	return err
}

// promptContext is the editor context a prompt is about.
type promptContext struct {
	URI   string          `json:"uri"`
	Range *protocol.Range `json:"range,omitempty"`
}

type promptArgs struct {
	SessionID string         `json:"sessionId,omitempty"`
	Prompt    string         `json:"prompt"`
	Context   *promptContext `json:"context,omitempty"`
	Model     string         `json:"model,omitempty"`
	Agent     string         `json:"agent,omitempty"`
	// Images are attached to the prompt (image.go).
	Images []promptImage `json:"images,omitempty"`
	// Handoff, with SessionID and no Prompt, is the plan → build
	// hand-off (the panel's "Build it"): the build agent is sent the
	// server's hand-off prompt in the session that holds the plan.
	Handoff bool `json:"handoff,omitempty"`
	// References are files, folders and editor text attached by name
	// (references.go).
	References []promptReference `json:"references,omitempty"`
}

type turnResult struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

func (s *Server) cmdPrompt(ctx context.Context, arg json.RawMessage) (any, error) {
	var a promptArgs
	if err := args("darman.prompt", arg, &a); err != nil {
		return nil, err
	}
	if a.Handoff {
		if a.SessionID == "" || a.Prompt != "" || a.Agent != "" && a.Agent != agents.Build {
			return nil, rpc.InvalidParams("darman.prompt: handoff sends the plan of the session named by sessionId to build; it takes no prompt and no other agent")
		}
		a.Prompt, a.Agent = handoffPrompt, agents.Build
	}
	if strings.TrimSpace(a.Prompt) == "" && len(a.Images) == 0 {
		return nil, rpc.InvalidParams("darman.prompt: prompt is required: the text to send to the agent")
	}
	if err := s.checkPromptAgent(a.Agent); err != nil {
		return nil, err
	}
	imgs, err := imageParts("darman.prompt", a.Images)
	if err != nil {
		return nil, err
	}
	refs, err := s.referenceParts(ctx, a.References)
	if err != nil {
		return nil, rpc.InvalidParams("darman.prompt: references: %v", err)
	}
	tn := session.Turn{Prompt: append(append(session.Text(a.Prompt), refs...), imgs...), Model: a.Model, Agent: a.Agent}
	if a.Context != nil {
		c, err := s.contextText(a.Context)
		if err != nil {
			return nil, rpc.InvalidParams("darman.prompt: context: %v", err)
		}
		tn.Context = c
	}
	return s.prompt(ctx, a.SessionID, a.Model, tn, a.Prompt)
}

// prompt starts the turn tn in the session (a new one, on model, when id
// is empty); title names the turn in progress and messages.
func (s *Server) prompt(ctx context.Context, id, model string, tn session.Turn, title string) (any, error) {
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	var sid agent.ID
	if id == "" {
		if sid, err = s.newSession(ctx, ag, "", model); err != nil {
			return nil, err
		}
	} else if sid, err = sessionArg(id); err != nil {
		return nil, rpc.InvalidParams("%v", err)
	}
	// With an existing session, tn.Model runs this turn on another model;
	// the session keeps its own for the turns after.
	tn.Session = sid
	t, err := s.startTurn(ctx, ag, tn, title)
	if err != nil {
		return nil, err
	}
	s.notePromptAgent(sid, tn.Agent)
	return turnResult{SessionID: string(sid), TurnID: t.id}, nil
}

func (s *Server) newSession(ctx context.Context, ag *Agent, title, model string) (agent.ID, error) {
	if model == "" {
		m, err := ag.Runtime.Model(ctx)
		if err != nil {
			return "", err
		}
		model = m
	}
	sess, err := ag.Sessions.Create(ctx, session.CreateOptions{Model: model, Title: title})
	if err != nil {
		return "", err
	}
	return sess.ID, nil
}

// contextText describes an editor location for the model: the file, and
// the selected lines as the editor holds them.
func (s *Server) contextText(c *promptContext) (string, error) {
	path, err := buffer.URIToPath(c.URI)
	if err != nil {
		return "", err
	}
	shown := path
	if s.ws != nil {
		shown = s.ws.Shown(path)
	}
	if c.Range == nil {
		return "The user is looking at " + shown + ".", nil
	}
	first, last := c.Range.Start.Line+1, c.Range.End.Line+1
	if c.Range.End.Character == 0 && last > first {
		last-- // a selection that ends at a line's start holds the lines above it
	}
	doc := s.docs.AtPath(path)
	if doc == nil || doc.Lost != nil {
		return fmt.Sprintf("The user selected %s lines %d-%d.", shown, first, last), nil
	}
	start, end, err := doc.Content.Offsets(*c.Range)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("The user selected %s lines %d-%d:\n```%s\n%s\n```", shown, first, last,
		doc.LanguageID, strings.TrimSuffix(numbered(doc.Content.String()[start:end], int(first)), "\n")), nil
}

type sessionArgs struct {
	SessionID string `json:"sessionId"`
}

func (s *Server) sessionOf(name string, arg json.RawMessage) (agent.ID, error) {
	var a sessionArgs
	if err := args(name, arg, &a); err != nil {
		return "", err
	}
	return requireSession(name, a.SessionID)
}

type empty struct{}

func (s *Server) cmdCancel(_ context.Context, arg json.RawMessage) (any, error) {
	id, err := s.sessionOf("darman.cancel", arg)
	if err != nil {
		return nil, err
	}
	s.cancelTurn(id)
	return empty{}, nil
}

func (s *Server) cmdSessionNew(ctx context.Context, arg json.RawMessage) (any, error) {
	var a struct {
		Title string `json:"title,omitempty"`
		Model string `json:"model,omitempty"`
	}
	if err := args("darman.session.new", arg, &a); err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	id, err := s.newSession(ctx, ag, a.Title, a.Model)
	if err != nil {
		return nil, err
	}
	return map[string]string{"sessionId": string(id)}, nil
}

type sessionInfo struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
	State     string    `json:"state"`
	Model     string    `json:"model"`
}

// maxSessionPage caps the page darman.session.list returns.
const maxSessionPage = 1000

// cmdSessionList lists the workspace's sessions, most recently updated
// first: all of them, or a page (limit) and the cursor of the next one.
func (s *Server) cmdSessionList(ctx context.Context, arg json.RawMessage) (any, error) {
	const name = "darman.session.list"
	var a struct {
		Limit  int    `json:"limit,omitempty"`
		Cursor string `json:"cursor,omitempty"`
	}
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	if a.Limit < 0 || a.Limit > maxSessionPage {
		return nil, rpc.InvalidParams("%s: limit must be between 1 and %d (or absent: every session)", name, maxSessionPage)
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	opts := store.ListOptions{Workspace: s.root, After: a.Cursor}
	if a.Limit > 0 {
		opts.Limit = a.Limit + 1 // one more, to know whether there is a next page
	}
	list, err := ag.Store.ListSessions(ctx, opts)
	if err != nil {
		return nil, err
	}
	next := ""
	if a.Limit > 0 && len(list) > a.Limit {
		list = list[:a.Limit]
		next = store.Cursor(list[len(list)-1])
	}
	out := make([]sessionInfo, 0, len(list))
	for _, sess := range list {
		state := update.StateIdle
		if ag.Sessions.Busy(sess.ID) {
			state = update.StateRunning
		}
		out = append(out, sessionInfo{SessionID: string(sess.ID), Title: sess.Title, UpdatedAt: sess.Updated, State: state, Model: sess.Model})
	}
	if next != "" {
		return map[string]any{"sessions": out, "nextCursor": next}, nil
	}
	return map[string]any{"sessions": out}, nil
}

// historyPage is how many messages darman.session.load returns when the
// client does not say: the store's page, enough to show a session and
// continue it, and read in the same time however long the session is.
const historyPage = 100

// maxHistoryPage caps a page a client asks for, so that no request decodes
// an unbounded history at once.
const maxHistoryPage = 1000

// cmdSessionLoad returns a page of a session's history, by default its
// last: what a front needs to show the session and continue it. Older
// pages come on request (before: the first message of the page shown).
func (s *Server) cmdSessionLoad(ctx context.Context, arg json.RawMessage) (any, error) {
	const name = "darman.session.load"
	var a struct {
		SessionID string `json:"sessionId"`
		Before    string `json:"before,omitempty"`
		Limit     int    `json:"limit,omitempty"`
	}
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	id, err := requireSession(name, a.SessionID)
	if err != nil {
		return nil, err
	}
	opts := store.PageOptions{Limit: historyPage}
	if a.Before != "" {
		if err := agent.ID(a.Before).Validate(agent.MessagePrefix); err != nil {
			return nil, rpc.InvalidParams("%s: before: %v; pass the firstMessageId of the page you have", name, err)
		}
		opts.Before = agent.ID(a.Before)
	}
	switch {
	case a.Limit < 0 || a.Limit > maxHistoryPage:
		return nil, rpc.InvalidParams("%s: limit is %d; pass 1 to %d messages, or leave it out for %d", name, a.Limit, maxHistoryPage, historyPage)
	case a.Limit > 0:
		opts.Limit = a.Limit
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := ag.Store.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	page, err := ag.Store.Page(ctx, id, opts)
	if err != nil {
		return nil, err
	}
	state := update.StateIdle
	if ag.Sessions.Busy(id) {
		state = update.StateRunning
	}
	updates, turns := update.HistoryTurns(page.Messages)
	turns = s.changedTurns(ctx, ag, id, turns)
	return loadResult{SessionID: string(id), Title: sess.Title, Model: sess.Model, Agent: sess.Agent, State: state,
		Updates: updates, Turns: turns, More: page.More, FirstMessageID: firstMessage(page.Messages)}, nil
}

// loadResult is darman.session.load's answer. More says older messages
// come before the page; FirstMessageID, the page's first message, is what
// the client passes as before to get them.
type loadResult struct {
	SessionID string          `json:"sessionId"`
	Title     string          `json:"title"`
	Model     string          `json:"model"`
	Agent     string          `json:"agent,omitempty"` // the session's agent; absent for build
	State     string          `json:"state"`
	Updates   []update.Update `json:"updates"`
	// Turns are the turns whose user message is on the page, in order.
	Turns          []update.TurnStart `json:"turns,omitempty"`
	More           bool               `json:"more"`
	FirstMessageID string             `json:"firstMessageId,omitempty"`
}

func firstMessage(msgs []agent.MessageWithParts) string {
	if len(msgs) == 0 {
		return ""
	}
	return string(msgs[0].Message.ID)
}

func (s *Server) cmdSessionDelete(ctx context.Context, arg json.RawMessage) (any, error) {
	id, err := s.sessionOf("darman.session.delete", arg)
	if err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	// A running turn is cancelled first, and the session deleted once it
	// ended; no turn starts meanwhile.
	err = ag.Sessions.AfterTurn(ctx, id, func() error {
		s.mu.Lock()
		l := s.live[id]
		delete(s.live, id)
		s.mu.Unlock()
		if l != nil && l.relay != nil {
			l.relay.stop()
			<-l.relay.done
		}
		return ag.Store.DeleteSession(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	if err := ag.Runtime.Deleted(id); err != nil {
		s.log.Warn("lsp: what others keep of a deleted session stays", "session", id, "err", err)
	}
	return empty{}, nil
}

func (s *Server) cmdSessionRename(ctx context.Context, arg json.RawMessage) (any, error) {
	var a struct {
		SessionID string `json:"sessionId"`
		Title     string `json:"title"`
	}
	if err := args("darman.session.rename", arg, &a); err != nil {
		return nil, err
	}
	id, err := requireSession("darman.session.rename", a.SessionID)
	if err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	if err := ag.Sessions.Rename(ctx, id, a.Title); err != nil {
		return nil, fmt.Errorf("darman.session.rename: %w", err)
	}
	return empty{}, nil
}

// commandInfo is one entry of darman.command.list.
type commandInfo struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	ArgumentHint string `json:"argumentHint,omitempty"`
}

func (s *Server) cmdCommandList(ctx context.Context, arg json.RawMessage) (any, error) {
	if err := args("darman.command.list", arg, &struct{}{}); err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	out := []commandInfo{}
	for _, c := range s.loadCommands(ag).List() {
		out = append(out, commandInfo{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	return map[string]any{"commands": out}, nil
}

func (s *Server) cmdPermissionAnswer(_ context.Context, arg json.RawMessage) (any, error) {
	var a answerArgs
	if err := args("darman.permission.answer", arg, &a); err != nil {
		return nil, err
	}
	if err := s.answerPermission(a); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func (s *Server) cmdTranscriptOpen(ctx context.Context, arg json.RawMessage) (any, error) {
	var a struct {
		SessionID string `json:"sessionId,omitempty"`
	}
	if err := args("darman.transcript.open", arg, &a); err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	var id agent.ID
	if a.SessionID != "" {
		if id, err = sessionArg(a.SessionID); err != nil {
			return nil, rpc.InvalidParams("darman.transcript.open: %v", err)
		}
	} else {
		list, err := ag.Store.ListSessions(ctx, store.ListOptions{Workspace: s.root, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, errors.New("darman.transcript.open: there is no session in this workspace yet")
		}
		id = list[0].ID
	}
	uri, err := s.openTranscript(ctx, ag, id)
	if err != nil {
		return nil, err
	}
	return map[string]string{"uri": uri}, nil
}

type commandRunArgs struct {
	Name      string         `json:"name"`
	Arguments string         `json:"arguments,omitempty"`
	Context   *promptContext `json:"context,omitempty"`
	SessionID string         `json:"sessionId,omitempty"`
}

func (s *Server) cmdCommandRun(ctx context.Context, arg json.RawMessage) (any, error) {
	var a commandRunArgs
	if err := args("darman.command.run", arg, &a); err != nil {
		return nil, err
	}
	if a.Name == "" {
		return nil, rpc.InvalidParams("darman.command.run: name is required: a command of .darman/command/, without the slash")
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(a.Name, "/")
	cmd, ok := s.loadCommands(ag).Get(name)
	if !ok {
		return nil, rpc.InvalidParams("darman.command.run: there is no command %q (see darman.command.list, and .darman/command/*.md for your own)", name)
	}
	tn := session.Turn{Command: &cmd, Args: a.Arguments}
	if a.Context != nil {
		c, err := s.contextText(a.Context)
		if err != nil {
			return nil, rpc.InvalidParams("darman.command.run: context: %v", err)
		}
		tn.Context = c
	}
	// The command's model is a new session's model, and the model of the
	// turn (session.Turn.Command).
	model := cmd.Model
	if a.SessionID != "" {
		model = ""
	}
	return s.prompt(ctx, a.SessionID, model, tn, strings.TrimSpace("/"+name+" "+a.Arguments))
}

// loadCommands finds the commands again, and keeps them for the code
// actions.
func (s *Server) loadCommands(ag *Agent) *prompt.Commands {
	cmds := ag.Sessions.Commands()
	s.commands.Store(cmds)
	return cmds
}

// knownCommands are the commands last found, looking only the first time.
func (s *Server) knownCommands(ag *Agent) *prompt.Commands {
	if cmds := s.commands.Load(); cmds != nil {
		return cmds
	}
	return s.loadCommands(ag)
}

func (s *Server) cmdStatus(ctx context.Context, arg json.RawMessage) (any, error) {
	var a struct {
		SessionID string `json:"sessionId,omitempty"`
	}
	if err := args("darman.status", arg, &a); err != nil {
		return nil, err
	}
	s.mu.Lock()
	folders := slices.Clone(s.folders)
	s.mu.Unlock()
	running := len(s.runningTurns())
	status := map[string]any{
		"version":         s.opts.Version,
		"protocolVersion": ProtocolVersion,
		"root":            s.root,
		"folders":         folders,
		"client":          map[string]any{"name": s.client.name, "version": s.client.version, "optIns": s.client.opt},
		"runningTurns":    running,
	}
	if c := s.complete.Status(); c != nil {
		status["completion"] = c
	}
	select {
	case <-s.agent.ready:
	default:
		status["agent"] = map[string]any{"state": "starting"}
		return status, nil
	}
	ag, err := s.agent.peek()
	if err != nil {
		status["agent"] = map[string]any{"state": "failed", "error": err.Error()}
		return status, nil
	}
	agentStatus := map[string]any{"state": "ready", "agents": agentInfos(s.catalog()), "currentAgent": agentOf(ctx, ag, a.SessionID)}
	if m, err := ag.Runtime.Model(ctx); err == nil {
		agentStatus["model"] = m
	} else {
		agentStatus["modelError"] = err.Error()
	}
	for k, v := range ag.Runtime.Status(ctx) {
		agentStatus[k] = v
	}
	status["agent"] = agentStatus
	return status, nil
}

// numbered puts line numbers before the lines of s, the first being first.
func numbered(s string, first int) string {
	var b strings.Builder
	for i, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(&b, "%d\t%s", first+i, line)
	}
	return b.String()
}

// requireSession is the session a command names in its sessionId, which it
// requires: InvalidParams when it is missing or not a session id.
func requireSession(command, id string) (agent.ID, error) {
	if id == "" {
		return "", rpc.InvalidParams("%s: sessionId is required", command)
	}
	sid, err := sessionArg(id)
	if err != nil {
		return "", rpc.InvalidParams("%s: %v", command, err)
	}
	return sid, nil
}

// sessionArg checks a sessionId argument.
func sessionArg(id string) (agent.ID, error) {
	if err := agent.ID(id).Validate(agent.SessionPrefix); err != nil {
		return "", fmt.Errorf("sessionId: %w", err)
	}
	return agent.ID(id), nil
}
