package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// doomLoopRepeats is how many identical calls in a row make the agent ask
// the human whether to go on.
const doomLoopRepeats = 3

// runTools runs the calls the model asked for: a run of consecutive
// read-only calls at the same time, every other call alone, in the order
// asked.
func (t *turn) runTools(ctx context.Context, calls []*agent.Part) {
	for i := 0; i < len(calls); {
		j := i + 1
		if t.readOnly(calls[i]) {
			for j < len(calls) && t.readOnly(calls[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		for _, p := range calls[i:j] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.runTool(ctx, p)
			}()
		}
		wg.Wait()
		i = j
	}
}

func (t *turn) readOnly(p *agent.Part) bool {
	i, ok := t.index[p.Tool.Name]
	return ok && p.Tool.Status == agent.ToolPending && t.tools[i].Info().ReadOnly
}

// runTool runs one call and records its result in its part.
func (t *turn) runTool(ctx context.Context, p *agent.Part) {
	call := p.Tool
	if call.Status != agent.ToolPending { // the arguments did not parse
		return
	}
	update := func() {
		t.save(ctx, *p)
		t.publish(agent.Event{Kind: agent.EventToolCallUpdate, MessageID: p.MessageID, PartID: p.ID, Tool: cloneTool(call)})
	}
	fail := func(msg string) {
		call.Status, call.Error = agent.ToolFailed, msg
		p.Ended = time.Now().UTC()
		update()
	}
	if why := t.refused(call.Name); why != "" {
		fail(why)
		return
	}
	i, ok := t.index[call.Name]
	if !ok {
		fail(fmt.Sprintf("There is no tool named %q. The tools are: %s.", call.Name, strings.Join(t.toolNames(), ", ")))
		return
	}
	tl := t.tools[i]
	if denied := t.doomLoop(ctx, call); denied != "" {
		fail(denied)
		return
	}

	call.Status = agent.ToolRunning
	p.Started = time.Now().UTC()
	update()
	denied, hookContext, hookDone := t.preToolUse(ctx, call)
	defer hookDone()
	if denied != "" {
		fail(denied)
		return
	}

	info := tl.Info()
	timeout := info.Timeout
	if timeout <= 0 {
		timeout = t.svc.opts.ToolTimeout
	}
	// The call's time stops while it waits for a person: a question
	// answered after minutes still lets the call run.
	runCtx := tool.NewClock(ctx, timeout)
	defer runCtx.Stop()
	pause := func() func() {
		resume := runCtx.Pause()
		if t.pauseParent == nil {
			return resume
		}
		resumeParent := t.pauseParent()
		return func() { resume(); resumeParent() }
	}
	var progressMu sync.Mutex
	lastProgress := time.Time{}
	term := &terminal{t: t, ctx: ctx, p: *p}
	env := &tool.Env{
		SessionID: t.id,
		CallID:    call.CallID,
		Workspace: t.ws,
		Permit: func(ctx context.Context, c permission.Call) error {
			c.CallID = call.CallID
			c.Rules = t.agent.Rules()
			if t.parentCall != "" {
				c.Child = t.id
			}
			defer pause()()
			return t.live.checker.Check(ctx, c)
		},
		Pause: pause,
		Progress: func(output string) {
			// Terminal output can come fast; people need a few updates a
			// second, not one per line. No output yet says the command
			// started (an editor's terminal is shown): never held back.
			progressMu.Lock()
			defer progressMu.Unlock()
			if output != "" && time.Since(lastProgress) < 100*time.Millisecond {
				return
			}
			lastProgress = time.Now()
			term.write(output)
			c := cloneTool(call)
			c.Terminal = output
			t.publish(agent.Event{Kind: agent.EventToolCallUpdate, MessageID: p.MessageID, PartID: p.ID, Tool: c})
		},
		Plan: func(entries []agent.PlanEntry) {
			t.publish(agent.Event{Kind: agent.EventPlan, Plan: entries})
		},
		Charge: func(u agent.Usage, cost float64) {
			// Not the turn's context window: the event carries none.
			t.updateSession(ctx, func(s *agent.Session) { s.Usage = s.Usage.Add(u); s.Cost += cost })
			t.publish(agent.Event{Kind: agent.EventUsage, MessageID: p.MessageID, Usage: &u, Cost: cost})
		},
		Files:  t.live.files,
		Jobs:   t.live.jobs,
		Logger: t.svc.log.With("tool", call.Name, "call", call.CallID),
	}
	if a := t.live.asker; a != nil && a.streaming() {
		var child agent.ID
		if t.parentCall != "" {
			child = t.id
		}
		env.Elicit = func(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
			return a.elicit(ctx, e, call.CallID, child)
		}
	}
	if err := t.checkpoint(ctx, tl); err != nil {
		fail(fmt.Sprintf("The call was not run: the workspace could not be checkpointed before it (%v).", err))
		return
	}
	res, err := runSafely(runCtx, tl, env, call)
	progressMu.Lock()
	term.done = true // the part is put whole below, with the output
	progressMu.Unlock()
	p.Ended = time.Now().UTC()
	switch {
	case ctx.Err() != nil:
		fail("cancelled by the user")
		return
	case runCtx.Expired() || errors.Is(err, context.DeadlineExceeded):
		fail(fmt.Sprintf("The call did not finish within %s and was stopped.", timeout))
		return
	case errors.As(err, new(*permission.DeniedError)):
		fail(err.Error())
		return
	case err != nil:
		fail(fmt.Sprintf("The tool failed: %v", err))
		return
	}
	if !res.IsError && info.Kind == agent.ToolKindEdit {
		res = t.checkEdit(ctx, res)
	}
	if !res.IsError {
		res = t.postToolUse(ctx, call, info, res)
		res.Output += hookContext
	}
	call.Title, call.Locations, call.Diff, call.Attachments, call.Metadata = res.Title, res.Locations, res.Diff, res.Attachments, res.Metadata
	if res.IsError {
		call.Status, call.Error, call.Output = agent.ToolFailed, res.Output, ""
	} else {
		call.Status, call.Output = agent.ToolCompleted, res.Output+t.dirInstructions(call.Input, res.Locations)
	}
	update()
}

// checkEdit asks the language servers about the files an edit changed and
// adds the errors they report to what the model reads; every diagnostic, of
// every severity, goes into the call's metadata for the editor.
func (t *turn) checkEdit(ctx context.Context, res tool.Result) tool.Result {
	d := t.svc.opts.Diagnostics
	if d == nil {
		return res
	}
	var paths []string
	for _, l := range res.Locations {
		paths = append(paths, l.Path)
	}
	if res.Diff != nil {
		paths = append(paths, res.Diff.Path)
	}
	paths = slices.Compact(slices.Sorted(slices.Values(paths)))
	if len(paths) == 0 {
		return res
	}
	out, meta := d.Check(ctx, paths...)
	if out != "" {
		res.Output += "\n\n" + out
	}
	if len(meta) > 0 {
		res.Metadata = withField(res.Metadata, "diagnostics", meta)
	}
	return res
}

// withField adds a field to a JSON object (a new object when obj is empty or
// not an object).
func withField(obj json.RawMessage, key string, value json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(obj) > 0 && json.Unmarshal(obj, &m) != nil {
		m = map[string]json.RawMessage{"result": obj}
	}
	m[key] = value
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}

// runSafely runs a tool, turning a panic into an error: a broken tool must
// not take the editor's agent down with it.
func runSafely(ctx context.Context, tl tool.Tool, env *tool.Env, call *agent.ToolCall) (res tool.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in %s: %v", call.Name, r)
		}
	}()
	return tl.Run(ctx, env, argsOrEmpty(call.Input))
}

