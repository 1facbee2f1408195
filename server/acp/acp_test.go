package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/server/acp"
)

var fsCaps = map[string]any{"fs": map[string]bool{"readTextFile": true, "writeTextFile": true}}

// TestInitializeSaysWhatDarmanDoes checks the handshake's answer against
// what the rest of these tests exercise.
func TestInitializeSaysWhatDarmanDoes(t *testing.T) {
	e := start(t, options{})
	var res struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession        bool            `json:"loadSession"`
			PromptCapabilities map[string]bool `json:"promptCapabilities"`
			MCPCapabilities    map[string]bool `json:"mcpCapabilities"`
			SessionCaps        map[string]any  `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
		AuthMethods []any             `json:"authMethods"`
		AgentInfo   map[string]string `json:"agentInfo"`
	}
	e.client.MustCall("initialize", map[string]any{"protocolVersion": 7}, &res)
	c := res.AgentCapabilities
	if res.ProtocolVersion != 1 || !c.LoadSession || !c.PromptCapabilities["embeddedContext"] || c.PromptCapabilities["image"] ||
		!c.MCPCapabilities["http"] || !c.MCPCapabilities["sse"] || c.SessionCaps["list"] == nil || res.AuthMethods == nil || len(res.AuthMethods) != 0 ||
		res.AgentInfo["name"] != "darman" {
		t.Errorf("initialize: %+v", res)
	}
	var auth map[string]any
	e.client.MustCall("authenticate", map[string]any{"methodId": "anything"}, &auth)
}

// TestPromptAsksPermissionAndGoesThroughTheClient is a turn with a client
// that offers fs/*: the model reads a file the editor holds unsaved
// changes to and sees them, then writes a file, which darman asks for
// (allowed once) and sends to the client, which writes it; darman leaves
// the disk alone.
func TestPromptAsksPermissionAndGoesThroughTheClient(t *testing.T) {
	var mu sync.Mutex
	written := map[string]string{}
	e := start(t, options{
		caps:  fsCaps,
		files: map[string]string{"notes.txt": "on disk\n"},
		script: llmtest.Script{Steps: []llmtest.Step{
			{Text: "Reading.", ToolCalls: []llmtest.ToolCall{call("read", `{"path":"notes.txt"}`)}},
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"out.txt","content":"written by darman\n"}`)}},
			{Text: "Done."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			var p struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			json.Unmarshal(params, &p)
			switch method {
			case "session/request_permission":
				return allowOnce(params), nil
			case "fs/read_text_file":
				if strings.HasSuffix(p.Path, "notes.txt") {
					return map[string]string{"content": "in the editor, unsaved\n"}, nil
				}
				return nil, &jsonrpc2.Error{Code: -32002, Message: "not found"}
			case "fs/write_text_file":
				mu.Lock()
				written[p.Path] = p.Content
				mu.Unlock()
				return map[string]any{}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	if stop := e.prompt(id, "take notes"); stop != "end_turn" {
		t.Fatalf("stopReason %q\n%s", stop, e.client.Dump())
	}
	out := filepath.Join(e.root, "out.txt")
	mu.Lock()
	got := written[out]
	mu.Unlock()
	if got != "written by darman\n" {
		t.Errorf("fs/write_text_file got %q for %s; all: %v", got, out, written)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("darman wrote %s itself (stat: %v)", out, err)
	}
	calls := e.model.ModelCalls()
	if len(calls) != 3 || !strings.Contains(string(calls[1].Body), "in the editor, unsaved") {
		t.Errorf("the model did not read the editor's buffer (%d calls)", len(calls))
	}

	asks := e.client.All("session/request_permission")
	if len(asks) != 1 {
		t.Fatalf("%d permission requests:\n%s", len(asks), e.client.Dump())
	}
	var ask struct {
		SessionID string `json:"sessionId"`
		ToolCall  struct {
			ToolCallID string `json:"toolCallId"`
			Content    []struct {
				Type    string `json:"type"`
				Path    string `json:"path"`
				NewText string `json:"newText"`
			} `json:"content"`
		} `json:"toolCall"`
		Options []struct{ OptionID, Kind string } `json:"options"`
	}
	json.Unmarshal(asks[0].Params, &ask)
	if ask.SessionID != id || ask.ToolCall.ToolCallID == "" || len(ask.ToolCall.Content) == 0 ||
		ask.ToolCall.Content[0].Type != "diff" || ask.ToolCall.Content[0].Path != out || ask.ToolCall.Content[0].NewText != "written by darman\n" {
		t.Errorf("request_permission: %s", asks[0].Params)
	}
	// The client hears of the call before it is asked about it.
	_, askedAt := e.client.Await(0, "the permission request", func(n note) bool { return n.Method == "session/request_permission" })
	_, toldAt := e.client.Await(0, "the write's tool_call", func(n note) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), `"toolCallId":"`+ask.ToolCall.ToolCallID+`"`)
	})
	if toldAt > askedAt {
		t.Errorf("the permission request (message %d) came before the tool call it is about (message %d)", askedAt, toldAt)
	}
	kinds := map[string]bool{}
	for _, o := range ask.Options {
		kinds[o.Kind] = o.OptionID == o.Kind
	}
	for _, k := range []string{"allow_once", "allow_always", "reject_once", "reject_always"} {
		if !kinds[k] {
			t.Errorf("option %s missing: %s", k, asks[0].Params)
		}
	}

	if got := e.client.text(0); got != "Reading.Done." && got != "Reading.\n\nDone." && !strings.Contains(got, "Done.") {
		t.Errorf("agent text %q", got)
	}
	var sawWrite, sawCompleted bool
	for _, u := range e.client.updates(0, "tool_call") {
		if u["kind"] == "edit" && u["toolCallId"] == ask.ToolCall.ToolCallID {
			sawWrite = true
		}
	}
	for _, u := range e.client.updates(0, "tool_call_update") {
		if u["toolCallId"] == ask.ToolCall.ToolCallID && u["status"] == "completed" {
			content, _ := u["content"].([]any)
			for _, c := range content {
				if m, _ := c.(map[string]any); m["type"] == "diff" && m["path"] == out {
					sawCompleted = true
				}
			}
		}
	}
	if !sawWrite || !sawCompleted {
		t.Errorf("tool_call %v, completed with a diff %v:\n%s", sawWrite, sawCompleted, e.client.Dump())
	}
	// Locations are absolute paths.
	for _, u := range e.client.updates(0, "tool_call_update") {
		locs, _ := u["locations"].([]any)
		for _, l := range locs {
			if p := l.(map[string]any)["path"].(string); !filepath.IsAbs(p) {
				t.Errorf("location %q is not absolute", p)
			}
		}
	}
}

