package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/tool"
)

// turn is one turn Start began, or a sub-task's: it owns the messages and parts it writes.
type turn struct {
	svc  *Service
	live *live
	id   agent.ID
	// modelRef is the turn's "provider/model-id"; run sets it to the
	// session's when the caller chose none.
	modelRef string
	// tools are what the turn offers the model, in the order sent; with
	// a source they are made again before each model call.
	tools []tool.Tool
	// source, when set, is asked for the tools that come and go (the MCP
	// servers'), at the turn's start and before each model call.
	source tool.Source
	// own are the turn's own tools, over the service's (Turn.Tools).
	own []tool.Tool
	// parentCall is, in a sub-task's turn, the parent's task call: every
	// event of the turn carries it.
	parentCall string
	// pauseParent, in a sub-task's turn, stops the parent's task call's
	// timeout while this turn waits for a person (its Env.Pause).
	pauseParent func() (resume func())
	// task marks a sub-task's turn that has a source: its tools are made
	// by taskTools, limited to only when the task call named tools.
	task bool
	only []string
	// expand makes the user's message once the turn has begun: a
	// command's template that runs !`cmd`, so that its permission
	// question is the turn's; nil sends the text as it is.
	expand func(ctx context.Context) (string, error)
	// typed is what the user typed when the message the model reads is
	// not it (agent.Part.Typed); "" when it is.
	typed string
	// builtin, set on a built-in command's turn, is all the turn does:
	// it returns the answer shown (see builtin.go).
	builtin func(ctx context.Context) (string, error)

	// ws is the workspace the turn's tools work on (Options.WorkspaceFor).
	ws tool.Workspace
	// agent runs the turn: its tools, rules, prompt and limits (see
	// agents.go).
	agent agents.Agent

	// userMsg is the turn's user message once stored; label the front's
	// name of the turn (Turn.ID); checkpointed is set once a checkpoint
	// was taken in the turn (see checkpoint.go).
	userMsg      agent.ID
	label        string
	checkpointed bool

	provider llm.Provider
	model    string
	sess     agent.Session
	index    map[string]int // tool name → index in tools

	// answer follows what the turn publishes, for its Result.
	answer answer
	// images are the prompt's images, fitted, until saveImages stores
	// them.
	images []promptImage
	// final is the event that ended the turn; err why it failed.
	final final
	err   error
	// halted is set when a hook said the turn must not go on (its JSON's
	// "continue": false); stops counts the Stop hooks that kept it going.
	halted bool
	stops  int
	// diskFull is set when a step's snapshot did not fit on the disk:
	// the turn ends with it after the step (see checkpoint).
	diskFull error
}

func (t *turn) publish(e agent.Event) {
	e.SessionID = t.id
	e.ParentCallID = t.parentCall
	t.live.bus.Publish(e)
	t.answer.see(e)
}

// end publishes the turn's last event, having let go of the session in
// the same step: a front that hears of the end may start the next turn at
// once, and that turn's subscription (taken under the same lock) cannot
// see this one's end.
func (t *turn) end(e agent.Event) {
	e.SessionID = t.id
	e.ParentCallID = t.parentCall
	t.svc.mu.Lock()
	t.releaseLocked()
	seq := t.live.bus.Publish(e)
	t.svc.mu.Unlock()
	t.final = final{seq: seq, event: e}
}

// release lets go of the session, if the turn still holds it.
func (t *turn) release() {
	t.svc.mu.Lock()
	t.releaseLocked()
	t.svc.mu.Unlock()
}

func (t *turn) releaseLocked() {
	if t.live.current == t {
		t.live.current, t.live.cancel = nil, nil
	}
}

// save writes a part. The store is the record of the turn, so a failure to
// write is logged loudly but does not stop the user's work mid-stream.
func (t *turn) save(ctx context.Context, p agent.Part) { t.putPart(ctx, p) }

// prepare takes the session as stored and finds the turn's model, before
// the turn begins: a failure here is the caller's error, with nothing
// published.
func (t *turn) prepare(sess agent.Session) error {
	t.sess = sess
	if t.modelRef == "" {
		t.modelRef = sess.Model
	}
	var err error
	t.provider, t.model, err = t.svc.opts.Models(t.modelRef)
	if err != nil {
		return err
	}
	if t.ws == nil {
		t.ws = t.svc.opts.Workspace
	}
	t.setTools(t.tools)
	return nil
}

