package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// allowEverything is a PreToolUse hook in Claude Code's documented JSON
// shape that allows every call.
const allowEverything = `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command",
	"command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"the hook allows it all\"}}'"}]}]}}`

// careful is an agent file whose permission key asks about markers.
const careful = `---
description: Asks before making markers
mode: primary
permission:
  bash:
    "touch marker*": ask
---
Make what is asked.
`

// A PreToolUse hook's allow answers what darman's defaults would ask,
// never what the user's own ask rule asks (the configuration's, or an
// agent file's permission), as in Claude Code, where a hook's allow does
// not override ask rules. In darman run without a terminal, such a call is
// refused: the marker is not made, and both the model and the user read
// which rule asked. A call one of whose commands the user's rule asks is
// refused whole, although the hook would have answered the other command.
func TestRunHookAllowLeavesTheUsersAskRulesToTheUser(t *testing.T) {
	askMarkers := `"permission": {"bash": {"touch marker*": "ask"}}`
	cases := []struct {
		name    string
		config  string   // darman.json keys; "" for none
		args    []string // darman run's flags
		command string
		made    []string // the files the command makes when it runs
		ran     bool
		model   []string // what the model reads in the call's result
		user    []string // what darman run tells the user
	}{
		{name: "no ask rule: the hook answers the defaults", command: "touch marker", made: []string{"marker"}, ran: true,
			user: []string{"A PreToolUse hook allowed bash", "the hook allows it all"}},
		{name: "the configuration's ask rule", config: askMarkers, command: "touch marker", made: []string{"marker"},
			model: []string{`the user's own rule bash \"touch marker*\" ask asks for it`, "no one can be asked in this non-interactive session"},
			user:  []string{`your rule bash "touch marker*" ask asks you: a hook's allow does not answer your own ask rules`, `--allow "bash:touch marker"`}},
		{name: "one command of two", config: askMarkers, command: "mkdir made && touch marker", made: []string{"made", "marker"},
			model: []string{`the user's own rule bash \"touch marker*\" ask asks for it`},
			user:  []string{`your rule bash "touch marker*" ask asks you`, `--allow "bash:mkdir made"`, `--allow "bash:touch marker"`}},
		{name: "an agent file's ask", args: []string{"--agent", "careful"}, command: "touch marker", made: []string{"marker"},
			model: []string{`the user's own rule bash \"touch marker*\" ask asks for it`},
			user:  []string{`your rule bash "touch marker*" ask asks you`, `not one in an agent file, which must be changed there`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			args, _ := json.Marshal(map[string]string{"command": c.command, "description": "make the marker"})
			srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
				{ToolCalls: []llmtest.ToolCall{call("bash", string(args))}},
				{Text: "Done."},
			}})
			if c.config != "" {
				e.configure(c.config)
			}
			e.write(".claude/settings.json", allowEverything)
			e.write(".darman/agent/careful.md", careful)
			runOneCall(t, e, srv, c.args, runOutcome{made: c.made, ran: c.ran, model: c.model, user: c.user})
		})
	}
}

// runOutcome is what a darman run turn of one tool call left.
type runOutcome struct {
	made  []string // files the call makes when it runs
	ran   bool
	model []string // what the model reads in the call's result
	user  []string // what darman run tells the user
}

// runOneCall runs a darman run turn whose model makes one tool call and
// then answers, with args as its flags, and checks what it left.
func runOneCall(t *testing.T, e *env, srv *llmtest.Server, args []string, want runOutcome) {
	t.Helper()
	out, errs, code := e.run(append(append([]string{"run"}, args...), "make a marker")...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, f := range want.made {
		_, err := os.Stat(filepath.Join(e.workspace, f))
		if ran := err == nil; ran != want.ran {
			t.Errorf("%s made: %v, want %v\nstderr: %s", f, ran, want.ran, errs)
		}
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls\nstderr: %s", len(calls), errs)
	}
	for _, w := range want.model {
		if !strings.Contains(string(calls[1].Body), w) {
			t.Errorf("the model does not read %q:\n%s", w, calls[1].Body)
		}
	}
	for _, w := range want.user {
		if !strings.Contains(errs, w) {
			t.Errorf("darman run does not tell the user %q:\n%s", w, errs)
		}
	}
}

// Through darman lsp, the question of the user's own ask rule reaches the
// editor although a PreToolUse hook allowed the call, whether the rule is
// the configuration's or the agent's the prompt names, and the user's
// answer decides: allowed, the marker is made; rejected, it is not. With
// no such rule the hook answers and the editor is not asked.
func TestLSPHookAllowLeavesTheUsersAskRulesToTheUser(t *testing.T) {
	cases := []struct {
		name   string
		config string // darman.json keys; "" for none
		agent  string // the prompt's agent
		answer string // the editor's answer, "" when it must not be asked
		made   bool
	}{
		{name: "no ask rule", made: true},
		{name: "the configuration's ask rule", config: `"permission": {"bash": {"touch marker*": "ask"}}`, answer: "allow_once", made: true},
		{name: "an agent file's ask", agent: "careful", answer: "reject_once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
				{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"touch marker","description":"make the marker"}`)}},
				{Text: "Done."},
			}})
			if c.config != "" {
				e.configure(c.config)
			}
			e.write(".claude/settings.json", allowEverything)
			e.write(".darman/agent/careful.md", careful)
			answer := func(method string, _ json.RawMessage) (any, error) {
				if method == "darman/requestPermission" {
					return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": c.answer}}, nil
				}
				return nil, nil
			}
			p := startPeer(t, e, jsonrpc2.VSCodeObjectCodec{}, answer, "lsp")
			p.call("initialize", map[string]any{"processId": nil,
				"capabilities":     map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true, "requestPermission": true}}},
				"workspaceFolders": []map[string]string{{"uri": "file://" + e.workspace, "name": "project"}}}, nil)
			p.conn.Notify(context.Background(), "initialized", map[string]any{})

			from := p.count()
			var tr struct{ SessionID, TurnID string }
			p.call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
				"arguments": []any{map[string]any{"prompt": "make a marker", "agent": c.agent}}}, &tr)
			end := p.await(from, "the turn's end", func(n jsonrpc2.Request) bool {
				return n.Method == "darman/sessionUpdate" && gjson.Get(params(n), "turnId").String() == tr.TurnID &&
					gjson.Get(params(n), "update.sessionUpdate").String() == "state_update" &&
					strings.Contains("idle cancelled failed", gjson.Get(params(n), "update.state").String())
			})
			asked := p.since(from, "darman/requestPermission")
			if (len(asked) > 0) != (c.answer != "") {
				t.Fatalf("the editor was asked %d times; want asked: %v", len(asked), c.answer != "")
			}
			if c.answer != "" {
				if q := params(asked[0]); gjson.Get(q, "toolCall.permission").String() != "bash" || !strings.Contains(q, "touch marker") {
					t.Errorf("the question is %s, want bash touch marker", q)
				}
				var told bool
				for _, n := range p.since(from, "window/showMessage") {
					told = told || strings.Contains(params(n), `your rule bash \"touch marker*\" ask asks you`)
				}
				if !told {
					t.Error("the user is not told why the hook's allow did not answer")
				}
			}
			if _, err := os.Stat(filepath.Join(e.workspace, "marker")); (err == nil) != c.made {
				t.Errorf("marker made: %v, want %v (the turn ended at message %d)", err == nil, c.made, end)
			}
		})
	}
}
