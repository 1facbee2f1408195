package lsp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/server/lsp"
)

// touchScript runs a bash command that needs permission, then answers.
func touchScript() llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{toolStep("bash", map[string]string{"command": "touch made-by-bash"}), {Text: "finished"}}}
}

func (e *env) made() bool {
	_, err := os.Stat(filepath.Join(e.root, "made-by-bash"))
	return err == nil
}

var notFound = &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Unhandled method"}

// answerShowMessage picks the showMessageRequest action whose title starts
// with choice; choice "" dismisses the question (null).
func answerShowMessage(choice string) answerFunc {
	return func(method string, params json.RawMessage) (any, error) {
		if method != "window/showMessageRequest" {
			return defaultAnswer(method, params)
		}
		if choice == "" {
			return nil, nil
		}
		var p struct {
			Actions []struct{ Title string } `json:"actions"`
		}
		json.Unmarshal(params, &p)
		for _, a := range p.Actions {
			if strings.HasPrefix(a.Title, choice) {
				return map[string]string{"title": a.Title}, nil
			}
		}
		return nil, errors.New("no action " + choice)
	}
}

func TestPermissionThroughShowMessageRequest(t *testing.T) {
	for _, tc := range []struct {
		choice string
		made   bool
		result string
	}{
		{"Allow once", true, ""},
		{"Always allow", true, ""},
		{"Reject", false, "the user rejected"},
		{"", false, "dismissed"}, // the question closed without a choice
	} {
		name := tc.choice
		if name == "" {
			name = "dismissed"
		}
		t.Run(name, func(t *testing.T) {
			e := start(t, options{script: touchScript(), answer: answerShowMessage(tc.choice), optIns: map[string]bool{"sessionUpdates": true}})
			e.prompt("make a file")
			q, _ := e.client.Await(0, "the question", isMethod("window/showMessageRequest"))
			var p struct {
				Message string
				Actions []struct{ Title string }
			}
			json.Unmarshal(q.Params, &p)
			if !strings.Contains(p.Message, "touch made-by-bash") || len(p.Actions) != 3 || p.Actions[0].Title != "Reject" {
				t.Errorf("showMessageRequest %s: want the command, and Reject first", q.Params)
			}
			e.client.Await(0, "the end", isState("idle"))
			if e.made() != tc.made {
				t.Errorf("the command ran: %v, want %v", e.made(), tc.made)
			}
			if tc.result != "" && !e.modelSaw(1, tc.result) {
				t.Errorf("the model was not told %q:\n%s", tc.result, e.model.ModelCalls()[1].Body)
			}
		})
	}
}

func TestPermissionThroughRequestPermission(t *testing.T) {
	var asked json.RawMessage
	e := start(t, options{
		script: touchScript(),
		optIns: map[string]bool{"sessionUpdates": true, "requestPermission": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method != "darman/requestPermission" {
				return defaultAnswer(method, params)
			}
			asked = params
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		},
	})
	tr := e.prompt("make a file")
	e.client.Await(0, "the end", isState("idle"))
	if !e.made() {
		t.Error("the command did not run after allow_once")
	}
	var p struct {
		SessionID, TurnID, RequestID string
		ToolCall                     struct{ ToolCallID, Title, Permission string }
		Options                      []struct{ OptionID, Name, Kind string }
	}
	json.Unmarshal(asked, &p)
	if p.SessionID != tr.SessionID || p.TurnID != tr.TurnID || !strings.HasPrefix(p.RequestID, "perm_") ||
		p.ToolCall.Permission != "bash" || p.ToolCall.ToolCallID == "" || !strings.Contains(p.ToolCall.Title, "touch") || len(p.Options) != 4 {
		t.Errorf("darman/requestPermission params %s", asked)
	}
	if len(e.client.All("window/showMessageRequest")) != 0 {
		t.Error("the client that opted in was also asked with showMessageRequest")
	}
	// requires_action comes while the question is open.
	e.client.Await(0, "requires_action", isState("requires_action"))
}

var requestIDRe = regexp.MustCompile(`"requestId": "(perm_\d+)"`)