// run runs the prepared turn with text as the user's message (or the
// text expand makes of it) and returns the last assistant message. Its
// last event is always published, by finish or endUnstarted.
func (t *turn) run(ctx context.Context, text string) agent.Message {
	if t.builtin != nil {
		return t.runBuiltin(ctx)
	}
	store := t.svc.opts.Store
	sess := t.sess

	// Asking the source (a required MCP server may still be starting) and
	// expanding a command happen inside the turn, before the user's
	// message is stored: the turn has begun, and a failure ends it with
	// nothing stored.
	begun := t.source != nil || t.expand != nil || t.parentCall == "" && (t.hooked(hook.UserPromptSubmit) || t.hooked(hook.SessionStart))
	if begun {
		t.publish(agent.Event{Kind: agent.EventState, State: agent.StateRunning})
	}
	if t.source != nil {
		if err := t.refreshTools(ctx); err != nil {
			return t.endUnstarted(ctx, err)
		}
	}
	if t.expand != nil {
		expanded, err := t.expand(ctx)
		if err == nil && ctx.Err() == nil && strings.TrimSpace(expanded) == "" {
			err = errors.New("the prompt is empty once expanded")
		}
		if err != nil || ctx.Err() != nil {
			return t.endUnstarted(ctx, err)
		}
		text = expanded
	}
	added, err := t.promptHooks(ctx, text)
	if err != nil || ctx.Err() != nil {
		return t.endUnstarted(ctx, err)
	}
	now := time.Now().UTC()
	user := agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleUser, Created: now, Completed: now}
	if err := store.PutMessage(ctx, user); err != nil {
		return t.endUnstarted(ctx, fmt.Errorf("storing the user's message: %w", err))
	}
	shown := text
	if t.typed != "" {
		shown = t.typed
	}
	if strings.TrimSpace(text) != "" || len(t.images) == 0 {
		// The model is sent the stored history: a prompt the store did not
		// keep would not reach it, and the model would answer without it.
		p := agent.Part{ID: agent.NewPartID(), MessageID: user.ID, SessionID: t.id, Kind: agent.PartText, Text: text, Typed: t.typed}
		if err := store.PutPart(context.WithoutCancel(ctx), p); err != nil {
			return t.finish(ctx, agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleAssistant, Created: now, Model: t.modelRef},
				agent.FinishError, fmt.Sprintf("the prompt could not be stored, so it was not sent: %v", err))
		}
	}
	for _, c := range added {
		t.save(ctx, agent.Part{ID: agent.NewPartID(), MessageID: user.ID, SessionID: t.id, Kind: agent.PartText, Text: c})
	}
	t.userMsg = user.ID
	images, err := t.saveImages(ctx, user.ID)
	if err != nil {
		return t.finish(ctx, agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleAssistant, Created: now, Model: t.modelRef},
			agent.FinishError, err.Error())
	}
	if sess.Title == "" {
		t.updateSession(ctx, func(s *agent.Session) {
			if s.Title == "" { // not renamed meanwhile
				s.Title = titleOf(shown)
			}
		})
	}
	t.publish(agent.Event{Kind: agent.EventUserMessage, MessageID: user.ID, Text: shown, Images: images})
	if !begun {
		t.publish(agent.Event{Kind: agent.EventState, State: agent.StateRunning})
	}

	var last agent.Message
	for step := 1; ; step++ {
		if step > 1 && t.source != nil {
			if err := t.refreshTools(ctx); err != nil {
				if ctx.Err() != nil {
					return t.finish(ctx, last, agent.FinishCancelled, "")
				}
				return t.finish(ctx, last, agent.FinishError, err.Error())
			}
		}
		msg, calls, err := t.step(ctx, sess)
		last = msg
		switch {
		case ctx.Err() != nil:
			return t.finish(ctx, msg, agent.FinishCancelled, "")
		case err != nil:
			return t.finish(ctx, msg, agent.FinishError, err.Error())
		case len(calls) == 0 && !t.stopBlocked(ctx, msg):
			return t.finish(ctx, msg, msg.Finish, "")
		}
		t.runTools(ctx, calls) // none when a Stop hook kept the turn going
		if ctx.Err() != nil {
			return t.finish(ctx, last, agent.FinishCancelled, "")
		}
		if err := t.fullDisk(); err != nil {
			return t.finish(ctx, last, agent.FinishError, err.Error())
		}
		if t.isHalted() {
			return t.finish(ctx, last, agent.FinishStop, "")
		}
		if step >= t.maxSteps() {
			return t.finish(ctx, last, agent.FinishStepLimit, "")
		}
	}
}

