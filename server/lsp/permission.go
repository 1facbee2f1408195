package lsp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/update"
	"github.com/darman-dev/darman/server/rpc"
)

// asker is the agent's permission.Asker over LSP. It asks the way the
// client can answer:
//
//   - darman/requestPermission, for a client that opted in;
//   - otherwise window/showMessageRequest;
//   - for a client that answers that with MethodNotFound (Helix 25.07), a
//     window/showMessage that points at the "darman: allow …" and
//     "darman: reject …" code actions, which answer through
//     darman.permission.answer; no answer within
//     Options.PermissionTimeout is a rejection.
//
// darman.permission.answer answers any open question, whichever way it was
// asked.
type asker struct{ s *Server }

func (a *asker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	turnID := ""
	if t := a.s.runningTurn(req.Session); t != nil {
		turnID = t.id
	}
	return a.s.ask(ctx, req, turnID, func() {})
}

// askOnStream asks a question of turn t's stream (session.Turn.Questions):
// its first message is written before askOnStream returns, so after every
// update the relay sent before it; the answer goes back to the turn once
// the user gives it, or the question's context ends. An MCP server's
// elicitation is the editorGate's (askElicitOnStream).
func (s *Server) askOnStream(t *liveTurn, sq *session.Question) {
	if sq.Elicitation != nil {
		s.askElicitOnStream(sq)
		return
	}
	sent := make(chan struct{})
	s.goOwned(func() {
		sq.Answer(s.ask(sq.Context(), sq.Request, t.id, sync.OnceFunc(func() { close(sent) })))
	})
	<-sent
}

// question is a permission question waiting for the user.
type question struct {
	id      string
	req     permission.Request
	session agent.ID
	turnID  string
	asked   time.Time
	answer  chan permission.Reply // buffered: the first answer wins
}

func (q *question) give(r permission.Reply) {
	select {
	case q.answer <- r:
	default:
	}
}

// questions are the open permission questions. Safe for concurrent use.
type questions struct {
	mu   sync.Mutex
	open map[string]*question
	n    atomic.Uint64
	// noShowMessageRequest is set once the client answered
	// showMessageRequest with MethodNotFound.
	noShowMessageRequest atomic.Bool
}

func (qs *questions) add(q *question) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.open == nil {
		qs.open = map[string]*question{}
	}
	qs.open[q.id] = q
}

func (qs *questions) remove(id string) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	delete(qs.open, id)
}

func (qs *questions) get(id string) *question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.open[id]
}

// list returns the open questions, oldest first.
func (qs *questions) list() []*question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	out := make([]*question, 0, len(qs.open))
	for _, q := range qs.open {
		out = append(out, q)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].asked.Before(out[j-1].asked); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// The options of a question, as ACP names them; optionId is the answer.
var permissionOptions = []struct {
	answer permission.Answer
	name   string
}{
	{permission.AllowOnce, "Allow once"},
	{permission.AllowAlways, "Always allow"},
	{permission.RejectOnce, "Reject"},
	{permission.RejectAlways, "Always reject"},
}

// ask asks req, of the turn turnID ("" for none), and waits for the
// answer; sent is called once the question's first message was written to
// the client (or could not be), and must be safe to call again.
func (s *Server) ask(ctx context.Context, req permission.Request, turnID string, sent func()) (permission.Reply, error) {
	defer sent()
	q := &question{
		id:      "perm_" + strconv.FormatUint(s.questions.n.Add(1), 10),
		req:     req,
		session: req.Session,
		turnID:  turnID,
		asked:   time.Now(),
		answer:  make(chan permission.Reply, 1),
	}
	s.questions.add(q)
	defer s.questions.remove(q.id)

	askCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.putQuestion(askCtx, q, sent)
	}()
	select {
	case r := <-q.answer:
		return r, nil
	case <-ctx.Done():
		return permission.Reply{}, ctx.Err()
	}
}

// putQuestion asks q the way the client can answer, and gives the answer
// to q; sent is called once the first way tried was written.
func (s *Server) putQuestion(ctx context.Context, q *question, sent func()) {
	defer sent()
	if s.client.opt.RequestPermission {
		r, err := s.requestPermission(ctx, q, sent)
		switch {
		case err == nil:
			q.give(r)
			return
		case ctx.Err() != nil:
			return
		}
		s.log.Warn("lsp: darman/requestPermission failed; asking with showMessageRequest", "err", err)
	}
	if !s.questions.noShowMessageRequest.Load() {
		r, err := s.showMessageRequest(ctx, q, sent)
		switch {
		case err == nil:
			q.give(r)
			return
		case ctx.Err() != nil:
			return
		case rpc.IsMethodNotFound(err):
			s.questions.noShowMessageRequest.Store(true)
		default:
			s.log.Warn("lsp: showMessageRequest failed; offering code actions", "err", err)
		}
	}
	s.askWithCodeActions(ctx, q, sent)
}

func describe(req permission.Request) string {
	if req.Title != "" {
		return req.Title
	}
	return req.Permission + " " + strings.Join(req.Patterns, ", ")
}

// requestPermissionParams are darman/requestPermission's params.
type requestPermissionParams struct {
	SessionID string             `json:"sessionId"`
	TurnID    string             `json:"turnId,omitempty"`
	RequestID string             `json:"requestId"`
	ToolCall  permissionToolCall `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionToolCall struct {
	ToolCallID string   `json:"toolCallId,omitempty"`
	Title      string   `json:"title"`
	Permission string   `json:"permission"`
	Subjects   []string `json:"subjects,omitempty"`
	// Always are the patterns an allow_always answer grants.
	Always  []string                 `json:"always,omitempty"`
	Reasons []string                 `json:"reasons,omitempty"`
	Content []update.ToolCallContent `json:"content,omitempty"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type requestPermissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"` // selected or cancelled
		OptionID string `json:"optionId"`
		Message  string `json:"message"`
	} `json:"outcome"`
}

