package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/server/lsp"
)

// The wire transcripts: each scenario drives the server with the Go
// client, step by step, waiting at the end of each step for everything the
// step makes the server send, and compares what crossed the wire with
// testdata/wire/<scenario>.txtar. Run with -update to rewrite them, and
// read the diff: they are the protocol as a client sees it.

// stallAfterText streams text in one chunk and then hangs until the turn is
// cancelled.
func stallAfterText(text string) llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{{Text: text, Chunks: 1,
		Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 4, Times: -1}}}}}
}

// answered waits for the turn's agent text to be want.
func (e *env) answered(t *testing.T, turnID, want string) {
	t.Helper()
	var got string
	for from := 0; got != want; {
		n, i := e.client.Await(from, "the answer "+want, func(n note) bool {
			if n.Method != "darman/sessionUpdate" {
				return false
			}
			u := updateOf(t, n)
			return u.TurnID == turnID && u.Update["sessionUpdate"] == "agent_message_chunk"
		})
		got += updateOf(t, n).Update["content"].(map[string]any)["text"].(string)
		from = i + 1
	}
}

// progressEnd matches the end of the turn's progress.
func progressEnd(n note) bool {
	return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"end"`)
}

// A long turn does not delay a code action or darman.session.list, which
// answers that the session is running; darman.cancel ends the turn.
func TestWireLongTurn(t *testing.T) {
	e := start(t, options{record: true, script: stallAfterText("Let me think."), optIns: map[string]bool{"sessionUpdates": true}})
	e.wire.Step("open a document")
	e.write("a.go", "package a\n")
	e.open("a.go", "package a\n")
	e.wire.Step("a prompt whose model stalls")
	tr := e.prompt("take your time")
	e.answered(t, tr.TurnID, "Let me think.")
	e.wire.Step("requests while the turn runs")
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 0, 0, 0, 9), &actions)
	e.client.mustCommand("darman.session.list", nil, nil)
	e.wire.Step("darman.cancel")
	e.client.mustCommand("darman.cancel", map[string]any{"sessionId": tr.SessionID}, nil)
	e.client.Await(0, "the turn cancelled", isState("cancelled"))
	e.checkTranscript(t, "long_turn", `
A long turn does not delay other requests: while the model stalls, a code
action and darman.session.list (which says the session is running) are
answered; darman.cancel ends the turn, stored as cancelled.`)
}

// $/cancelRequest answers the request at once with RequestCancelled.
func TestWireCancelRequest(t *testing.T) {
	gate := make(chan struct{})
	e := start(t, options{record: true, startGate: gate})
	e.wire.Step("a request waiting for the agent, cancelled")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	call, err := e.client.Conn.DispatchCall(ctx, "workspace/executeCommand", map[string]any{"command": "darman.session.list"},
		jsonrpc2.PickID(jsonrpc2.ID{Num: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	e.client.Notify("$/cancelRequest", map[string]any{"id": 1000})
	var je *jsonrpc2.Error
	if err := call.Wait(ctx, nil); !errors.As(err, &je) || je.Code != -32800 {
		t.Fatalf("the cancelled request answered %v, want -32800", err)
	}
	e.wire.Step("the agent started: the same request again")
	close(gate)
	e.client.mustCommand("darman.session.list", nil, nil)
	e.checkTranscript(t, "cancel_request", `
$/cancelRequest answers the request it names at once with RequestCancelled
(-32800); here darman.session.list, waiting for the agent to start.`)
}

// Cancelling the turn's progress in the editor cancels the turn.
func TestWireProgressCancel(t *testing.T) {
	e := start(t, options{record: true, script: stallAfterText("Working on it."),
		caps:     map[string]any{"window": map[string]any{"workDoneProgress": true}},
		settings: map[string]any{"transcript": false}})
	e.wire.Step("a prompt: progress begins")
	tr := e.prompt("a long job")
	e.client.Await(0, "progress begin", func(n note) bool {
		return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"begin"`)
	})
	e.wire.Step("the editor cancels the progress")
	e.client.Notify("window/workDoneProgress/cancel", map[string]any{"token": tr.TurnID})
	e.client.Await(0, "progress end", progressEnd)
	e.checkTranscript(t, "progress_cancel", `
A client without session updates but with work-done progress: the turn is
a progress whose token is the turn id, and cancelling it cancels the
turn. (The transcript fallback is off.)`)
}

