package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// bySession is a ToolSource that gives a top-level session mainTools and
// a sub-task's session (ParentID set, read from the store) taskTools, as
// darman's MCP servers with an agents key do.
type bySession struct {
	st        *store.Store
	mainTools []tool.Tool
	taskTools []tool.Tool
}

func (b *bySession) forSession(id agent.ID) tool.Source {
	return tool.SourceFunc(func(ctx context.Context) ([]tool.Tool, error) {
		s, err := b.st.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		if s.ParentID != "" {
			return b.taskTools, nil
		}
		return b.mainTools, nil
	})
}

// TestSubTaskAsksTheSourceAsItself: a sub-task's turn gets the source's
// tools for its own session, not its parent's: a tool the source gives
// only sub-agents is offered to the sub-agent and runs there, one it gives
// only the parent is not; tools the task call names are kept when the
// source gives them, and the parent's named only-parent tool is left out.
func TestSubTaskAsksTheSourceAsItself(t *testing.T) {
	lead, helper := &probe{name: "lead_only"}, &probe{name: "helper_only"}
	src := &bySession{mainTools: []tool.Tool{lead}, taskTools: []tool.Tool{helper}}
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Use the helper", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{ID: "child_call", Name: "helper_only", Arguments: json.RawMessage(`{}`)}}},
			{Text: "Helped."},
		}},
		{Match: "Narrow", Steps: []llmtest.Step{{Text: "Narrowed."}}},
		{Match: "delegate", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "help out", "Use the helper.")}},
			{ToolCalls: []llmtest.ToolCall{taskCall("call_narrow", "narrow", "Narrow it down.", "read", "lead_only")}},
			{Text: "Done."},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, tools: tool.Builtins(tool.Options{}), service: func(o *session.Options) {
		o.Tasks = true
		o.ToolSource = src.forSession
	}})
	src.st = f.store
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("delegate")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", msg, err)
	}
	byConv := map[string][]*llmtest.Call{}
	for _, c := range f.srv.ModelCalls() {
		byConv[c.Conversation] = append(byConv[c.Conversation], c)
	}
	parent, child, narrow := byConv["delegate"], byConv["Use the helper."], byConv["Narrow it down."]
	if len(parent) != 3 || len(child) != 2 || len(narrow) != 1 {
		t.Fatalf("%d parent calls, %d and %d sub-task calls; want 3, 2, 1", len(parent), len(child), len(narrow))
	}
	has := func(c *llmtest.Call, name string) bool { return strings.Contains(fmt.Sprint(toolNames(c)), name) }
	if !has(parent[0], "lead_only") || has(parent[0], "helper_only") || !has(parent[0], "task") {
		t.Errorf("the parent was offered %v; want lead_only and task, not helper_only", toolNames(parent[0]))
	}
	for _, c := range child {
		if !has(c, "helper_only") || has(c, "lead_only") || has(c, "task") || has(c, "todo") || !has(c, "read") {
			t.Errorf("the sub-task was offered %v; want helper_only and the built-ins but task and todo, not lead_only", toolNames(c))
		}
	}
	if helper.maxSeen.Load() == 0 || lead.maxSeen.Load() != 0 {
		t.Errorf("helper_only ran: %t, lead_only ran: %t; want only helper_only (the sub-agent's call)", helper.maxSeen.Load() > 0, lead.maxSeen.Load() > 0)
	}
	if got := fmt.Sprint(toolNames(narrow[0])); got != "[read]" {
		t.Errorf("the sub-task given read and lead_only was offered %s; want [read] (lead_only is not for sub-agents)", got)
	}
}