// A client without showMessageRequest (Helix 25.07) is told with
// showMessage, offered code actions, and answers with
// darman.permission.answer.
func TestPermissionWithoutShowMessageRequest(t *testing.T) {
	e := start(t, options{script: touchScript(), optIns: map[string]bool{"sessionUpdates": true}, answer: func(method string, params json.RawMessage) (any, error) {
		if method == "window/showMessageRequest" {
			return nil, notFound
		}
		return defaultAnswer(method, params)
	}})
	e.write("main.go", "package main\n")
	e.open("main.go", "package main\n")
	e.prompt("make a file")
	msg, _ := e.client.Await(0, "the notice", isMethod("window/showMessage"))
	var p struct{ Message string }
	json.Unmarshal(msg.Params, &p)
	m := requestIDRe.FindStringSubmatch(p.Message)
	if m == nil || !strings.Contains(p.Message, "darman: allow") {
		t.Fatalf("showMessage %q names no request id or code action", p.Message)
	}
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("main.go"), 0, 0, 0, 0), &actions)
	allow := findAction(actions, "darman: allow")
	if allow == nil || allow.Command == nil || allow.Command.Command != "darman.permission.answer" {
		t.Fatalf("no allow code action for the open question: %+v", actions)
	}
	e.client.MustCall("workspace/executeCommand", map[string]any{"command": allow.Command.Command, "arguments": allow.Command.Arguments}, nil)
	e.client.Await(0, "the end", isState("idle"))
	if !e.made() {
		t.Error("the command did not run after the code action allowed it")
	}
	// The question is closed now.
	err := e.client.command("darman.permission.answer", map[string]any{"requestId": m[1], "optionId": "allow_once"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no open permission question") {
		t.Errorf("answering a closed question: %v", err)
	}
}

// Nobody answers: after the configured time the call is rejected.
func TestPermissionTimesOut(t *testing.T) {
	e := start(t, options{
		script:     touchScript(),
		serverOpts: lsp.Options{PermissionTimeout: 300 * time.Millisecond},
		optIns:     map[string]bool{"sessionUpdates": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "window/showMessageRequest" {
				return nil, notFound
			}
			return defaultAnswer(method, params)
		},
	})
	e.prompt("make a file")
	e.client.Await(0, "the end", isState("idle"))
	if e.made() {
		t.Error("the command ran without an answer")
	}
	if !e.modelSaw(1, "did not answer within 300ms") {
		t.Errorf("the model was not told why:\n%s", e.model.ModelCalls()[1].Body)
	}
}

// Cancelling the turn while the question is open withdraws the question
// from the client ($/cancelRequest) and ends the turn as cancelled.
func TestCancelWhileAsking(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e := start(t, options{
		script: touchScript(),
		optIns: map[string]bool{"sessionUpdates": true, "requestPermission": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "darman/requestPermission" {
				<-release // the user never answers
				return nil, errors.New("gone")
			}
			return defaultAnswer(method, params)
		},
	})
	tr := e.prompt("make a file")
	q, _ := e.client.Await(0, "the question", isMethod("darman/requestPermission"))
	e.client.mustCommand("darman.cancel", map[string]any{"sessionId": tr.SessionID}, nil)
	e.client.Await(0, "the turn cancelled", isState("cancelled"))
	cancel, _ := e.client.Await(0, "$/cancelRequest", isMethod("$/cancelRequest"))
	idJSON, _ := json.Marshal(q.ID)
	if string(cancel.Params) != `{"id":`+string(idJSON)+`}` {
		t.Errorf("$/cancelRequest %s, want id %s", cancel.Params, idJSON)
	}
	if e.made() {
		t.Error("the command ran")
	}
}

// A client that behaves as Helix 25.07 does: no showMessageRequest or
// showDocument (MethodNotFound), no opt-ins, custom messages and command
// results ignored. The whole turn still works: the edit is allowed through
// the code action the warning points to, and lands on disk.
func TestHelixLikeClient(t *testing.T) {
	helix := func(method string, params json.RawMessage) (any, error) {
		switch method {
		case "window/workDoneProgress/create":
			return nil, nil // Helix shows progress in its status line
		}
		return nil, notFound
	}
	e := start(t, options{
		script: writeScript("main.go", "package main // by darman\n"),
		caps:   map[string]any{"window": map[string]any{"workDoneProgress": true}},
		answer: helix,
	})
	e.write("main.go", "package main\n")
	e.open("main.go", "package main\n")
	// The command's result is not read, as Helix ignores it.
	go e.client.command("darman.prompt", map[string]any{"prompt": "rewrite main.go"}, nil)
	e.client.Await(0, "the warning", isMethod("window/showMessage"))
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("main.go"), 0, 0, 0, 0), &actions)
	allow := findAction(actions, "darman: allow")
	if allow == nil {
		t.Fatalf("no allow action: %v", titles(actions))
	}
	e.client.MustCall("workspace/executeCommand", map[string]any{"command": allow.Command.Command, "arguments": allow.Command.Arguments}, nil)
	e.client.Await(0, "progress end", func(n note) bool {
		return n.Method == "$/progress" && strings.Contains(string(n.Params), `"message":"done"`)
	})
	if got := e.read("main.go"); got != "package main // by darman\n" {
		t.Errorf("disk holds %q", got)
	}
	if n := len(e.client.All("darman/sessionUpdate")) + len(e.client.All("darman/requestPermission")); n != 0 {
		t.Errorf("%d custom messages sent to a client that did not opt in", n)
	}
}
