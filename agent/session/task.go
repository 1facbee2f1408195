package session

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

//go:embed task.md
var taskDescription string

// taskInput is what the model gives the task tool.
type taskInput struct {
	Description string   `json:"description" jsonschema:"the sub-task in three to five words, shown to the user"`
	Prompt      string   `json:"prompt" jsonschema:"the whole task for the sub-agent, which sees nothing of this conversation: what to do, what is known, what to report"`
	Tools       []string `json:"tools,omitempty" jsonschema:"names of the tools the sub-agent may use; omit for all of yours but task and todo"`
	Agent       string   `json:"agent,omitempty" jsonschema:"the sub-agent to run, by name, from the list in this tool's description; omit for a general one"`
}

// taskTimeout bounds a sub-task's whole turn.
const taskTimeout = 30 * time.Minute

// noSubTaskTools are the tools a sub-agent never gets: sub-tasks do not
// nest, and the plan is the parent's.
var noSubTaskTools = []string{"task", "todo"}

// taskSchema is made on first use, not when the program starts: every
// darman command links this package, few offer the task tool.
var taskSchema = sync.OnceValue(func() json.RawMessage {
	s, err := jsonschema.For[taskInput](nil)
	if err != nil {
		// taskInput is fixed at compile time and covered by tests.
		panic(fmt.Sprintf("task tool schema: %v", err))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("task tool schema: %v", err))
	}
	return raw
})

// taskTool runs a sub-agent: one turn of a child session (see runTask).
type taskTool struct{ svc *Service }

func (tt *taskTool) Info() tool.Info {
	return tool.Info{Name: "task", Description: tt.svc.taskDescriptionFor(), Schema: taskSchema(), Kind: agent.ToolKindOther, Timeout: taskTimeout}
}

func (tt *taskTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	invalid := func(format string, a ...any) (tool.Result, error) {
		return tool.Result{Output: fmt.Sprintf(format, a...) + " Call task again with a description, a prompt, and optionally tools.", IsError: true, Title: "invalid input"}, nil
	}
	var in taskInput
	if err := json.Unmarshal(input, &in); err != nil {
		return invalid("The input is not a JSON object of the task tool's schema: %v.", err)
	}
	in.Description, in.Prompt, in.Agent = strings.TrimSpace(in.Description), strings.TrimSpace(in.Prompt), strings.TrimSpace(in.Agent)
	switch {
	case in.Prompt == "":
		return invalid("The prompt is empty: it must hold the sub-agent's whole task.")
	case in.Description == "":
		return invalid("The description is empty: give the sub-task a few words for the user.")
	}
	if env.Permit != nil {
		err := env.Permit(ctx, permission.Call{Permission: "task", Subjects: []string{in.Description}, Title: "Run a sub-task: " + in.Description})
		if err != nil {
			if res, ok := tool.Denied(err); ok {
				return res, nil
			}
			return tool.Result{}, err
		}
	}
	return tt.svc.runTask(ctx, env, in)
}