// TestBashRunsInTheClientsTerminal: a client that offers a terminal runs
// the command, and the tool call shows that terminal.
func TestBashRunsInTheClientsTerminal(t *testing.T) {
	var mu sync.Mutex
	var created map[string]any
	released := false
	e := start(t, options{
		caps: map[string]any{"terminal": true},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{ID: "call_bash", Name: "bash", Arguments: json.RawMessage(`{"command":"make test","description":"run the tests"}`)}}},
			{Text: "The tests pass."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			switch method {
			case "session/request_permission":
				return allowOnce(params), nil
			case "terminal/create":
				json.Unmarshal(params, &created)
				return map[string]string{"terminalId": "term-1"}, nil
			case "terminal/wait_for_exit":
				return map[string]any{"exitCode": 0}, nil
			case "terminal/output":
				return map[string]any{"output": "ok  all 12 tests\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 0}}, nil
			case "terminal/release":
				released = true
				return map[string]any{}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	if stop := e.prompt(id, "run the tests"); stop != "end_turn" {
		t.Fatalf("stopReason %q\n%s", stop, e.client.Dump())
	}
	mu.Lock()
	defer mu.Unlock()
	// The editor runs the line in the shell the bash tool runs it in, the
	// language its permission was checked in.
	shell, _, err := tool.Shell()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := created["args"].([]any)
	if created["command"] != shell || len(args) != 2 || args[0] != "-c" || args[1] != "make test" || created["cwd"] != e.root || created["sessionId"] != id {
		t.Errorf("terminal/create: %v, want %s -c", created, shell)
	}
	if !released {
		t.Error("the terminal was not released")
	}
	calls := e.model.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "ok  all 12 tests") || !strings.Contains(string(calls[1].Body), "Exit code 0") {
		t.Errorf("the terminal's output did not reach the model")
	}
	shown := false
	for _, u := range e.client.updates(0, "tool_call_update") {
		content, _ := u["content"].([]any)
		for _, c := range content {
			if m, _ := c.(map[string]any); u["toolCallId"] == "call_bash" && m["type"] == "terminal" && m["terminalId"] == "term-1" {
				shown = true
			}
		}
	}
	if !shown {
		t.Errorf("no tool_call_update showed terminal term-1:\n%s", e.client.Dump())
	}
	_, toldAt := e.client.Await(0, "the bash tool_call", func(n note) bool {
		var p struct{ Update map[string]any }
		json.Unmarshal(n.Params, &p)
		return n.Method == "session/update" && p.Update["sessionUpdate"] == "tool_call" && p.Update["toolCallId"] == "call_bash"
	})
	_, shownAt := e.client.Await(0, "the terminal in the call", func(n note) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), `"terminalId":"term-1"`)
	})
	if shownAt < toldAt {
		t.Errorf("the terminal (message %d) was shown before its tool call (message %d)", shownAt, toldAt)
	}
}

