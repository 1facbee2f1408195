package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func agentID(s string) agent.ID { return agent.ID(s) }

// stall is a model that starts answering and then never finishes.
func stall() llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{{Text: "let me think about it", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 5, Times: -1}}}}}
}

// A client that opted into session updates gets the turn as ACP-shaped
// updates, every one with the turn's id, in order: the user's message,
// running, the answer, idle.
func TestPromptStreamsUpdates(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Hello from the model.", Chunks: 4}, {Text: "Hello again."}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	tr := e.prompt("say hello")
	_, end := e.client.Await(0, "the turn's end", isState("idle"))
	var kinds []string
	var answer strings.Builder
	for _, n := range e.client.All("darman/sessionUpdate")[:] {
		u := updateOf(t, n)
		if u.SessionID != tr.SessionID || u.TurnID != tr.TurnID {
			t.Errorf("update %s has session %s turn %s, want %s %s", n.Params, u.SessionID, u.TurnID, tr.SessionID, tr.TurnID)
		}
		kind := u.Update["sessionUpdate"].(string)
		if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
			kinds = append(kinds, kind)
		}
		if kind == "agent_message_chunk" {
			answer.WriteString(u.Update["content"].(map[string]any)["text"].(string))
		}
		if kind == "usage_update" {
			if w, _ := u.Update["contextWindow"].(float64); w <= 0 {
				t.Errorf("usage_update without the model's context window: %s", n.Params)
			}
		}
	}
	want := []string{"user_message_chunk", "state_update", "agent_message_chunk", "usage_update", "state_update"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("updates %v, want %v", kinds, want)
	}
	if answer.String() != "Hello from the model." {
		t.Errorf("the answer's chunks make %q", answer.String())
	}
	if end != e.client.Count()-1 && len(e.client.All("darman/sessionUpdate")) > len(kinds)+10 {
		t.Errorf("updates after the turn ended:\n%s", e.client.Dump())
	}
	// A prompt in the same session continues it.
	var second turn
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "again"}, &second)
	if second.SessionID != tr.SessionID || second.TurnID == tr.TurnID {
		t.Errorf("second prompt: %+v after %+v", second, tr)
	}
	e.client.Await(end+1, "the second turn's end", isState("idle"))
}

// A long turn does not hold up other requests: darman.session.list is
// answered while the turn is still running (it says so), before the turn
// ends; then darman.cancel ends the turn as cancelled.
func TestLongTurnDoesNotBlockRequests(t *testing.T) {
	e := start(t, options{script: stall(), optIns: map[string]bool{"sessionUpdates": true}})
	tr := e.prompt("take your time")
	e.client.Await(0, "the answer starting", func(n note) bool {
		return n.Method == "darman/sessionUpdate" && updateOf(t, n).Update["sessionUpdate"] == "agent_message_chunk"
	})
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			State     string `json:"state"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	e.client.mustCommand("darman.session.list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != tr.SessionID || list.Sessions[0].State != "running" {
		t.Fatalf("session list during the turn: %+v", list)
	}
	if got := e.client.All("darman/sessionUpdate"); len(got) > 0 && isState("idle")(got[len(got)-1]) {
		t.Fatal("the turn ended before the list was answered")
	}
	// The session is busy: a second prompt is refused at once.
	err := e.client.command("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "more"}, nil)
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a prompt during the turn: %v", err)
	}
	e.client.mustCommand("darman.cancel", map[string]any{"sessionId": tr.SessionID}, nil)
	n, _ := e.client.Await(0, "the turn cancelled", isState("cancelled"))
	if updateOf(t, n).TurnID != tr.TurnID {
		t.Errorf("the cancelled state has turn %s, want %s", updateOf(t, n).TurnID, tr.TurnID)
	}
}

// A client without session updates but with work-done progress gets one
// progress per turn, whose token is the turn id, and cancelling it in the
// editor cancels the turn.
func TestProgressAndItsCancel(t *testing.T) {
	e := start(t, options{script: stall(), caps: map[string]any{"window": map[string]any{"workDoneProgress": true}}})
	tr := e.prompt("a long job")
	create, _ := e.client.Await(0, "progress create", isMethod("window/workDoneProgress/create"))
	if string(create.Params) != `{"token":"`+tr.TurnID+`"}` {
		t.Errorf("create %s, want the turn id as token", create.Params)
	}
	isProgress := func(kind string) func(note) bool {
		return func(n note) bool {
			var p struct {
				Token string         `json:"token"`
				Value map[string]any `json:"value"`
			}
			json.Unmarshal(n.Params, &p)
			return n.Method == "$/progress" && p.Token == tr.TurnID && p.Value["kind"] == kind
		}
	}
	begin, _ := e.client.Await(0, "progress begin", isProgress("begin"))
	if !strings.Contains(string(begin.Params), `"cancellable":true`) || !strings.Contains(string(begin.Params), "a long job") {
		t.Errorf("begin %s", begin.Params)
	}
	e.client.Notify("window/workDoneProgress/cancel", map[string]any{"token": tr.TurnID})
	end, _ := e.client.Await(0, "progress end", isProgress("end"))
	if !strings.Contains(string(end.Params), `"message":"cancelled"`) {
		t.Errorf("end %s, want cancelled", end.Params)
	}
	if len(e.client.All("darman/sessionUpdate")) != 0 {
		t.Error("session updates sent to a client that did not opt in")
	}
}

// A turn that fails tells a client without session updates with
// showMessage and ends its progress with the reason.
func TestFailedTurnFallbacks(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 400, Message: "bad request from the script", Times: -1}}}}},
		caps:   map[string]any{"window": map[string]any{"workDoneProgress": true}},
	})
	e.prompt("fail please")
	msg, _ := e.client.Await(0, "an error message", isMethod("window/showMessage"))
	if !strings.Contains(string(msg.Params), "the turn failed") || !strings.Contains(string(msg.Params), `"type":1`) {
		t.Errorf("showMessage %s", msg.Params)
	}
	end, _ := e.client.Await(0, "progress end", func(n note) bool {
		return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"end"`)
	})
	if !strings.Contains(string(end.Params), `"message":"failed: `) {
		t.Errorf("progress end %s, want failed: reason", end.Params)
	}
}

