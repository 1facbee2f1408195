package lsp_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// turnUpdates are the darman/sessionUpdate params of the turn, from the
// client's message from on, until its end.
func (e *env) turnUpdates(from int, tr turn) []update {
	e.t.Helper()
	_, end := e.client.Await(from, "the end of "+tr.TurnID, func(n note) bool {
		return isState("idle")(n) && strings.Contains(string(n.Params), tr.TurnID) || isState("failed")(n) && strings.Contains(string(n.Params), tr.TurnID)
	})
	var out []update
	for _, n := range e.client.Since(from)[:end-from+1] {
		if n.Method == "darman/sessionUpdate" {
			if u := updateOf(e.t, n); u.TurnID == tr.TurnID {
				out = append(out, u)
			}
		}
	}
	return out
}

// texts are the content texts of the updates of kind.
func texts(us []update, kind string) []string {
	var out []string
	for _, u := range us {
		if c, ok := u.Update["content"].(map[string]any); ok && u.Update["sessionUpdate"] == kind {
			out = append(out, c["text"].(string))
		}
	}
	return out
}

// TestPromptRunsTheTypedCommand: darman.prompt "/review main.go" runs the
// workspace's command as every front does (it went to the model as plain
// text): the model is sent the expanded template with the editor's
// context, while the user's message, live and reloaded, is what was typed.
func TestPromptRunsTheTypedCommand(t *testing.T) {
	e := start(t, options{
		files:  map[string]string{".darman/command/review.md": "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs, carefully.", "main.go": "package main\n"},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Reviewed."}, {Text: "Answered."}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.open("main.go", "package main\n")
	var tr turn
	from := e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": "/review main.go", "context": map[string]any{"uri": e.uri("main.go")}}, &tr)
	if got := texts(e.turnUpdates(from, tr), "user_message_chunk"); strings.Join(got, "|") != "/review main.go" {
		t.Errorf("the user's message is shown as %q, want what was typed", got)
	}
	if !e.modelSaw(0, "Review main.go for bugs, carefully.") || !e.modelSaw(0, "The user is looking at main.go.") {
		t.Errorf("the model was not sent the expansion and the context: %.2000s", e.model.ModelCalls()[0].Body)
	}

	// A plain prompt with the editor's context: the context is the
	// model's, not the user's words.
	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "and now?", "context": map[string]any{"uri": e.uri("main.go")}}, &tr)
	if got := texts(e.turnUpdates(from, tr), "user_message_chunk"); strings.Join(got, "|") != "and now?" {
		t.Errorf("the user's message is shown as %q, want what was typed", got)
	}
	if body := string(e.model.ModelCalls()[1].Body); !strings.Contains(body, "and now?\\n\\nThe user is looking at main.go.") {
		t.Errorf("the model was not sent the context after the message: %.2000s", body)
	}

	var loaded struct {
		Title   string           `json:"title"`
		Updates []map[string]any `json:"updates"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, &loaded)
	var users []string
	for _, u := range loaded.Updates {
		if c, ok := u["content"].(map[string]any); ok && u["sessionUpdate"] == "user_message_chunk" {
			users = append(users, c["text"].(string))
		}
	}
	if strings.Join(users, "|") != "/review main.go|and now?" || loaded.Title != "/review main.go" {
		t.Errorf("the reloaded session shows %q titled %q, want what was typed", users, loaded.Title)
	}
}

// TestBuiltinCommands: /help, /model and /clear are darman's own, run by
// darman.prompt and darman.command.run without a model call of theirs.
func TestBuiltinCommands(t *testing.T) {
	e := start(t, options{
		files:  map[string]string{".darman/command/review.md": "---\ndescription: Review a file\n---\nReview $ARGUMENTS."},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "first answer"}, {Text: "second answer"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	from := e.client.Count()
	tr := e.prompt("/help")
	help := strings.Join(texts(e.turnUpdates(from, tr), "agent_message_chunk"), "")
	for _, want := range []string{"/review — Review a file", "/compact", "/clear", "/model [provider/model-id]"} {
		if !strings.Contains(help, want) {
			t.Errorf("/help answered %q, want it to name %q", help, want)
		}
	}
	if n := len(e.model.ModelCalls()); n != 0 {
		t.Fatalf("/help called the model %d times", n)
	}

	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "remember the word zebra"}, &tr)
	e.turnUpdates(from, tr)
	from = e.client.Count()
	e.client.mustCommand("darman.command.run", map[string]any{"sessionId": tr.SessionID, "name": "model", "arguments": "anthropic/claude-haiku-4-5"}, &tr)
	if got := strings.Join(texts(e.turnUpdates(from, tr), "agent_message_chunk"), ""); !strings.Contains(got, "claude-haiku-4-5 from now on") {
		t.Errorf("/model answered %q", got)
	}
	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "/clear"}, &tr)
	e.turnUpdates(from, tr)
	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "what was the word?"}, &tr)
	e.turnUpdates(from, tr)
	calls := e.model.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want the two prompts'", len(calls))
	}
	if got := calls[1].Get("model").String(); got != "claude-haiku-4-5" {
		t.Errorf("after /model the turn went to %q", got)
	}
	if body := string(calls[1].Body); strings.Contains(body, "zebra") || !strings.Contains(body, "what was the word?") {
		t.Errorf("after /clear the model was sent the conversation before it: %.2000s", body)
	}
}

// TestNewCommand: /new makes a fresh session with the session's model
// and says so in a new_session update (the panel switches to it); the
// next prompt there is sent nothing said before.
func TestNewCommand(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "first answer"}, {Text: "second answer"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	from := e.client.Count()
	tr := e.prompt("remember the word zebra")
	e.turnUpdates(from, tr)
	from = e.client.Count()
	var nt turn
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "/new"}, &nt)
	var fresh string
	for _, u := range e.turnUpdates(from, nt) {
		if u.Update["sessionUpdate"] == "new_session" {
			fresh, _ = u.Update["newSessionId"].(string)
		}
	}
	if fresh == "" || fresh == tr.SessionID {
		t.Fatalf("/new sent no new_session update naming a new session (got %q, the session was %s)", fresh, tr.SessionID)
	}
	var list struct {
		Sessions []struct {
			ID    string `json:"sessionId"`
			Model string `json:"model"`
		} `json:"sessions"`
	}
	e.client.mustCommand("darman.session.list", nil, &list)
	var model string
	for _, s := range list.Sessions {
		if s.ID == fresh {
			model = s.Model
		}
	}
	if model == "" {
		t.Fatalf("the new session %s is not in darman.session.list: %+v", fresh, list.Sessions)
	}
	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": fresh, "prompt": "what was the word?"}, &tr)
	e.turnUpdates(from, tr)
	calls := e.model.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want the two prompts' (/new calls no model)", len(calls))
	}
	if body := string(calls[1].Body); strings.Contains(body, "zebra") {
		t.Errorf("the new session's turn was sent the old conversation: %.2000s", body)
	}
}

// TestPromptHandoff: darman.prompt's handoff (the panel's "Build it")
// sends the server's own hand-off prompt to build in the plan's session,
// so no client writes it.
func TestPromptHandoff(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Plan: make main panic."}, {Text: "Done."}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	var tr turn
	from := e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": "Make main panic", "agent": "plan"}, &tr)
	e.turnUpdates(from, tr)
	if err := e.client.command("darman.prompt", map[string]any{"handoff": true, "prompt": "do it"}, nil); err == nil || !strings.Contains(err.Error(), "handoff") {
		t.Errorf("a hand-off without a session, with a prompt: %v", err)
	}
	from = e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "handoff": true}, &tr)
	if got := texts(e.turnUpdates(from, tr), "user_message_chunk"); len(got) != 1 || !strings.HasPrefix(got[0], "Carry out the plan from your previous answer") {
		t.Errorf("the hand-off's message is %q", got)
	}
	calls := e.model.ModelCalls()
	if last := calls[len(calls)-1]; !strings.Contains(string(last.Body), "Carry out the plan") || !strings.Contains(string(last.Body), "Plan: make main panic.") ||
		strings.Contains(last.Get("system").Raw, "plan agent") {
		t.Errorf("the hand-off did not reach build with the plan: %.2000s", last.Body)
	}
	var status struct {
		Agent struct {
			CurrentAgent string `json:"currentAgent"`
		} `json:"agent"`
	}
	e.client.mustCommand("darman.status", map[string]any{"sessionId": tr.SessionID}, &status)
	if status.Agent.CurrentAgent != "build" {
		t.Errorf("after the hand-off the session's agent is %q", status.Agent.CurrentAgent)
	}
}