// TestCancelMidTurn cancels a turn whose model stalls mid-answer: the
// prompt answers "cancelled", and the session takes another turn.
func TestCancelMidTurn(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "stall", Steps: []llmtest.Step{{Text: "Thinking about it very slowly", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 4, Times: -1}}}}},
	}}})
	id := e.newSession()
	done := make(chan string, 1)
	go func() {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "stall please"}}}, &res)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- res.StopReason
	}()
	e.client.Await(0, "a message chunk", func(n note) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), "agent_message_chunk")
	})
	if err := e.client.Conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": id}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "cancelled" {
		t.Fatalf("stopReason %q", got)
	}
	// The session is free again: a second prompt is not refused as busy.
	var res json.RawMessage
	err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "and now?"}}}, &res)
	if err != nil && strings.Contains(err.Error(), "already running") {
		t.Errorf("the session is still busy: %v", err)
	}
}

// TestLoadReplaysHistory loads, on a new connection, a session a first
// connection ran a turn in: its history comes as session/update before
// the answer, and the session takes a new turn.
func TestLoadReplaysHistory(t *testing.T) {
	script := llmtest.Script{Steps: []llmtest.Step{
		{Text: "Looking.", ToolCalls: []llmtest.ToolCall{call("list", `{}`)}},
		{Text: "There is one file."},
	}}
	first := start(t, options{script: script, files: map[string]string{"a.go": "package a\n"}})
	id := first.newSession()
	if stop := first.prompt(id, "what is here?"); stop != "end_turn" {
		t.Fatal(stop)
	}
	first.stop()

	second := start(t, options{script: script, root: first.root, data: first.data})
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	second.client.MustCall("session/list", map[string]any{"cwd": first.root}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Cwd != first.root || list.Sessions[0].Title == "" {
		t.Errorf("session/list: %+v", list)
	}
	var loaded struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	second.client.MustCall("session/load", map[string]any{"sessionId": id, "cwd": first.root, "mcpServers": []any{}}, &loaded)
	user := second.client.updates(0, "user_message_chunk")
	if len(user) != 1 || !strings.Contains(toJSON(user[0]), "what is here?") {
		t.Errorf("user_message_chunk: %v", user)
	}
	if got := second.client.text(0); !strings.Contains(got, "Looking.") || !strings.Contains(got, "There is one file.") {
		t.Errorf("replayed text %q", got)
	}
	if calls := second.client.updates(0, "tool_call"); len(calls) != 1 || calls[0]["status"] != "completed" {
		t.Errorf("replayed tool calls: %v", calls)
	}
	if loaded.Modes.CurrentModeID != "default" {
		t.Errorf("modes: %+v", loaded)
	}
	var bad json.RawMessage
	err := second.client.Call("session/load", map[string]any{"sessionId": "ses_nope", "cwd": first.root, "mcpServers": []any{}}, &bad)
	if err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("loading an unknown session: %v", err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSessionMCPServersAreTheSessionsOwn: the tools of the MCP servers a
// client names in session/new are offered in that session's turns only,
// and stop when darman does.
func TestSessionMCPServersAreTheSessionsOwn(t *testing.T) {
	var mu sync.Mutex
	var bound []acp.MCPServer
	stopped := 0
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}}},
		bindMCP: func(ctx context.Context, root string, servers []acp.MCPServer) ([]tool.Tool, func() error, error) {
			mu.Lock()
			defer mu.Unlock()
			bound = append(bound, servers...)
			return []tool.Tool{echoTool{}}, func() error { mu.Lock(); stopped++; mu.Unlock(); return nil }, nil
		},
	})
	with := e.newSession(map[string]any{"name": "echo", "command": "echo-server", "args": []string{"--stdio"},
		"env": []map[string]string{{"name": "TOKEN", "value": "t0"}}})
	without := e.newSession()
	e.prompt(with, "first")
	e.prompt(without, "second")
	calls := e.model.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	if !strings.Contains(string(calls[0].Body), "echo_say") {
		t.Errorf("the session with the server was not offered its tool")
	}
	if strings.Contains(string(calls[1].Body), "echo_say") {
		t.Errorf("the session without the server was offered its tool")
	}
	mu.Lock()
	if len(bound) != 1 || bound[0].Name != "echo" || bound[0].Command != "echo-server" || bound[0].Env["TOKEN"] != "t0" {
		t.Errorf("bound %+v", bound)
	}
	mu.Unlock()
	e.stop()
	mu.Lock()
	defer mu.Unlock()
	if stopped != 1 {
		t.Errorf("the session's MCP servers were stopped %d times", stopped)
	}
}

