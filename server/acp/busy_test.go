package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
)

// While a turn runs, what must wait for its end is refused with an error
// that says so — a second prompt, /revert, loading the session again on
// the connection — and nothing of it happens: the files stay as the turn
// left them and the model is not called again. Once the turn is
// cancelled, the session takes each of them. Whether a turn runs is the
// session core's (session.ErrBusy, Service.Busy): the front keeps no flag
// of its own.
func TestBusySessionRefusesWhatMustWaitForItsTurn(t *testing.T) {
	e := start(t, options{
		checkpoints: true,
		rules:       append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Allow}),
		files:       map[string]string{"a.txt": "alpha\n"},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}},
			{Text: "Done."},
			{Text: "Thinking about it very slowly", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 4, Times: -1}}},
		}},
	})
	id := e.newSession()
	if stop := e.prompt(id, "shout"); stop != "end_turn" || e.read("a.txt") != "ALPHA\n" {
		t.Fatalf("the first turn: %q, a.txt = %q", stop, e.read("a.txt"))
	}
	done := make(chan string, 1)
	go func() {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		if err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "stall please"}}}, &res); err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- res.StopReason
	}()
	e.client.Await(0, "the stalled turn's first chunk", func(n note) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), "agent_message_chunk") && !strings.Contains(string(n.Params), "Done.")
	})
	calls := len(e.model.ModelCalls())

	refused := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s while a turn runs: %v, want an error saying %q", what, err, want)
		}
	}
	var res json.RawMessage
	refused("a second prompt", e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "shout"}}}, &res),
		"already running a turn")
	refused("/revert", e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "/revert"}}}, &res),
		"is running a turn")
	refused("session/load", e.client.Call("session/load", map[string]any{"sessionId": id, "cwd": e.root, "mcpServers": []any{}}, &res),
		"is running a turn")
	if got := e.read("a.txt"); got != "ALPHA\n" {
		t.Errorf("a.txt = %q after the refused /revert, want the turn's %q", got, "ALPHA\n")
	}
	if n := len(e.model.ModelCalls()); n != calls {
		t.Errorf("the refused prompt called the model: %d calls, %d before", n, calls)
	}

	if err := e.client.Conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": id}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "cancelled" {
		t.Fatalf("the stalled turn: %q", got)
	}
	if stop := e.prompt(id, "/revert"); stop != "end_turn" || e.read("a.txt") != "alpha\n" {
		t.Errorf("/revert after the cancel: %q, a.txt = %q", stop, e.read("a.txt"))
	}
	if err := e.client.Call("session/load", map[string]any{"sessionId": id, "cwd": e.root, "mcpServers": []any{}}, &res); err != nil {
		t.Errorf("session/load after the cancel: %v", err)
	}
}