func (s *Server) requestPermission(ctx context.Context, q *question, sent func()) (permission.Reply, error) {
	tc := permissionToolCall{ToolCallID: q.req.CallID, Title: describe(q.req), Permission: q.req.Permission,
		Subjects: q.req.Patterns, Always: q.req.Suggest, Reasons: q.req.Reasons}
	// Every file of a patch, so the user sees all it would change.
	for _, d := range q.req.Diffs {
		tc.Content = append(tc.Content, update.ToolCallContent{Type: "diff", URI: buffer.PathToURI(d.Path), OldText: &d.OldText, NewText: &d.NewText})
	}
	params := requestPermissionParams{SessionID: string(q.session), TurnID: q.turnID, RequestID: q.id, ToolCall: tc}
	for _, o := range permissionOptions {
		params.Options = append(params.Options, permissionOption{OptionID: string(o.answer), Name: o.name, Kind: string(o.answer)})
	}
	p, err := s.send(ctx, s.opts.PermissionTimeout, "darman/requestPermission", params)
	if err != nil {
		return permission.Reply{}, err
	}
	sent()
	var res requestPermissionResult
	if err := s.wait(p, "darman/requestPermission", &res); err != nil {
		return permission.Reply{}, err
	}
	switch res.Outcome.Outcome {
	case "selected":
		answer := permission.Answer(res.Outcome.OptionID)
		if !validAnswer(answer) {
			return permission.Reply{}, fmt.Errorf("darman/requestPermission: the client chose %q, which is not one of the options", res.Outcome.OptionID)
		}
		return permission.Reply{Answer: answer, Message: res.Outcome.Message}, nil
	case "cancelled":
		return permission.Reply{Answer: permission.RejectOnce, Message: "the user dismissed the question"}, nil
	}
	return permission.Reply{}, fmt.Errorf("darman/requestPermission: outcome %q is neither selected nor cancelled", res.Outcome.Outcome)
}

func validAnswer(a permission.Answer) bool {
	for _, o := range permissionOptions {
		if o.answer == a {
			return true
		}
	}
	return false
}

// showMessageRequest asks with the editor's own prompt. The safe answer
// comes first: Emacs offers the first action as the default.
func (s *Server) showMessageRequest(ctx context.Context, q *question, sent func()) (permission.Reply, error) {
	always := "Always allow"
	if len(q.req.Suggest) > 0 {
		always += " " + strings.Join(q.req.Suggest, ", ")
	}
	actions := []protocol.MessageActionItem{{Title: "Reject"}, {Title: "Allow once"}, {Title: always}}
	msg := "darman wants to " + q.req.Permission + ": " + describe(q.req)
	if len(q.req.Reasons) > 0 {
		msg += " (" + strings.Join(q.req.Reasons, "; ") + ")"
	}
	p, err := s.send(ctx, s.opts.PermissionTimeout, protocol.ServerWindowShowMessageRequest,
		protocol.ShowMessageRequestParams{Type: protocol.MessageTypeWarning, Message: msg, Actions: actions})
	if err != nil {
		return permission.Reply{}, err
	}
	sent()
	var choice *protocol.MessageActionItem
	if err := s.wait(p, protocol.ServerWindowShowMessageRequest, &choice); err != nil {
		return permission.Reply{}, err
	}
	switch {
	case choice == nil:
		return permission.Reply{Answer: permission.RejectOnce, Message: "the user dismissed the question"}, nil
	case choice.Title == "Allow once":
		return permission.Reply{Answer: permission.AllowOnce}, nil
	case choice.Title == always:
		return permission.Reply{Answer: permission.AllowAlways}, nil
	}
	return permission.Reply{Answer: permission.RejectOnce}, nil
}

// askWithCodeActions tells the user about the question and waits for
// darman.permission.answer (which the code actions run) or the timeout.
func (s *Server) askWithCodeActions(ctx context.Context, q *question, sent func()) {
	timeout := s.opts.PermissionTimeout
	s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
		"darman wants to %s: %s. Answer with the code action \"darman: allow …\" or \"darman: reject …\" "+
			"(or the command darman.permission.answer {\"requestId\": %q, \"optionId\": \"allow_once\"}); "+
			"without an answer within %s it is rejected.",
		q.req.Permission, describe(q.req), q.id, timeout))
	sent()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-t.C:
		q.give(permission.Reply{Answer: permission.RejectOnce, Message: fmt.Sprintf("the user did not answer within %s", timeout)})
	case <-ctx.Done():
	}
}

// answerArgs are darman.permission.answer's arguments.
type answerArgs struct {
	RequestID string `json:"requestId"`
	OptionID  string `json:"optionId"`
	Message   string `json:"message,omitempty"`
}

func (s *Server) answerPermission(args answerArgs) error {
	if args.RequestID == "" {
		return rpc.InvalidParams("darman.permission.answer: requestId is required")
	}
	answer := permission.Answer(args.OptionID)
	if !validAnswer(answer) {
		return rpc.InvalidParams("darman.permission.answer: optionId %q is not allow_once, allow_always, reject_once or reject_always", args.OptionID)
	}
	q := s.questions.get(args.RequestID)
	if q == nil {
		return errors.New("darman.permission.answer: no open permission question " + strconv.Quote(args.RequestID) + " (it was answered, timed out, or its turn ended)")
	}
	q.give(permission.Reply{Answer: answer, Message: args.Message})
	return nil
}