type echoTool struct{}

func (echoTool) Info() tool.Info {
	return tool.Info{Name: "echo_say", Description: "says it back", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (echoTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	return tool.Result{Output: string(input)}, nil
}

// TestAcceptEditsLeavesTheUsersAskRulesToTheUser: accept_edits answers
// darman's own question about an edit, not the one the user's rule asks;
// that one reaches the client, whose answer decides.
func TestAcceptEditsLeavesTheUsersAskRulesToTheUser(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"notes.txt","content":"n\n"}`)}}, {Text: "written"},
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"secret.txt","content":"s\n"}`)}}, {Text: "refused"},
		}},
		rules: append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "secret*", Action: permission.Ask}),
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "session/request_permission" {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": string(permission.RejectOnce)}}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	var empty map[string]any
	e.client.MustCall("session/set_mode", map[string]any{"sessionId": id, "modeId": "accept_edits"}, &empty)
	e.prompt(id, "write the notes")
	if b, err := os.ReadFile(filepath.Join(e.root, "notes.txt")); err != nil || string(b) != "n\n" {
		t.Errorf("accept_edits did not answer darman's own question: notes.txt %q %v", b, err)
	}
	if asks := e.client.All("session/request_permission"); len(asks) != 0 {
		t.Fatalf("accept_edits asked about notes.txt: %d questions", len(asks))
	}
	e.prompt(id, "write the secret")
	if _, err := os.Stat(filepath.Join(e.root, "secret.txt")); err == nil {
		t.Error("accept_edits answered the user's own ask rule: secret.txt was written")
	}
	if asks := e.client.All("session/request_permission"); len(asks) != 1 {
		t.Errorf("the user's ask rule reached the client %d times, want 1", len(asks))
	}
}

