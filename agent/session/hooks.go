package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/config"
)

// Hooks runs the user's hooks on a turn's events; agent/hook's Engine is
// one. Its methods are safe for concurrent use.
type Hooks interface {
	// Has reports whether any hook is configured for the event, so that
	// the turn builds no input for nothing.
	Has(hook.Event) bool
	// Run runs the event's matching hooks and returns once they ended (or
	// ctx is done, which stops them).
	Run(ctx context.Context, in hook.Input) hook.Result
	// Go runs them without waiting; report, when set, gets the result.
	Go(ctx context.Context, in hook.Input, report func(hook.Result))
}

// maxStopBlocks bounds how many times Stop hooks may keep one turn
// going.
const maxStopBlocks = 3

// hookHeader starts the text a hook adds to the conversation, so that
// the model, and whoever reads the transcript, knows where it came from.
const hookHeader = "[added by a %s hook]\n"

func (t *turn) hooked(ev hook.Event) bool {
	return t.svc.opts.Hooks != nil && t.svc.opts.Hooks.Has(ev)
}

// runHooks runs ev's hooks for the turn and tells the user what they
// said for the user (messages, failures).
func (t *turn) runHooks(ctx context.Context, in hook.Input) hook.Result {
	in.Session = string(t.id)
	in.Cwd = t.ws.Root()
	res := t.svc.opts.Hooks.Run(ctx, in)
	t.tellHooks(res)
	return res
}

func (t *turn) tellHooks(res hook.Result) {
	for _, m := range res.Messages {
		t.publish(agent.Event{Kind: agent.EventNotice, Text: m})
	}
	for _, f := range res.Failures {
		t.svc.log.Warn("hook failed", "session", t.id, "failure", f)
		t.publish(agent.Event{Kind: agent.EventNotice, Text: f})
	}
}

// halt records a hook's "continue": false: the turn ends after the
// current step.
func (t *turn) halt(res hook.Result) {
	if !res.Stop {
		return
	}
	t.svc.mu.Lock()
	t.halted = true
	t.svc.mu.Unlock()
	reason := res.StopReason
	if reason == "" {
		reason = "a hook ended the turn"
	}
	t.publish(agent.Event{Kind: agent.EventNotice, Text: reason})
}

func (t *turn) isHalted() bool {
	t.svc.mu.Lock()
	defer t.svc.mu.Unlock()
	return t.halted
}

// promptHooks runs, before a top-level turn's message is stored,
// SessionStart (the session's first turn in this service) and
// UserPromptSubmit. It returns the context they add to the message, or
// an error when a UserPromptSubmit hook blocked it: the turn then ends
// with nothing stored or sent, the reason shown to the user.
func (t *turn) promptHooks(ctx context.Context, text string) ([]string, error) {
	if t.parentCall != "" || t.svc.opts.Hooks == nil {
		return nil, nil
	}
	var added []string
	t.svc.mu.Lock()
	first := !t.live.started
	t.live.started = true
	t.svc.mu.Unlock()
	if first && t.hooked(hook.SessionStart) {
		source := "startup"
		if t.sess.Messages > 0 {
			source = "resume"
		}
		res := t.runHooks(ctx, hook.Input{Event: hook.SessionStart, Source: source})
		for _, c := range res.Context {
			added = append(added, fmt.Sprintf(hookHeader, hook.SessionStart)+c)
		}
	}
	if t.hooked(hook.UserPromptSubmit) {
		res := t.runHooks(ctx, hook.Input{Event: hook.UserPromptSubmit, Prompt: text})
		switch {
		case res.Block:
			return nil, fmt.Errorf("a UserPromptSubmit hook blocked the prompt: %s", res.Reason)
		case res.Stop:
			reason := res.StopReason
			if reason == "" {
				reason = "a hook ended the turn"
			}
			return nil, fmt.Errorf("a UserPromptSubmit hook stopped the prompt: %s", reason)
		}
		for _, c := range res.Context {
			added = append(added, fmt.Sprintf(hookHeader, hook.UserPromptSubmit)+c)
		}
	}
	return added, nil
}