// doomLoop asks the human before the same call runs a third time in a row.
// It returns the message for the model when the answer is no.
func (t *turn) doomLoop(ctx context.Context, call *agent.ToolCall) string {
	key := call.Name + "\x00" + string(call.Input)
	t.svc.mu.Lock()
	t.live.recent = append(t.live.recent, key)
	if len(t.live.recent) > doomLoopRepeats {
		t.live.recent = t.live.recent[len(t.live.recent)-doomLoopRepeats:]
	}
	repeated := len(t.live.recent) == doomLoopRepeats
	for _, k := range t.live.recent {
		repeated = repeated && k == key
	}
	t.svc.mu.Unlock()
	if !repeated {
		return ""
	}
	err := t.live.checker.Check(ctx, permission.Call{
		Permission: permission.DoomLoop,
		Subjects:   []string{call.Name},
		Title:      fmt.Sprintf("%s was called %d times in a row with the same input", call.Name, doomLoopRepeats),
		CallID:     call.CallID,
	})
	if err == nil {
		return ""
	}
	return fmt.Sprintf("Not run: this is the %s call in a row with the same input, and the user did not let it run again (%v). Try something different.", ordinal(doomLoopRepeats), err)
}

func ordinal(n int) string {
	return map[int]string{2: "second", 3: "third", 4: "fourth"}[n]
}

func (t *turn) toolNames() []string {
	var names []string
	for _, tl := range t.tools {
		names = append(names, tl.Info().Name)
	}
	return names
}

// withTools is base with extra over it: a tool of extra takes the place of
// base's tool of the same name, the rest are appended.
func withTools(base, extra []tool.Tool) []tool.Tool {
	out := slices.Clone(base)
	for _, tl := range extra {
		name := tl.Info().Name
		i := slices.IndexFunc(out, func(b tool.Tool) bool { return b.Info().Name == name })
		if i >= 0 {
			out[i] = tl
			continue
		}
		out = append(out, tl)
	}
	return out
}