// runTask runs a sub-task for the turn running in env's session: a child
// session (ParentID set, titled with the description) run by the named
// sub-agent (its model, prompt and tool list; the parent agent's lock
// kept) or a general one, with the parent turn's model and tools but task
// and todo, or the subset asked for (with
// a ToolSource, the source's tools are those it gives the child); one
// turn of it on the prompt; and its final answer as the result. The
// child's events go on the parent's bus with ParentCallID set to the task
// call, under the child's SessionID. It shares the parent's permission
// checker (the rules, and the answers given in the parent session) and
// background jobs; it has its own record of files read. It runs under the
// task call's context, so cancelling the parent's turn cancels it. What
// it spent is added to the parent session and the parent turn's result.
func (s *Service) runTask(ctx context.Context, env *tool.Env, in taskInput) (tool.Result, error) {
	s.mu.Lock()
	parent := s.live[env.SessionID]
	var pt *turn
	if parent != nil {
		pt = parent.current
	}
	s.mu.Unlock()
	if pt == nil {
		return tool.Result{}, fmt.Errorf("task: session %s has no running turn to run a sub-task for", env.SessionID)
	}
	sub, problem := s.subAgent(in.Agent, pt.agent)
	if problem != "" {
		return tool.Result{Output: problem, IsError: true, Title: "unknown agent"}, nil
	}
	tools, problem := subTaskTools(pt.tools, in.Tools)
	if problem != "" {
		return tool.Result{Output: problem, IsError: true, Title: "invalid tools"}, nil
	}
	model := pt.modelRef
	if sub.Model != "" {
		model = sub.Model
	}
	child, err := s.Create(ctx, CreateOptions{Model: model, Title: in.Description, ParentID: env.SessionID, Agent: in.Agent})
	if err != nil {
		return tool.Result{}, fmt.Errorf("task: creating the sub-task's session: %w", err)
	}
	l := &live{bus: parent.bus, checker: parent.checker, asker: parent.asker, files: &tool.FileTimes{}, jobs: parent.jobs, instructed: map[string]bool{}}
	t := &turn{svc: s, live: l, id: child.ID, modelRef: model, tools: tools, parentCall: env.CallID, pauseParent: env.Pause, ws: pt.ws, agent: sub}
	if s.opts.ToolSource != nil {
		// The child asks the source as itself: a source may give a
		// sub-agent other tools than its parent (an MCP server visible
		// only to sub-agents, or only to the main agent).
		t.source, t.task, t.only, t.own = s.opts.ToolSource(child.ID), true, in.Tools, pt.own
	}
	// The sub-task is a turn like a front's (see Start), whose events are
	// already on the parent's bus.
	if err := t.prepare(child); err != nil {
		return tool.Result{}, fmt.Errorf("task: %w", err)
	}
	began := time.Now()
	done := t.result(t.run(ctx, in.Prompt), time.Since(began))
	pt.addChildCost(ctx, done.Usage, done.Cost)
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	msg, answer := done.msg, done.Text
	meta, _ := json.Marshal(map[string]any{"sessionId": child.ID, "finish": msg.Finish})
	res := tool.Result{Output: answer, Title: in.Description, Metadata: meta}
	switch msg.Finish {
	case agent.FinishError:
		res.IsError = true
		res.Output = "The sub-task failed: " + msg.Error
		if answer != "" {
			res.Output += "\n\nWhat it wrote before failing:\n\n" + answer
		}
	case agent.FinishCancelled:
		res.IsError, res.Output = true, "The sub-task was cancelled before it finished."
	case agent.FinishStepLimit:
		res.Output += "\n\n[The sub-task stopped at its step limit before it finished; the above is what it wrote last.]"
	}
	if strings.TrimSpace(res.Output) == "" {
		res.Output = "The sub-task finished without an answer."
	}
	return res, nil
}

// subTaskTools are the tools a sub-agent gets: the parent turn's but task
// and todo, limited to names when there are any. problem is, for names the
// sub-agent cannot have, the message for the model.
func subTaskTools(parent []tool.Tool, names []string) (tools []tool.Tool, problem string) {
	var avail []string
	byName := map[string]tool.Tool{}
	for _, tl := range parent {
		name := tl.Info().Name
		if slices.Contains(noSubTaskTools, name) {
			continue
		}
		avail = append(avail, name)
		byName[name] = tl
	}
	if len(names) == 0 {
		for _, n := range avail {
			tools = append(tools, byName[n])
		}
		return tools, ""
	}
	var unknown []string
	for _, n := range names {
		tl, ok := byName[n]
		switch {
		case !ok:
			unknown = append(unknown, fmt.Sprintf("%q", n))
		case !slices.Contains(tools, tl):
			tools = append(tools, tl)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Sprintf("The sub-task cannot have %s: the tools it may have are %s. Call task again with names from that list, or without tools to give it all of them.",
			strings.Join(unknown, ", "), strings.Join(avail, ", "))
	}
	return tools, ""
}

// taskTools are what a sub-task's turn offers once its source answered
// found: the service's tools, found, and the parent turn's own over them,
// but task and todo; of those, only the ones the task call named, when it
// named any (names of tools the source does not give the sub-task are
// left out).
func (t *turn) taskTools(found []tool.Tool) []tool.Tool {
	all, _ := subTaskTools(withTools(slices.Concat(t.svc.opts.Tools, found), t.own), nil)
	if len(t.only) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(tl tool.Tool) bool { return !slices.Contains(t.only, tl.Info().Name) })
}