// endUnstarted ends a turn that failed, or was cancelled, before the
// user's message was stored, and returns the message Prompt returns.
func (t *turn) endUnstarted(ctx context.Context, err error) agent.Message {
	if ctx.Err() != nil {
		t.end(agent.Event{Kind: agent.EventState, State: agent.StateIdle, Reason: string(agent.FinishCancelled)})
		return agent.Message{SessionID: t.id, Role: agent.RoleAssistant, Finish: agent.FinishCancelled}
	}
	t.err = err
	t.end(agent.Event{Kind: agent.EventState, State: agent.StateFailed, Reason: err.Error()})
	return agent.Message{SessionID: t.id, Role: agent.RoleAssistant, Finish: agent.FinishError, Error: err.Error()}
}

// refreshTools asks the source for its tools now and makes the turn's:
// the service's, the source's, task, and the turn's own over them (a
// sub-task's: see taskTools).
func (t *turn) refreshTools(ctx context.Context) error {
	found, err := t.source.Tools(ctx)
	if err != nil {
		return fmt.Errorf("the turn cannot run without its tools: %w", err)
	}
	if t.task {
		t.setTools(t.taskTools(found))
		return nil
	}
	t.setTools(withTools(t.svc.tools(found), t.own))
	return nil
}

// setTools makes tools what the turn offers, indexed by name.
func (t *turn) setTools(tools []tool.Tool) {
	tools = t.agentTools(tools)
	t.tools = tools
	t.index = make(map[string]int, len(tools))
	for i, tl := range tools {
		t.index[tl.Info().Name] = i
	}
}

// finish records how the turn ended and publishes the final state.
func (t *turn) finish(ctx context.Context, msg agent.Message, how agent.Finish, failure string) agent.Message {
	t.checkpointEnd(ctx)
	if how == "" {
		how = agent.FinishStop
	}
	msg.Finish, msg.Error = how, failure
	if msg.Completed.IsZero() {
		msg.Completed = time.Now().UTC()
	}
	if err := t.svc.opts.Store.PutMessage(context.WithoutCancel(ctx), msg); err != nil {
		t.svc.log.Error("cannot store the end of the turn", "session", t.id, "err", err)
	}
	if how == agent.FinishError {
		t.end(agent.Event{Kind: agent.EventState, State: agent.StateFailed, Reason: failure})
	} else {
		t.end(agent.Event{Kind: agent.EventState, State: agent.StateIdle, Reason: string(how)})
	}
	return msg
}

// updateSession applies fn to the stored session. The store keeps the
// message count, so the record is read again rather than kept in memory.
func (t *turn) updateSession(ctx context.Context, fn func(*agent.Session)) {
	ctx = context.WithoutCancel(ctx)
	t.svc.records.Lock()
	defer t.svc.records.Unlock()
	s, err := t.svc.opts.Store.Session(ctx, t.id)
	if err == nil {
		fn(&s)
		s.Updated = time.Now().UTC()
		err = t.svc.opts.Store.PutSession(ctx, s)
	}
	if err != nil {
		t.svc.log.Error("cannot update the session", "session", t.id, "err", err)
	}
}

func titleOf(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return line
}

// step makes one model call and stores the answer as it streams. It
// returns the assistant message and the tool parts the model asked for.
// When the provider says the request does not fit the context window, the
// history is compacted (see compact.go) and the call made again.
func (t *turn) step(ctx context.Context, sess agent.Session) (agent.Message, []*agent.Part, error) {
	force := compactAsNeeded
	for {
		req, err := t.request(ctx, sess, force)
		// Made after request, which may store a compaction message: the
		// answer's ID must sort after it.
		msg := agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleAssistant, Created: time.Now().UTC(), Model: t.modelRef}
		if err != nil {
			return msg, nil, err
		}
		calls, answered, err := t.stream(ctx, &msg, req)
		if err == nil || answered || ctx.Err() != nil || force == compactSummarize || !errors.Is(err, llm.ErrContextTooLong) {
			return msg, calls, err
		}
		// The failed call stays on record, empty; the next one goes out
		// with less history.
		msg.Finish, msg.Error = agent.FinishError, fmt.Sprintf("%v; darman compacted the conversation and asked again", err)
		if err := t.svc.opts.Store.PutMessage(context.WithoutCancel(ctx), msg); err != nil {
			return msg, nil, err
		}
		t.svc.log.Info("the model's context window was exceeded; compacting", "session", t.id, "err", err)
		force++
	}
}