// A permission asked with window/showMessageRequest, answered each way.
func TestWirePermissionShowMessageRequest(t *testing.T) {
	for _, tc := range []struct{ name, choice string }{
		{"allow_once", "Allow once"}, {"always", "Always allow"}, {"reject", "Reject"}, {"dismissed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, options{record: true, script: touchScript(), answer: answerShowMessage(tc.choice),
				caps:     map[string]any{"window": map[string]any{"workDoneProgress": true}},
				settings: map[string]any{"transcript": false}})
			e.wire.Step("a prompt whose bash command needs permission")
			e.prompt("make a file")
			e.client.Await(0, "the turn's end", progressEnd)
			e.checkTranscript(t, "permission_"+tc.name, `
A bash command that needs permission, asked with window/showMessageRequest
(Reject first), answered `+tc.name+`; the model is told the outcome. The
client takes work-done progress but no session updates.`)
		})
	}
}

// A client that answers MethodNotFound to window/showMessageRequest (Helix
// 25.07) is told with showMessage and answers through a code action.
func TestWirePermissionMethodNotFound(t *testing.T) {
	e := start(t, options{record: true, script: touchScript(),
		caps:     map[string]any{"window": map[string]any{"workDoneProgress": true}},
		settings: map[string]any{"transcript": false},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "window/showMessageRequest" {
				return nil, notFound
			}
			return defaultAnswer(method, params)
		}})
	e.wire.Step("open a document")
	e.write("main.go", "package main\n")
	e.open("main.go", "package main\n")
	e.wire.Step("a prompt; showMessageRequest is not there")
	e.prompt("make a file")
	e.client.Await(0, "the notice", isMethod("window/showMessage"))
	e.client.Await(0, "the progress saying so", func(n note) bool {
		return n.Method == "$/progress" && strings.Contains(string(n.Params), "waiting for your permission")
	})
	e.wire.Step("code actions offer the answer")
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("main.go"), 0, 0, 0, 0), &actions)
	allow := findAction(actions, "darman: allow")
	if allow == nil {
		t.Fatalf("no allow action: %v", titles(actions))
	}
	e.wire.Step("the allow action's command")
	e.client.MustCall("workspace/executeCommand", map[string]any{"command": allow.Command.Command, "arguments": allow.Command.Arguments}, nil)
	e.client.Await(0, "progress end", progressEnd)
	if !e.made() {
		t.Error("the command did not run")
	}
	e.checkTranscript(t, "permission_method_not_found", `
A client without window/showMessageRequest (it answers MethodNotFound, as
Helix 25.07 does) is told with window/showMessage, gets "darman: allow …"
and "darman: reject …" code actions at any position, and answers with the
action's command, darman.permission.answer.`)
}

// Nobody answers the question: after the permission timeout it is
// rejected, and the model is told.
func TestWirePermissionTimeout(t *testing.T) {
	e := start(t, options{record: true, script: touchScript(),
		serverOpts: lsp.Options{PermissionTimeout: 300 * time.Millisecond},
		caps:       map[string]any{"window": map[string]any{"workDoneProgress": true}},
		settings:   map[string]any{"transcript": false},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "window/showMessageRequest" {
				return nil, notFound
			}
			return defaultAnswer(method, params)
		}})
	e.wire.Step("a prompt nobody answers the question of")
	e.prompt("make a file")
	e.client.Await(0, "progress end", progressEnd)
	if e.made() || !e.modelSaw(1, "did not answer within 300ms") {
		t.Errorf("made %v; the model was told:\n%s", e.made(), e.model.ModelCalls()[1].Body)
	}
	e.checkTranscript(t, "permission_timeout", `
A question nobody answers (the client has no showMessageRequest and never
runs the code action) is rejected after the permission timeout, here
300 ms; the model is told nobody answered, and the turn goes on.`)
}

