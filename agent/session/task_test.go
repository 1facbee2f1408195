package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

func taskCall(id, description, prompt string, tools ...string) llmtest.ToolCall {
	in := map[string]any{"description": description, "prompt": prompt}
	if tools != nil {
		in["tools"] = tools
	}
	args, _ := json.Marshal(in)
	return llmtest.ToolCall{ID: id, Name: "task", Arguments: args}
}

func withTasks(o *session.Options) { o.Tasks = true }

func toolNames(c *llmtest.Call) []string {
	var names []string
	for _, n := range c.Get("tools.#.name").Array() {
		names = append(names, n.String())
	}
	slices.Sort(names)
	return names
}

func TestTaskRunsASubAgentNestedUnderTheCall(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "config.go"), []byte("package app\n\nfunc LoadConfig() {}\n"), 0o644)
	const childPrompt = "Search the workspace for the function that loads the config, and report its file."
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Search the workspace", Steps: []llmtest.Step{
			{Text: "Reading.", ToolCalls: []llmtest.ToolCall{{ID: "child_read", Name: "read", Arguments: json.RawMessage(`{"path":"config.go"}`)}}},
			{Text: "LoadConfig is in config.go."},
		}},
		{Match: "Where is the config loaded?", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "find the config loader", childPrompt)}},
			{Text: "It is loaded by LoadConfig in config.go."},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: tool.Builtins(tool.Options{}), service: withTasks})
	wait := f.events(t)
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Where is the config loaded?")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", msg, err)
	}
	evs := wait()

	// The parent offers task; the sub-agent gets the rest but todo.
	var parentCalls, childCalls []*llmtest.Call
	for _, c := range f.srv.ModelCalls() {
		if c.Conversation == childPrompt {
			childCalls = append(childCalls, c)
		} else {
			parentCalls = append(parentCalls, c)
		}
	}
	if len(parentCalls) != 2 || len(childCalls) != 2 {
		t.Fatalf("%d parent calls, %d sub-task calls", len(parentCalls), len(childCalls))
	}
	parentTools, childTools := toolNames(parentCalls[0]), toolNames(childCalls[0])
	if !slices.Contains(parentTools, "task") || !slices.Contains(parentTools, "todo") {
		t.Errorf("parent tools %v", parentTools)
	}
	if slices.Contains(childTools, "task") || slices.Contains(childTools, "todo") || !slices.Contains(childTools, "read") || len(childTools) != len(parentTools)-2 {
		t.Errorf("sub-task tools %v, parent's %v", childTools, parentTools)
	}
	// The sub-agent did the reading; its answer came back as the result.
	if !strings.Contains(string(childCalls[1].Body), "func LoadConfig()") {
		t.Error("the sub-agent's read did not reach it")
	}
	result := parentCalls[1].Get(`messages.#(role=="user")#.content.#(type=="tool_result")`).Raw
	if !strings.Contains(result, "LoadConfig is in config.go.") || strings.Contains(result, "Reading.") {
		t.Errorf("the task's result is not the sub-agent's final answer: %s", result)
	}

	// The child session is stored under the parent.
	children, err := f.store.ListSessions(context.Background(), store.ListOptions{Children: true})
	if err != nil {
		t.Fatal(err)
	}
	var child agent.Session
	for _, s := range children {
		if s.ParentID == f.sess.ID {
			child = s
		}
	}
	if child.ID == "" || child.Title != "find the config loader" || child.Model != f.sess.Model {
		t.Fatalf("no child session stored under the parent: %+v", children)
	}
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	taskPart := msgs[1].Parts[0].Tool
	var meta struct{ SessionID agent.ID }
	json.Unmarshal(taskPart.Metadata, &meta)
	if taskPart.Status != agent.ToolCompleted || meta.SessionID != child.ID || taskPart.Title != "find the config loader" {
		t.Errorf("task call stored as %+v", taskPart)
	}

	// Its events came on the parent's bus, nested under the task call.
	var nested []string
	for _, e := range evs {
		if e.ParentCallID == "" {
			if e.SessionID != f.sess.ID {
				t.Errorf("an event of session %s is not nested: %+v", e.SessionID, e)
			}
			continue
		}
		if e.ParentCallID != "call_task" || e.SessionID != child.ID {
			t.Errorf("nested event %+v", e)
		}
		k := string(e.Kind)
		if e.Tool != nil {
			k += ":" + e.Tool.Name + ":" + string(e.Tool.Status)
		}
		if e.State != "" {
			k += ":" + string(e.State)
		}
		if len(nested) == 0 || nested[len(nested)-1] != k {
			nested = append(nested, k)
		}
	}
	got := strings.Join(nested, " ")
	for _, want := range []string{"user_message state:running", "tool_call:read:pending", "tool_call_update:read:completed", "agent_message_chunk", "state:idle"} {
		if !strings.Contains(got, want) {
			t.Errorf("nested events lack %q: %s", want, got)
		}
	}
	if last := evs[len(evs)-1]; last.ParentCallID != "" || last.State != agent.StateIdle {
		t.Errorf("the parent's turn did not end last: %+v", last)
	}
}

