package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// agentWorkspace is a git root holding main.go and Claude Code's
// reviewer file exactly as its documentation shows it.
func agentWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	reviewer, err := os.ReadFile("../agents/testdata/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		".git/HEAD":                  "ref: refs/heads/main\n",
		"main.go":                    "package main\n\nfunc main() {}\n",
		".claude/agents/reviewer.md": string(reviewer),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755)
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func withAgents(root string, more func(*session.Options)) func(*session.Options) {
	return func(o *session.Options) {
		o.Tasks = true
		o.Agents = agents.Load(agents.Options{Dirs: prompt.Dirs{Root: root}})
		if more != nil {
			more(o)
		}
	}
}

func call(id, name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// The task tool runs Claude Code's reviewer by name: the model sees its
// description, the sub-agent gets its prompt and only its tools (a call
// outside them is refused with a result that says so), and what it spent
// is the parent session's too.
func TestTaskRunsAClaudeCodeAgentByName(t *testing.T) {
	root := agentWorkspace(t)
	const childPrompt = "Review main.go and report problems."
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Review main.go", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("child_edit", "edit", `{"path":"main.go","oldString":"func main() {}","newString":"func main() { panic(1) }"}`)}},
			{Text: "main.go looks fine."},
		}},
		{Match: "Please review", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("call_task", "task", `{"description":"review main.go","prompt":"`+childPrompt+`","agent":"code-reviewer"}`)}},
			{Text: "The reviewer found nothing."},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: tool.Builtins(tool.Options{}), service: withAgents(root, nil)})
	res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Please review my change")})
	if err != nil || res.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", res, err)
	}
	var parentCalls, childCalls []*llmtest.Call
	for _, c := range f.srv.ModelCalls() {
		if c.Conversation == childPrompt {
			childCalls = append(childCalls, c)
		} else {
			parentCalls = append(parentCalls, c)
		}
	}
	if len(parentCalls) != 2 || len(childCalls) != 2 {
		t.Fatalf("%d parent calls, %d sub-agent calls", len(parentCalls), len(childCalls))
	}
	desc := parentCalls[0].Get(`tools.#(name=="task").description`).String()
	if !strings.Contains(desc, "- code-reviewer: Expert code review specialist.") {
		t.Errorf("the task tool's description does not offer the reviewer: %s", desc)
	}
	if got, want := toolNames(childCalls[0]), []string{"bash", "bash_kill", "bash_output", "glob", "grep", "read"}; !slices.Equal(got, want) {
		t.Errorf("the reviewer's tools: %v, want %v", got, want)
	}
	if sys := childCalls[0].Get("system").Raw; !strings.Contains(sys, "You are a senior code reviewer") {
		t.Errorf("the reviewer's prompt is not in its system prompt: %.300s", sys)
	}
	refusal := childCalls[1].Get(`messages.#(role=="user")#.content.#(type=="tool_result")`).Raw
	if !strings.Contains(refusal, "The code-reviewer agent may not use the edit tool") {
		t.Errorf("the edit outside the reviewer's tools was not refused clearly: %s", refusal)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); string(data) != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go changed: %q", data)
	}

	// The sub-agent's cost is the parent session's.
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
	if child.Agent != "code-reviewer" || child.Cost <= 0 {
		t.Fatalf("child session %+v", child)
	}
	parent, err := f.store.Session(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	own := 0.0
	for _, m := range msgs {
		own += m.Message.Cost
	}
	if diff := parent.Cost - (own + child.Cost); diff > 1e-12 || diff < -1e-12 || own <= 0 {
		t.Errorf("parent session cost %v, want its own %v + the sub-agent's %v", parent.Cost, own, child.Cost)
	}
	if diff := res.Cost - (own + child.Cost); diff > 1e-12 || diff < -1e-12 {
		t.Errorf("the turn's result cost %v, want %v", res.Cost, own+child.Cost)
	}
	if parent.Usage.Input < child.Usage.Input+1 {
		t.Errorf("parent usage %+v does not include the child's %+v", parent.Usage, child.Usage)
	}
}