// request builds the next model call: the history from the latest
// compaction on, fitted to the context window, with the system prompt and
// the tools.
func (t *turn) request(ctx context.Context, sess agent.Session, force compaction) (*llm.Request, error) {
	msgs, err := t.svc.opts.Store.Window(ctx, t.id) // window(all), read from the end
	if err != nil {
		return nil, err
	}
	req := &llm.Request{Model: t.model}
	names := make([]string, 0, len(t.tools))
	fixed := 0
	for _, tl := range t.tools {
		info := tl.Info()
		req.Tools = append(req.Tools, llm.Tool{Name: info.Name, Description: info.Description, Schema: info.Schema})
		names = append(names, info.Name)
		fixed += len(info.Name) + len(info.Description) + len(info.Schema)
	}
	if t.svc.opts.System != nil {
		if req.System, err = t.svc.opts.System(ctx, sess, names); err != nil {
			return nil, fmt.Errorf("building the system prompt: %w", err)
		}
	} else {
		req.System = defaultSystem
	}
	req.System, req.Temperature = t.systemFor(req.System), t.agent.Temperature
	fixed += len(req.System)
	send, err := t.fit(ctx, msgs, fixed, force)
	if err != nil {
		return nil, err
	}
	if send, err = t.withImages(ctx, send); err != nil {
		return nil, err
	}
	req.Messages = history(send)
	return req, nil
}