// A client that opted into darman's messages: session updates, and the
// permission asked with darman/requestPermission.
func TestWirePromptWithOptIns(t *testing.T) {
	e := start(t, options{record: true, script: touchScript(),
		optIns: map[string]bool{"sessionUpdates": true, "requestPermission": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "darman/requestPermission" {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
			}
			return defaultAnswer(method, params)
		}})
	e.wire.Step("a prompt with a tool call that needs permission")
	e.prompt("make a file")
	e.client.Await(0, "the end", isState("idle"))
	e.checkTranscript(t, "prompt_opt_ins", `
A client that opted into sessionUpdates and requestPermission: the turn
as darman/sessionUpdate notifications (the user's message, running, the
tool call and its updates, requires_action while asked, the answer, usage,
idle), the question as darman/requestPermission.`)
}

// A command template whose !`cmd` needs permission: the command answers at
// once, and the question belongs to the turn.
func TestWireCommandWithShell(t *testing.T) {
	e := start(t, options{record: true, script: llmtest.Script{Steps: []llmtest.Step{{Text: "Noted."}}},
		files:  map[string]string{".darman/command/status.md": "---\ndescription: Report the status\n---\nStatus: !`touch made-by-bash && echo fine`"},
		optIns: map[string]bool{"sessionUpdates": true, "requestPermission": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "darman/requestPermission" {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
			}
			return defaultAnswer(method, params)
		}})
	e.wire.Step("the commands")
	e.client.mustCommand("darman.command.list", nil, nil)
	e.wire.Step("run the command")
	e.client.mustCommand("darman.command.run", map[string]any{"name": "status"}, nil)
	e.client.Await(0, "the end", isState("idle"))
	e.checkTranscript(t, "command_with_shell", `
darman.command.list, then darman.command.run of a template with !`+"`cmd`"+`:
the command answers at once; the turn begins, the shell command's
permission is asked as part of it, and the expansion is the user's
message.`)
}

// Frames darman cannot read are answered and skipped; wrong params answer
// InvalidParams naming the field; the server carries on.
func TestWireMalformed(t *testing.T) {
	e := start(t, options{record: true})
	e.wire.Step("frames darman cannot read")
	e.wire.WriteRaw(t, "Content-Length: 9\r\n\r\nnot json!")
	e.wire.WriteRaw(t, "Content-Length: 41\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":[\"x\"]}  ")
	e.wire.WriteRaw(t, "this is no header\r\n\r\n")
	e.wire.WriteRaw(t, "Content-Length: 2\r\n\r\n[]")
	e.client.mustCommand("darman.session.list", nil, nil)
	e.wire.Step("params darman cannot use")
	for _, c := range []struct {
		method string
		params any
	}{
		{"workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "x", "sessoinId": "typo"}}}},
		{"workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{"just a string"}}},
		{"workspace/executeCommand", map[string]any{"command": "darman.nosuch"}},
		{"textDocument/codeAction", "not an object"},
		{"textDocument/noSuchMethod", map[string]any{}},
	} {
		if err := e.client.Call(c.method, c.params, nil); err == nil {
			t.Errorf("%s %v succeeded", c.method, c.params)
		}
	}
	e.client.mustCommand("darman.session.list", nil, nil)
	e.checkTranscript(t, "malformed", `
Frames that are not JSON, not JSON-RPC, or have no Content-Length are
answered (ParseError or InvalidRequest, with the request's id when it can
be read) and skipped; params that do not fit answer InvalidParams naming
what is wrong; an unknown method answers MethodNotFound. The server
answers the next request as usual.`)
}

// A panic in a handler answers InternalError; the server carries on.
func TestWirePanic(t *testing.T) {
	e := start(t, options{record: true, model: func(context.Context) (string, error) { panic("the model picker broke") }})
	e.wire.Step("a request whose handler panics")
	if err := e.client.command("darman.prompt", map[string]any{"prompt": "hi"}, nil); err == nil {
		t.Fatal("the panicking request succeeded")
	}
	e.wire.Step("the next request")
	e.client.mustCommand("darman.session.list", nil, nil)
	e.checkTranscript(t, "panic", `
A handler that panics (here the model picker) answers InternalError with
the panic's message; the server logs the stack and answers the next
request.`)
}