// The plan agent cannot change a file even when the configuration allows
// every edit: not with edit or write, not through a bash redirection. It
// stays the session's agent for the next turn.
func TestPlanCannotEdit(t *testing.T) {
	root := agentWorkspace(t)
	script := llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("e1", "edit", `{"path":"main.go","oldString":"func main() {}","newString":"func main() { panic(1) }"}`),
			call("w1", "write", `{"path":"new.go","content":"package main\n"}`),
			call("b1", "bash", `{"command":"echo changed > main.go","description":"overwrite"}`),
			call("b2", "bash", `{"command":"touch made.txt","description":"make a file"}`),
			call("b3", "bash", `{"command":"ls","description":"list the files"}`),
		}},
		{Text: "Plan: change main()."},
		{Text: "Still planning."},
	}}
	allowEdits := func(o *session.Options) {
		o.Rules = append(o.Rules, permission.Rule{Permission: "edit", Pattern: "*", Action: permission.Allow},
			permission.Rule{Permission: "bash", Pattern: "*", Action: permission.Allow})
	}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: tool.Builtins(tool.Options{}), service: withAgents(root, allowEdits)})
	res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Make main panic"), Agent: "plan"})
	if err != nil || res.Text != "Plan: change main()." {
		t.Fatalf("%+v, %v", res, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); string(data) != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go changed under plan: %q", data)
	}
	for _, name := range []string{"new.go", "made.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was made under plan", name)
		}
	}
	calls := f.srv.ModelCalls()
	if names := toolNames(calls[0]); slices.Contains(names, "edit") || slices.Contains(names, "write") || !slices.Contains(names, "read") || !slices.Contains(names, "bash") {
		t.Errorf("plan offers %v; want read and bash (for commands that read), no edit or write", names)
	}
	// plan's bash runs the commands that read: ls listed the workspace.
	if out := calls[1].Get(`messages.@reverse.0.content.#(tool_use_id=="b3")`).Raw; !strings.Contains(out, "main.go") || strings.Contains(out, "may not use") {
		t.Errorf("ls under plan answered %q", out)
	}
	if sys := calls[0].Get("system").Raw; !strings.Contains(sys, "answer with a plan") {
		t.Errorf("the plan prompt is missing: %.200s", sys)
	}
	if cur, _ := f.svc.Agent(context.Background(), f.sess.ID); cur != "plan" {
		t.Errorf("the session's agent is %q, want plan", cur)
	}
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("go on")}); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(f.srv.ModelCalls()[2]); slices.Contains(names, "edit") {
		t.Errorf("the next turn left plan: %v", names)
	}
	if err := f.svc.SetAgent(context.Background(), f.sess.ID, "code-reviewer"); err == nil || !strings.Contains(err.Error(), "only as a sub-agent") {
		t.Errorf("SetAgent to a sub-agent: %v", err)
	}
}

// A sub-agent's permission question names its own session besides the
// parent's, which the fronts show.
func TestSubAgentQuestionCarriesTheChildSession(t *testing.T) {
	root := agentWorkspace(t)
	const childPrompt = "List the files."
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: childPrompt, Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("c1", "bash", `{"command":"touch asked.txt","description":"touch"}`)}},
			{Text: "done"},
		}},
		{Match: "Go", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("t1", "task", `{"description":"list","prompt":"`+childPrompt+`"}`)}},
			{Text: "ok"},
		}},
	}}
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.RejectOnce}}
	askBash := func(o *session.Options) {
		o.Rules = append(o.Rules, permission.Rule{Permission: "bash", Pattern: "*", Action: permission.Ask})
	}
	f := newFixture(t, fixtureOptions{script: script, root: root, asker: asker, tools: tool.Builtins(tool.Options{}), service: withAgents(root, askBash)})
	wait := f.events(t)
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Go")}); err != nil {
		t.Fatal(err)
	}
	evs := wait()
	if len(asker.asked) != 1 {
		t.Fatalf("asked %d questions", len(asker.asked))
	}
	q := asker.asked[0]
	if q.Session != f.sess.ID || q.Child == "" || q.Child == f.sess.ID {
		t.Errorf("the question: session %s, child %s", q.Session, q.Child)
	}
	var seen bool
	for _, e := range evs {
		if e.Kind == agent.EventPermission && e.Permission.ChildSessionID == q.Child {
			seen = true
		}
	}
	if !seen {
		t.Error("the permission event does not name the child session")
	}
}

// A sub-task started by the plan agent keeps plan's lock: the general
// sub-agent cannot write either.
func TestPlanSubTaskCannotEdit(t *testing.T) {
	root := agentWorkspace(t)
	const childPrompt = "Write the file."
	script := llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: childPrompt, Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{
				call("c1", "write", `{"path":"made.go","content":"package main\n"}`),
				call("c2", "bash", `{"command":"echo x > made.txt","description":"write"}`),
			}},
			{Text: "could not"},
		}},
		{Match: "Go", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("t1", "task", `{"description":"write","prompt":"`+childPrompt+`"}`)}},
			{Text: "ok"},
		}},
	}}
	f := newFixture(t, fixtureOptions{script: script, root: root, tools: tool.Builtins(tool.Options{}), service: withAgents(root, nil)})
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("Go"), Agent: "plan"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"made.go", "made.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was made by plan's sub-task", name)
		}
	}
	for _, c := range f.srv.ModelCalls() {
		if c.Conversation == childPrompt && slices.Contains(toolNames(c), "write") {
			t.Errorf("plan's sub-task was offered write: %v", toolNames(c))
		}
	}
}