func TestTaskToolSubsetAndBadInput(t *testing.T) {
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Only look", Steps: []llmtest.Step{{Text: "Looked."}}},
		{Match: "delegate", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{
				taskCall("bad_tools", "look around", "Only look, never change.", "read", "rm_rf"),
				taskCall("no_prompt", "look around", "  "),
				taskCall("nested", "look around", "Only look, never change.", "task"),
			}},
			{ToolCalls: []llmtest.ToolCall{taskCall("good", "look around", "Only look, never change.", "read", "glob", "read")}},
			{Text: "done"},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, tools: tool.Builtins(tool.Options{}), service: withTasks})
	if msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("delegate")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", msg, err)
	}
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	calls := map[string]*agent.ToolCall{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Tool != nil {
				calls[p.Tool.CallID] = p.Tool
			}
		}
	}
	for id, want := range map[string]string{
		"bad_tools": `cannot have "rm_rf": the tools it may have are read,`,
		"no_prompt": "The prompt is empty",
		"nested":    `cannot have "task"`,
	} {
		if c := calls[id]; c == nil || c.Status != agent.ToolFailed || !strings.Contains(c.Error, want) {
			t.Errorf("%s: %+v, want a failure saying %q", id, c, want)
		}
	}
	var sub []*llmtest.Call
	for _, c := range f.srv.ModelCalls() {
		if strings.HasPrefix(c.Conversation, "Only look") {
			sub = append(sub, c)
		}
	}
	if len(sub) != 1 {
		t.Fatalf("%d sub-task calls, want 1: refused inputs start none", len(sub))
	}
	if names := toolNames(sub[0]); fmt.Sprint(names) != "[glob read]" {
		t.Errorf("the sub-task was offered %v, want [glob read]", names)
	}
	if c := calls["good"]; c.Status != agent.ToolCompleted || c.Output != "Looked." {
		t.Errorf("good task: %+v", c)
	}
}