// TestModesDecideOpenQuestions: accept_edits writes without asking,
// read_only neither asks nor writes; the model option changes the
// session's model.
func TestModesDecideOpenQuestions(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"a.txt","content":"a\n"}`)}}, {Text: "written"},
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"b.txt","content":"b\n"}`)}}, {Text: "refused"},
			{Text: "on another model"},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "session/request_permission" {
				return allowOnce(params), nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	var empty map[string]any
	e.client.MustCall("session/set_mode", map[string]any{"sessionId": id, "modeId": "accept_edits"}, &empty)
	e.prompt(id, "edit freely")
	if b, err := os.ReadFile(filepath.Join(e.root, "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("accept_edits: a.txt %q %v", b, err)
	}
	var set struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	e.client.MustCall("session/set_config_option", map[string]any{"sessionId": id, "configId": "mode", "value": "read_only"}, &set)
	e.prompt(id, "look only")
	if _, err := os.Stat(filepath.Join(e.root, "b.txt")); err == nil {
		t.Error("read_only: b.txt was written")
	}
	if asks := e.client.All("session/request_permission"); len(asks) != 0 {
		t.Errorf("modes asked %d questions", len(asks))
	}
	if calls := e.model.ModelCalls(); !strings.Contains(string(calls[len(calls)-1].Body), "read-only") {
		t.Errorf("the model was not told why the write was refused")
	}

	e.client.MustCall("session/set_config_option", map[string]any{"sessionId": id, "configId": "model", "value": "anthropic/claude-haiku-4-5"}, &set)
	got := map[string]string{}
	for _, o := range set.ConfigOptions {
		got[o.ID] = o.CurrentValue
	}
	if got["model"] != "anthropic/claude-haiku-4-5" || got["mode"] != "read_only" {
		t.Errorf("config options after set: %v", got)
	}
	e.prompt(id, "edit freely again")
	if calls := e.model.ModelCalls(); calls[len(calls)-1].Model != "claude-haiku-4-5" {
		t.Errorf("the next turn used %q", calls[len(calls)-1].Model)
	}
	for _, bad := range []map[string]any{
		{"sessionId": id, "configId": "model", "value": "nowhere/model"},
		{"sessionId": id, "configId": "mode", "value": "yolo"},
		{"sessionId": id, "configId": "temperature", "value": "hot"},
	} {
		if err := e.client.Call("session/set_config_option", bad, &set); err == nil {
			t.Errorf("set_config_option %v was accepted", bad)
		}
	}
	if err := e.client.Call("session/set_mode", map[string]any{"sessionId": id, "modeId": "yolo"}, &empty); err == nil {
		t.Error("set_mode yolo was accepted")
	}
}

// TestCancelKillsTheClientsTerminal: cancelling a turn whose command runs
// in the client's terminal kills and releases that terminal.
func TestCancelKillsTheClientsTerminal(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	killed := make(chan struct{})
	e := start(t, options{
		caps:   map[string]any{"terminal": true},
		script: llmtest.Script{Steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"sleep 1000"}`)}}, {Text: "never"}}},
		answer: func(method string, params json.RawMessage) (any, error) {
			mu.Lock()
			calls[method]++
			mu.Unlock()
			switch method {
			case "session/request_permission":
				return allowOnce(params), nil
			case "terminal/create":
				return map[string]string{"terminalId": "t-sleep"}, nil
			case "terminal/wait_for_exit":
				<-killed
				return map[string]any{"signal": "SIGKILL"}, nil
			case "terminal/kill":
				close(killed)
				return map[string]any{}, nil
			case "terminal/release":
				return map[string]any{}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	done := make(chan string, 1)
	go func() {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "sleep"}}}, &res)
		done <- res.StopReason
	}()
	e.client.Await(0, "terminal/wait_for_exit", func(n note) bool { return n.Method == "terminal/wait_for_exit" })
	e.client.Conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": id})
	if got := <-done; got != "cancelled" {
		t.Fatalf("stopReason %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["terminal/kill"] != 1 || calls["terminal/release"] != 1 {
		t.Errorf("terminal calls: %v", calls)
	}
}

// TestWorkspaceCommands: the workspace's .darman/command files are offered
// after session/new, and a prompt that starts with one runs it expanded.
func TestWorkspaceCommands(t *testing.T) {
	e := start(t, options{
		files:  map[string]string{".darman/command/review.md": "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS for bugs, carefully.\n"},
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "Reviewed."}}},
	})
	id := e.newSession()
	n, _ := e.client.Await(0, "available_commands_update", func(n note) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), "available_commands_update")
	})
	var p struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			AvailableCommands []struct {
				Name, Description string
				Input             *struct{ Hint string }
			} `json:"availableCommands"`
		} `json:"update"`
	}
	json.Unmarshal(n.Params, &p)
	var names []string
	review := false
	for _, c := range p.Update.AvailableCommands {
		names = append(names, c.Name)
		review = review || c.Name == "review" && c.Description == "Review a file" && c.Input != nil && c.Input.Hint == "<file>"
	}
	// The workspace's command, and darman's built-in ones.
	if p.SessionID != id || !review || strings.Join(names, " ") != "clear compact help model new review" {
		t.Errorf("available_commands_update: %s", n.Params)
	}
	e.prompt(id, "/review main.go")
	if body := string(e.model.ModelCalls()[0].Body); !strings.Contains(body, "Review main.go for bugs, carefully.") {
		t.Errorf("the command was not expanded:\n%.2000s", body)
	}
}

// TestReadOnlyRefusesWritesTheRulesAllow: in read_only mode a write that a
// rule allows without asking is still refused, by the workspace.
func TestReadOnlyRefusesWritesTheRulesAllow(t *testing.T) {
	e := start(t, options{
		rules: append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Allow}),
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"c.txt","content":"c\n"}`)}}, {Text: "refused"},
		}},
	})
	id := e.newSession()
	var empty map[string]any
	e.client.MustCall("session/set_mode", map[string]any{"sessionId": id, "modeId": "read_only"}, &empty)
	e.prompt(id, "write c")
	if _, err := os.Stat(filepath.Join(e.root, "c.txt")); err == nil {
		t.Error("c.txt was written in read_only mode")
	}
	calls := e.model.ModelCalls()
	if body := string(calls[len(calls)-1].Body); !strings.Contains(body, "read-only mode") {
		t.Errorf("the model was not told the session is read-only:\n%.2000s", body)
	}
}