// stream sends req and stores the answer in msg as it streams. answered
// reports whether any of the answer arrived before a failure.
func (t *turn) stream(ctx context.Context, msg *agent.Message, req *llm.Request) (calls []*agent.Part, answered bool, err error) {
	store := t.svc.opts.Store
	if err := store.PutMessage(ctx, *msg); err != nil {
		return nil, false, err
	}
	parts := map[int]*agent.Part{}
	newPart := func(index int, kind agent.PartKind) *agent.Part {
		p := &agent.Part{ID: agent.NewPartID(), MessageID: msg.ID, SessionID: t.id, Kind: kind, Started: time.Now().UTC()}
		parts[index] = p
		return p
	}
	stream := t.provider.Stream(ctx, req)
	defer stream.Close()
	grow := newGrowth(ctx, t) // streamed text: see grow.go
	defer grow.close()
	for stream.Next() {
		ev := stream.Event()
		if ev.Kind != llm.EventTextDelta && ev.Kind != llm.EventReasoningDelta {
			grow.flush()
		}
		switch ev.Kind {
		case llm.EventTextDelta, llm.EventReasoningDelta:
			kind, evKind := agent.PartText, agent.EventMessageChunk
			if ev.Kind == llm.EventReasoningDelta {
				kind, evKind = agent.PartReasoning, agent.EventThoughtChunk
			}
			p := parts[ev.Index]
			if p == nil {
				p = newPart(ev.Index, kind)
			}
			grow.add(p, evKind, ev.Text)
		case llm.EventReasoningEnd:
			p := parts[ev.Index]
			if p == nil {
				p = newPart(ev.Index, agent.PartReasoning)
			}
			grow.end(p)
			r := ev.Reasoning
			p.Signature = r.Signature
			p.Metadata, _ = json.Marshal(reasoningMeta{Origin: r.Origin, Redacted: r.Redacted, ItemID: r.ItemID, Encrypted: r.Encrypted, Details: r.Details})
			p.Ended = time.Now().UTC()
			t.save(ctx, *p)
		case llm.EventToolCallStart:
			p := newPart(ev.Index, agent.PartTool)
			p.Tool = &agent.ToolCall{CallID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Status: agent.ToolPending, Kind: t.kindOf(ev.ToolCall.Name)}
			t.save(ctx, *p)
			t.publish(agent.Event{Kind: agent.EventToolCall, MessageID: msg.ID, PartID: p.ID, Tool: cloneTool(p.Tool)})
		case llm.EventToolCallEnd:
			p := parts[ev.Index]
			if p == nil || p.Tool == nil {
				p = newPart(ev.Index, agent.PartTool)
				p.Tool = &agent.ToolCall{CallID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Status: agent.ToolPending, Kind: t.kindOf(ev.ToolCall.Name)}
			}
			p.Tool.Input = ev.ToolCall.Arguments
			p.Tool.RawInput = rawInput(ev.ToolCall.Arguments)
			p.Tool.Extra = ev.ToolCall.Extra
			if ev.Err != nil {
				p.Tool.Status, p.Tool.Error = agent.ToolFailed, fmt.Sprintf("The arguments were not a JSON object (%v); call the tool again with valid JSON.", ev.Err)
			}
			t.save(ctx, *p)
			t.publish(agent.Event{Kind: agent.EventToolCallUpdate, MessageID: msg.ID, PartID: p.ID, Tool: cloneTool(p.Tool)})
			calls = append(calls, p)
		case llm.EventUsage:
			u := agent.Usage{Input: int64(ev.Usage.Input), Output: int64(ev.Usage.Output), CacheRead: int64(ev.Usage.CacheRead),
				CacheWrite: int64(ev.Usage.CacheWrite), Reasoning: int64(ev.Usage.Reasoning)}
			msg.Usage, msg.Cost = msg.Usage.Add(u), msg.Cost+ev.Cost
			t.save(ctx, agent.Part{ID: agent.NewPartID(), MessageID: msg.ID, SessionID: t.id, Kind: agent.PartStepFinish, Usage: &u, Cost: ev.Cost})
			t.updateSession(ctx, func(s *agent.Session) { s.Usage = s.Usage.Add(u); s.Cost += ev.Cost })
			t.publish(agent.Event{Kind: agent.EventUsage, MessageID: msg.ID, Usage: &u, Cost: ev.Cost,
				ContextWindow: t.provider.Model(t.model).ContextWindow})
		case llm.EventFinish:
			msg.Finish = finishOf(ev.Finish)
		case llm.EventRetry:
			t.publish(agent.Event{Kind: agent.EventRetry, Retry: &agent.RetryInfo{Attempt: ev.Retry.Attempt, Delay: ev.Retry.Delay, Reason: retryReason(ev.Retry)}})
		}
	}
	grow.flush()
	for _, p := range parts {
		switch {
		case p.Kind == agent.PartText && p.Ended.IsZero():
			grow.end(p)
			p.Ended = time.Now().UTC()
			t.save(ctx, *p)
		case grow.grown(p): // reasoning cut off before its end
			grow.end(p)
			t.save(ctx, *p)
		}
	}
	msg.Completed = time.Now().UTC()
	if err := stream.Err(); err != nil {
		// Tool calls of a broken answer are not run: the model did not
		// finish asking for them.
		for _, p := range calls {
			if p.Tool.Status == agent.ToolPending {
				p.Tool.Status, p.Tool.Error = agent.ToolFailed, "not run: the model's answer was cut off"
				t.save(ctx, *p)
			}
		}
		return nil, len(parts) > 0, err
	}
	if err := store.PutMessage(ctx, *msg); err != nil {
		return nil, true, err
	}
	return calls, true, nil
}

func (t *turn) kindOf(name string) agent.ToolKind {
	if i, ok := t.index[name]; ok {
		if k := t.tools[i].Info().Kind; k != "" {
			return k
		}
	}
	return agent.ToolKindOther
}

func finishOf(f llm.FinishReason) agent.Finish {
	switch f {
	case llm.FinishStop:
		return agent.FinishStop
	case llm.FinishLength:
		return agent.FinishLength
	case llm.FinishToolUse:
		return agent.FinishToolCalls
	}
	return agent.Finish(f)
}

func retryReason(r llm.Retry) string {
	if r.Err != nil {
		return r.Err.Error()
	}
	return "the model call failed"
}

func cloneTool(t *agent.ToolCall) *agent.ToolCall {
	c := *t
	return &c
}

const defaultSystem = `You are darman, a coding agent working in the user's workspace through the tools you are given. Read before you edit, keep changes small, and say what you changed.`