// preToolUse runs PreToolUse for a call about to run. It returns, when
// the call must not run, what the model reads instead (denied), else the
// context the hooks add to the call's output. A hook's updatedInput
// becomes the call's input; its "allow" holds until done is called.
func (t *turn) preToolUse(ctx context.Context, call *agent.ToolCall) (denied, added string, done func()) {
	done = func() {}
	if !t.hooked(hook.PreToolUse) {
		return "", "", done
	}
	res := t.runHooks(ctx, hook.Input{Event: hook.PreToolUse, Tool: call.Name, ToolInput: argsOrEmpty(call.Input), ToolUseID: call.CallID})
	t.halt(res)
	if res.Block {
		return "Not run: a PreToolUse hook blocked the call:\n" + res.Reason, "", done
	}
	changed := t.updateInput(call, res.UpdatedInput)
	switch {
	case res.Ask:
		title := "A hook asks before " + call.Name + " runs"
		if res.AskReason != "" {
			title += ": " + res.AskReason
		}
		err := t.live.checker.Check(ctx, permission.Call{Permission: "hook", Subjects: []string{call.Name}, Title: title, CallID: call.CallID})
		if err != nil {
			return "Not run: " + err.Error(), "", done
		}
	case res.Allow && !changed:
		// The hook answers the call's permission questions; the rules'
		// denials still hold. Not for an input the hook rewrote: the
		// user is asked about what runs, as the rules say.
		done = t.allowCall(call.CallID, res.AllowReason)
	}
	for _, c := range res.Context {
		added += "\n\n" + fmt.Sprintf(hookHeader, hook.PreToolUse) + c
	}
	return "", added, done
}

// updateInput makes a PreToolUse hook's updatedInput the call's input
// (stored, so the user sees what ran); the permission checks that follow
// are made on it. It reports whether the input changed.
func (t *turn) updateInput(call *agent.ToolCall, updated json.RawMessage) bool {
	if len(updated) == 0 || !json.Valid(updated) || jsonEqual(updated, argsOrEmpty(call.Input)) {
		return false
	}
	call.Input = slices.Clone(updated)
	t.publish(agent.Event{Kind: agent.EventNotice, Text: fmt.Sprintf("A PreToolUse hook changed the input of %s: %s", call.Name, clipNotice(string(updated)))})
	return true
}

// allowCall records a PreToolUse hook's "allow" for the call until it
// ends: its permission questions are answered yes without asking
// (eventAsker.hookAnswer).
func (t *turn) allowCall(callID, reason string) (forget func()) {
	key := allowedCall{t.live.checker, callID}
	t.svc.mu.Lock()
	if t.svc.hookAllowed == nil {
		t.svc.hookAllowed = map[allowedCall]string{}
	}
	t.svc.hookAllowed[key] = reason
	t.svc.mu.Unlock()
	return func() {
		t.svc.mu.Lock()
		delete(t.svc.hookAllowed, key)
		t.svc.mu.Unlock()
	}
}