func TestCommandArguments(t *testing.T) {
	e := start(t, options{})
	cases := []struct {
		name string
		arg  any
		text string
	}{
		{"darman.prompt", map[string]any{"prompt": "x", "sessoinId": "typo"}, `unknown field "sessoinId"`},
		{"darman.prompt", map[string]any{}, "prompt is required"},
		{"darman.prompt", map[string]any{"prompt": 3}, `field "prompt"`},
		{"darman.prompt", "just a string", "expected an object"},
		{"darman.prompt", map[string]any{"prompt": "x", "sessionId": "nope"}, "sessionId"},
		{"darman.cancel", nil, "sessionId is required"},
		{"darman.permission.answer", map[string]any{"requestId": "perm_1", "optionId": "maybe"}, "optionId"},
		{"darman.nosuch", nil, `unknown command "darman.nosuch"`},
	}
	for _, tc := range cases {
		err := e.client.command(tc.name, tc.arg, nil)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(je.Message, tc.text) {
			t.Errorf("%s %v: %v, want InvalidParams mentioning %q", tc.name, tc.arg, err, tc.text)
		}
	}
	// Two argument objects are refused too.
	err := e.client.Call("workspace/executeCommand", map[string]any{"command": "darman.status", "arguments": []any{1, 2}}, nil)
	if err == nil || !strings.Contains(err.Error(), "one argument") {
		t.Errorf("two arguments: %v", err)
	}
}

// A panic in a handler answers InternalError and the server carries on.
func TestPanicInAHandler(t *testing.T) {
	e := start(t, options{model: func(context.Context) (string, error) { panic("the model picker broke") }})
	err := e.client.command("darman.prompt", map[string]any{"prompt": "hi"}, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.CodeInternalError || !strings.Contains(je.Message, "the model picker broke") {
		t.Fatalf("got %v, want InternalError", err)
	}
	var list map[string]any
	e.client.mustCommand("darman.session.list", nil, &list)
}

func TestSessionLoadAndDelete(t *testing.T) {
	deleted := make(chan agent.ID, 1)
	e := start(t, options{
		script:  llmtest.Script{Steps: []llmtest.Step{{Text: "Stored answer."}}},
		optIns:  map[string]bool{"sessionUpdates": true},
		deleted: func(id agent.ID) error { deleted <- id; return nil },
	})
	tr := e.prompt("remember this")
	e.client.Await(0, "the end", isState("idle"))
	var loaded struct {
		SessionID string           `json:"sessionId"`
		Updates   []map[string]any `json:"updates"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, &loaded)
	var kinds []string
	for _, u := range loaded.Updates {
		kinds = append(kinds, u["sessionUpdate"].(string))
	}
	if loaded.SessionID != tr.SessionID || strings.Join(kinds, " ") != "user_message_chunk agent_message_chunk usage_update" {
		t.Errorf("loaded %+v", loaded)
	}
	e.client.mustCommand("darman.session.delete", map[string]any{"sessionId": tr.SessionID}, nil)
	if _, err := e.store.Session(t.Context(), agentID(tr.SessionID)); err == nil {
		t.Error("the session is still stored")
	}
	// What others keep of it (the MCP client's records) is removed too.
	select {
	case id := <-deleted:
		if string(id) != tr.SessionID {
			t.Errorf("Deleted(%s); want %s", id, tr.SessionID)
		}
	default:
		t.Error("darman.session.delete answered without calling the agent's Deleted")
	}
	var list struct {
		Sessions []any `json:"sessions"`
	}
	e.client.mustCommand("darman.session.list", nil, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("list after delete: %+v", list)
	}
}

// A prompt to an existing session may name another model: that turn runs
// on it, and the session keeps its own.
func TestPromptWithAnotherModel(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "first"}, {Text: "second"}, {Text: "third"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	tr := e.prompt("hello")
	_, end := e.client.Await(0, "the first turn's end", isState("idle"))
	var second turn
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "again", "model": "anthropic/claude-haiku-4-5"}, &second)
	_, end = e.client.Await(end+1, "the second turn's end", isState("idle"))
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "once more"}, &second)
	e.client.Await(end+1, "the third turn's end", isState("idle"))
	var models []string
	for _, c := range e.model.ModelCalls() {
		models = append(models, c.Model)
	}
	if strings.Join(models, " ") != "claude-sonnet-4-5 claude-haiku-4-5 claude-sonnet-4-5" {
		t.Fatalf("the turns ran on %v", models)
	}
}