func TestCancellingTheParentCancelsTheSubTask(t *testing.T) {
	p := &probe{name: "wait", block: true, started: make(chan string, 1)}
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Wait for it", Steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{{ID: "child_wait", Name: "wait"}}}}},
		{Match: "delegate", Steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "wait", "Wait for it.")}}}},
	}}
	f := newFixture(t, fixtureOptions{script: script, tools: []tool.Tool{p}, service: withTasks})
	done := make(chan session.Result, 1)
	go func() {
		msg, _ := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("delegate")})
		done <- msg
	}()
	<-p.started // the sub-agent's tool is running
	if !f.svc.Cancel(f.sess.ID) {
		t.Fatal("no turn to cancel")
	}
	var msg session.Result
	select {
	case msg = <-done:
	case <-time.After(time.Minute):
		// The sub-task's tool ends only with its context: a bound for a
		// turn that never stops (see TestCancelMidToolLeavesSessionUsable).
		t.Fatal("the turn did not stop within a minute of Cancel")
	}
	if msg.Finish != agent.FinishCancelled {
		t.Fatalf("parent finished %q", msg.Finish)
	}
	list, _ := f.store.ListSessions(context.Background(), store.ListOptions{Children: true})
	for _, s := range list {
		if s.ParentID != f.sess.ID {
			continue
		}
		msgs, _ := f.store.Messages(context.Background(), s.ID)
		last := msgs[len(msgs)-1]
		if last.Message.Finish != agent.FinishCancelled || last.Parts[0].Tool.Status != agent.ToolFailed {
			t.Errorf("the sub-task's turn ended %q with its call %s", last.Message.Finish, last.Parts[0].Tool.Status)
		}
		return
	}
	t.Fatal("no sub-task session")
}

// parentPastItsSubTask runs a turn of a new fixture's session (root, if
// not empty, its workspace) whose sub-task answers at once ("Look around"),
// then holds the parent's turn in a blocking tool. It returns the fixture,
// the sub-task's session, and stop, which cancels the parent's turn and
// waits for it. more are conversations the script answers besides.
func parentPastItsSubTask(t *testing.T, root string, more ...llmtest.Conversation) (f *fixture, child agent.ID, stop func()) {
	t.Helper()
	p := &probe{name: "probe", block: true, started: make(chan string, 1)}
	script := llmtest.Script{Conversations: append([]llmtest.Conversation{
		{Match: "Look around", Steps: []llmtest.Step{{Text: "Nothing to change."}}},
		{Match: "Work on f", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{taskCall("call_task", "look", "Look around")}},
			{ToolCalls: []llmtest.ToolCall{{ID: "call_probe", Name: "probe", Arguments: json.RawMessage(`{"x":"a"}`)}}},
			{Text: "Done."},
		}},
	}, more...)}
	f = newFixture(t, fixtureOptions{script: script, root: root, tools: append(tool.Builtins(tool.Options{}), p), service: withTasks})
	ctx := context.Background()
	ran := make(chan error, 1)
	go func() {
		_, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("Work on f")})
		ran <- err
	}()
	<-p.started // the sub-task answered; the parent's turn runs on
	stop = func() { f.svc.Cancel(f.sess.ID); <-ran }
	all, err := f.store.ListSessions(ctx, store.ListOptions{Children: true})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	for _, s := range all {
		if s.ParentID == f.sess.ID {
			child = s.ID
		}
	}
	if child == "" {
		stop()
		t.Fatalf("no sub-task session among %+v", all)
	}
	return f, child, stop
}

// A prompt to a sub-task's session while its parent's turn runs (the
// sub-task ran inside it) is refused: it would have been a second turn
// writing into the sub-task's history while its parent may still add to
// it. Shown by effect: the model is never asked, and the sub-task's
// history holds no such message.
func TestPromptToASubTaskWhileItsParentRunsIsRefused(t *testing.T) {
	f, child, stop := parentPastItsSubTask(t, "", llmtest.Conversation{Match: "Barge in", Steps: []llmtest.Step{{Text: "I should not have been asked."}}})
	defer stop()
	ctx := context.Background()
	_, err := f.svc.Run(ctx, session.Turn{Session: child, Prompt: session.Text("Barge in")})
	if err == nil || !strings.Contains(err.Error(), "is a sub-task of session "+string(f.sess.ID)) {
		t.Errorf("a prompt to the sub-task's session while its parent runs: %v, want an error naming the parent", err)
	}
	msgs, err := f.store.Messages(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		for _, part := range m.Parts {
			if strings.Contains(part.Text, "Barge in") || strings.Contains(part.Text, "should not have been asked") {
				t.Errorf("the refused prompt reached the sub-task's history: %+v", part)
			}
		}
	}
}