// allowedByHook reports whether a PreToolUse hook allowed the running
// call of checker's session, and why.
func (s *Service) allowedByHook(checker *permission.Checker, callID string) (string, bool) {
	if callID == "" || checker == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reason, ok := s.hookAllowed[allowedCall{checker, callID}]
	return reason, ok
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// clipNotice keeps a notice's quoted input short.
func clipNotice(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// postToolUse runs PostToolUse for a call that completed, and returns its
// result with what the hooks said for the model added to the output.
func (t *turn) postToolUse(ctx context.Context, call *agent.ToolCall, info tool.Info, res tool.Result) tool.Result {
	if !t.hooked(hook.PostToolUse) {
		return res
	}
	response := map[string]any{"output": res.Output, "success": true}
	if res.Title != "" {
		response["title"] = res.Title
	}
	if len(res.Metadata) > 0 && json.Valid(res.Metadata) {
		response["metadata"] = res.Metadata
	}
	if res.Diff != nil {
		response["filePath"] = res.Diff.Path
	}
	if info.Kind == agent.ToolKindExecute {
		response["stdout"] = res.Output
	}
	hr := t.runHooks(ctx, hook.Input{Event: hook.PostToolUse, Tool: call.Name, ToolInput: argsOrEmpty(call.Input), ToolUseID: call.CallID, ToolResponse: response})
	t.halt(hr)
	if hr.Block {
		res.Output += "\n\n" + fmt.Sprintf(hookHeader, hook.PostToolUse) + hr.Reason
	}
	for _, c := range hr.Context {
		res.Output += "\n\n" + fmt.Sprintf(hookHeader, hook.PostToolUse) + c
	}
	return res
}

// stopBlocked runs Stop (SubagentStop in a sub-task) once the model
// answered without calling a tool, and reports whether a hook kept the
// turn going: its reason is then stored as a user message for the next
// model call. It does so maxStopBlocks times at most in one turn.
func (t *turn) stopBlocked(ctx context.Context, msg agent.Message) bool {
	ev := hook.Stop
	if t.parentCall != "" {
		ev = hook.SubagentStop
	}
	if !t.hooked(ev) || ctx.Err() != nil || msg.Finish == agent.FinishError {
		return false
	}
	res := t.runHooks(ctx, hook.Input{Event: ev, StopHookActive: t.stops > 0, LastMessage: t.answer.String()})
	if !res.Block || res.Stop || ctx.Err() != nil {
		return false
	}
	if t.stops >= maxStopBlocks {
		t.publish(agent.Event{Kind: agent.EventNotice, Text: fmt.Sprintf("%s hooks blocked the end of the turn %d times; it ends now: %s", ev, maxStopBlocks, res.Reason)})
		return false
	}
	t.stops++
	now := time.Now().UTC()
	user := agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleUser, Created: now, Completed: now}
	if err := t.svc.opts.Store.PutMessage(ctx, user); err != nil {
		t.svc.log.Error("cannot store a Stop hook's feedback", "session", t.id, "err", err)
		return false
	}
	t.save(ctx, agent.Part{ID: agent.NewPartID(), MessageID: user.ID, SessionID: t.id, Kind: agent.PartText, Text: fmt.Sprintf(hookHeader, ev) + res.Reason})
	t.publish(agent.Event{Kind: agent.EventNotice, Text: fmt.Sprintf("A %s hook kept the turn going: %s", ev, res.Reason)})
	return true
}

// preCompact runs PreCompact before the history is summarized.
func (t *turn) preCompact(ctx context.Context) {
	if t.hooked(hook.PreCompact) {
		t.runHooks(ctx, hook.Input{Event: hook.PreCompact, Trigger: "auto"})
	}
}

// endSessions runs SessionEnd for every session that began in this
// service, at the same time, as the service closes.
func (s *Service) endSessions() {
	if s.opts.Hooks == nil || !s.opts.Hooks.Has(hook.SessionEnd) {
		return
	}
	s.mu.Lock()
	var ids []agent.ID
	for id, l := range s.live {
		if l.started {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The service is closing: no caller's context is left, and
			// the hooks' own timeouts bound the wait.
			res := s.opts.Hooks.Run(context.Background(), hook.Input{Event: hook.SessionEnd, Session: string(id), Cwd: s.opts.Workspace.Root(), Reason: "other"})
			for _, f := range res.Failures {
				s.log.Warn("hook failed", "session", id, "failure", f)
			}
		}()
	}
	wg.Wait()
}

// notify runs Notification for a permission question, without holding
// the question up; a failure is told on the session's bus.
func (a *eventAsker) notify(ctx context.Context, req permission.Request) {
	if a.hooks == nil || !a.hooks.Has(hook.Notification) {
		return
	}
	what := req.Title
	if what == "" {
		what = req.Permission + " " + strings.Join(req.Patterns, ", ")
	}
	a.hooks.Go(ctx, hook.Input{Event: hook.Notification, Session: string(a.session), Cwd: a.root,
		Message: "darman needs your permission: " + what, NotificationType: "permission_prompt"}, func(res hook.Result) {
		for _, f := range append(res.Messages, res.Failures...) {
			a.bus.Publish(agent.Event{Kind: agent.EventNotice, SessionID: a.session, Text: f})
		}
	})
}

// hookAnswer answers, yes for this once, a question about a call that a
// PreToolUse hook allowed; the user is told, as a notice, instead of
// asked. A protected path's question is not the hook's to answer: only a
// protected_path rule or the user allows writing the files that make
// programs run later (the hooks' own settings among them), as Claude
// Code keeps its critical paths from a hook's allow. Nor is running a
// command outside the sandbox (sandbox_escape): a hook may come with the
// repository, and leaving the sandbox is the user's call alone. Nor is a question
// the user's own ask rule asks (req.AskedBy), even for one command of
// many: Claude Code's hook allow does not override ask rules either. The
// user is told why the hook's allow did not hold, and asked.
func (a *eventAsker) hookAnswer(req permission.Request) (permission.Reply, bool) {
	if a.allowed == nil || config.UserOnly(req.Permission) {
		return permission.Reply{}, false
	}
	reason, ok := a.allowed(req.CallID)
	if !ok {
		return permission.Reply{}, false
	}
	if len(req.AskedBy) > 0 {
		rules := make([]string, len(req.AskedBy))
		for i, r := range req.AskedBy {
			rules[i] = r.String()
		}
		a.bus.Publish(agent.Event{Kind: agent.EventNotice, SessionID: a.session, Text: "A PreToolUse hook allowed " + req.Permission + " " +
			strings.Join(req.Patterns, ", ") + ", but your rule " + strings.Join(rules, " and ") +
			" asks you: a hook's allow does not answer your own ask rules"})
		return permission.Reply{}, false
	}
	text := "A PreToolUse hook allowed " + req.Permission + " " + strings.Join(req.Patterns, ", ")
	if reason != "" {
		text += ": " + reason
	}
	a.bus.Publish(agent.Event{Kind: agent.EventNotice, SessionID: a.session, Text: text})
	return permission.Reply{Answer: permission.AllowOnce}, true
}