// TestThoughtsPlanAndRefusal: reasoning streams as agent_thought_chunk,
// the todo tool's plan as plan, and a model's refusal ends the turn with
// stopReason refusal.
func TestThoughtsPlanAndRefusal(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "plan it", Steps: []llmtest.Step{
			{Reasoning: "Two steps will do.", ToolCalls: []llmtest.ToolCall{call("todo", `{"todos":[{"content":"read","status":"completed"},{"content":"fix","status":"in_progress","priority":"high"},{"content":"gold-plate","status":"cancelled"}]}`)}},
			{Text: "Planned."},
		}},
		{Match: "something bad", Steps: []llmtest.Step{{Text: "I can't help with that.", Stop: "refusal"}}},
	}}})
	id := e.newSession()
	if stop := e.prompt(id, "plan it"); stop != "end_turn" {
		t.Fatal(stop)
	}
	var thought strings.Builder
	for _, u := range e.client.updates(0, "agent_thought_chunk") {
		thought.WriteString(u["content"].(map[string]any)["text"].(string))
	}
	if thought.String() != "Two steps will do." {
		t.Errorf("thought %q", thought.String())
	}
	plans := e.client.updates(0, "plan")
	if len(plans) != 1 {
		t.Fatalf("plans: %v", plans)
	}
	want := `[{"content":"read","priority":"medium","status":"completed"},{"content":"fix","priority":"high","status":"in_progress"}]`
	if got := toJSON(plans[0]["entries"]); got != want {
		t.Errorf("plan entries\n got %s\nwant %s", got, want)
	}
	other := e.newSession()
	if stop := e.prompt(other, "something bad"); stop != "refusal" {
		t.Errorf("stopReason %q, want refusal", stop)
	}
}

// TestDismissedQuestionIsARejection: a permission question the client
// answers "cancelled" (the user closed it) rejects the call, and the turn
// goes on.
func TestDismissedQuestionIsARejection(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("write", `{"path":"d.txt","content":"d\n"}`)}}, {Text: "Not written, then."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "session/request_permission" {
				return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	id := e.newSession()
	if stop := e.prompt(id, "write d"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if _, err := os.Stat(filepath.Join(e.root, "d.txt")); err == nil {
		t.Error("d.txt was written after a dismissed question")
	}
	failed := false
	for _, u := range e.client.updates(0, "tool_call_update") {
		if u["status"] == "failed" {
			failed = true
		}
	}
	if !failed || len(e.client.All("session/request_permission")) != 1 {
		t.Errorf("the write did not fail after one question:\n%s", e.client.Dump())
	}
}

// TestAFailedStartIsTriedAgain: when the agent of a directory fails to
// start (a broken configuration), session/new says why, and the next
// session/new there starts it, without restarting darman.
func TestAFailedStartIsTriedAgain(t *testing.T) {
	e := start(t, options{failStarts: 1, script: llmtest.Script{Steps: []llmtest.Step{{Text: "up"}}}})
	var res json.RawMessage
	err := e.client.Call("session/new", map[string]any{"cwd": e.root, "mcpServers": []any{}}, &res)
	if err == nil || !strings.Contains(err.Error(), "is not a provider/model-id") {
		t.Fatalf("the failed start: %v", err)
	}
	id := e.newSession()
	if stop := e.prompt(id, "are you up?"); stop != "end_turn" {
		t.Errorf("stopReason %q", stop)
	}
}

// TestInitializedRunsOnceAfterTheAnswer: the hook darman acp gives its
// start-up memory back in runs once the client has its answer to
// initialize, and not again for a later request.
func TestInitializedRunsOnceAfterTheAnswer(t *testing.T) {
	var calls atomic.Int32
	ran := make(chan struct{}, 2)
	e := start(t, options{initialized: func() {
		calls.Add(1)
		ran <- struct{}{}
	}})
	select {
	case <-ran:
	case <-time.After(wait):
		t.Fatal("Initialized did not run after initialize was answered")
	}
	var auth map[string]any
	e.client.MustCall("authenticate", map[string]any{"methodId": "none"}, &auth)
	if n := calls.Load(); n != 1 {
		t.Errorf("Initialized ran %d times; want once", n)
	}
}
