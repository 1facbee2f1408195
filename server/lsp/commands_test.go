package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/server/lsp"
)

// initResult is the part of InitializeResult that carries darman's own
// capabilities.
type initResult struct {
	Capabilities struct {
		Experimental struct {
			Darman struct {
				ProtocolVersion int               `json:"protocolVersion"`
				Models          []lsp.ModelChoice `json:"models"`
				Model           *string           `json:"model"`
				Agents          []json.RawMessage `json:"agents"`
			} `json:"darman"`
		} `json:"experimental"`
	} `json:"capabilities"`
}

// The configured models are in initialize's answer, computed before the
// agent starts from the workspace and the editor's settings.
func TestInitializeOffersModels(t *testing.T) {
	var got lsp.Setup
	e := start(t, options{noInitialize: true, serverOpts: lsp.Options{
		Models: func(_ context.Context, setup lsp.Setup) (lsp.ModelChoices, error) {
			got = setup
			return lsp.ModelChoices{Default: "anthropic/claude-sonnet-4-6", Models: []lsp.ModelChoice{
				{ID: "anthropic/claude-sonnet-4-6", Name: "Claude Sonnet 4.6", ContextWindow: 200000},
				{ID: "ollama/qwen3:8b"},
			}}, nil
		},
	}})
	var raw json.RawMessage
	e.client.MustCall("initialize", map[string]any{
		"rootUri":               fileURI(e.root),
		"capabilities":          map[string]any{},
		"initializationOptions": map[string]any{"darman": map[string]any{"model": "anthropic/claude-sonnet-4-6"}},
	}, &raw)
	var res initResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	d := res.Capabilities.Experimental.Darman
	want := []lsp.ModelChoice{{ID: "anthropic/claude-sonnet-4-6", Name: "Claude Sonnet 4.6", ContextWindow: 200000}, {ID: "ollama/qwen3:8b"}}
	if !slices.Equal(d.Models, want) || d.Model == nil || *d.Model != "anthropic/claude-sonnet-4-6" || len(d.Agents) != 2 {
		t.Errorf("experimental.darman = %s", raw)
	}
	// Optional fields are left out, not sent empty.
	if !strings.Contains(string(raw), `{"id":"ollama/qwen3:8b"}`) {
		t.Errorf("a model without name and window is sent as %s", raw)
	}
	if got.Root != e.root || string(got.Settings) != `{"model":"anthropic/claude-sonnet-4-6"}` || got.Workspace != nil {
		t.Errorf("Models was given root %q, settings %s, workspace %v", got.Root, got.Settings, got.Workspace)
	}
}

// Without models (no Options.Models, or one that fails) the lists are
// empty and the model "", and the server works on.
func TestInitializeWithoutModels(t *testing.T) {
	for name, models := range map[string]func(context.Context, lsp.Setup) (lsp.ModelChoices, error){
		"none": nil,
		"failing": func(context.Context, lsp.Setup) (lsp.ModelChoices, error) {
			return lsp.ModelChoices{}, errors.New("the config file does not parse")
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := start(t, options{noInitialize: true, serverOpts: lsp.Options{Models: models}})
			var raw json.RawMessage
			e.client.MustCall("initialize", map[string]any{"rootUri": fileURI(e.root), "capabilities": map[string]any{}}, &raw)
			if !strings.Contains(string(raw), `"agents":[{"name":"build"`) || !strings.Contains(string(raw), `"model":""`) || !strings.Contains(string(raw), `"models":[]`) {
				t.Errorf("initialize answered %s, want the built-in agents, no models and model \"\"", raw)
			}
			e.client.Notify("initialized", map[string]any{})
			e.client.mustCommand("darman.session.list", nil, nil)
		})
	}
}

func TestSessionRename(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "done"}}}, optIns: map[string]bool{"sessionUpdates": true}})
	tr := e.prompt("refactor the parser")
	e.client.Await(0, "the end", isState("idle"))
	e.client.mustCommand("darman.session.rename", map[string]any{"sessionId": tr.SessionID, "title": "Parser refactor"}, nil)
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	e.client.mustCommand("darman.session.list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != tr.SessionID || list.Sessions[0].Title != "Parser refactor" {
		t.Errorf("after rename the list is %+v", list.Sessions)
	}
	var loaded struct {
		Title string `json:"title"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, &loaded)
	if loaded.Title != "Parser refactor" {
		t.Errorf("darman.session.load title %q", loaded.Title)
	}

	for _, c := range []struct {
		arg  any
		code int64
		want string
	}{
		{map[string]any{"title": "x"}, jsonrpc2.CodeInvalidParams, "sessionId is required"},
		{map[string]any{"sessionId": "nope", "title": "x"}, jsonrpc2.CodeInvalidParams, "sessionId"},
		{map[string]any{"sessionId": tr.SessionID, "title": "x", "color": "red"}, jsonrpc2.CodeInvalidParams, "color"},
		{map[string]any{"sessionId": tr.SessionID, "title": "  "}, -32803, "title is empty"},
	} {
		err := e.client.command("darman.session.rename", c.arg, nil)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != c.code || !strings.Contains(je.Message, c.want) {
			t.Errorf("darman.session.rename %v: %v, want code %d saying %q", c.arg, err, c.code, c.want)
		}
	}
}

func TestCommandList(t *testing.T) {
	e := start(t, options{files: map[string]string{
		".darman/command/review.md":     "---\ndescription: Review the change\nargument-hint: <file>\n---\nReview $ARGUMENTS",
		".darman/command/git/commit.md": "Write a commit message.",
		".claude/commands/plain.md":     "Do the plain thing.",
	}})
	var res struct {
		Commands []map[string]string `json:"commands"`
	}
	e.client.mustCommand("darman.command.list", nil, &res)
	// The workspace's command files and darman's built-in commands, by
	// name.
	var names []string
	for _, c := range res.Commands {
		names = append(names, c["name"])
	}
	review := map[string]string{"name": "review", "description": "Review the change", "argumentHint": "<file>"}
	if want := "clear compact git:commit help model new plain review"; strings.Join(names, " ") != want || !maps.Equal(res.Commands[len(names)-1], review) {
		t.Errorf("darman.command.list = %v, want %s with %v", res.Commands, want, review)
	}
	var je *jsonrpc2.Error
	if err := e.client.command("darman.command.list", map[string]any{"all": true}, nil); !errors.As(err, &je) || je.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("darman.command.list with an unknown field: %v, want InvalidParams", err)
	}

	// A command written since the agent started is listed, and from then
	// on offered as a code action.
	e.write(".darman/command/late.md", "---\ndescription: Added later\n---\nLate.")
	res.Commands = nil
	e.client.mustCommand("darman.command.list", nil, &res)
	if len(res.Commands) != 9 || !slices.ContainsFunc(res.Commands, func(c map[string]string) bool { return c["name"] == "late" }) {
		t.Errorf("after adding late.md: %v", res.Commands)
	}
	e.write("a.go", "package a\n")
	e.open("a.go", "package a\n")
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", codeActionParams(e.uri("a.go"), 0, 0, 0, 0), &actions)
	if findAction(actions, "darman: /late") == nil {
		t.Errorf("no code action for the new command: %v", titles(actions))
	}
}

// A command template with !`cmd` answers at once; the command's bash
// permission is asked inside the turn (with its turnId), and the model
// gets the expansion. A refusal fails the turn, saying why.
func TestCommandWithShell(t *testing.T) {
	files := map[string]string{".darman/command/status.md": "Status: !`touch made-by-bash && echo fine` for $ARGUMENTS"}
	for _, tc := range []struct {
		optionID string
		made     bool
	}{{"allow_once", true}, {"reject_once", false}} {
		t.Run(tc.optionID, func(t *testing.T) {
			returned := make(chan struct{})
			var asked json.RawMessage
			e := start(t, options{
				files:  files,
				script: llmtest.Script{Steps: []llmtest.Step{{Text: "noted"}}},
				optIns: map[string]bool{"sessionUpdates": true, "requestPermission": true},
				answer: func(method string, params json.RawMessage) (any, error) {
					if method != "darman/requestPermission" {
						return defaultAnswer(method, params)
					}
					// The question waits for the command's answer: a
					// command that waited for the question would hang.
					<-returned
					asked = params
					return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": tc.optionID}}, nil
				},
			})
			var tr turn
			e.client.mustCommand("darman.command.run", map[string]any{"name": "status", "arguments": "the parser"}, &tr)
			close(returned)
			if tr.SessionID == "" || tr.TurnID == "" {
				t.Fatalf("darman.command.run answered %+v", tr)
			}
			end := isState("idle")
			if !tc.made {
				end = isState("failed")
			}
			last, _ := e.client.Await(0, "the end of the turn", end)
			first, _ := e.client.Await(0, "the turn's first update", isMethod("darman/sessionUpdate"))
			if u := updateOf(t, first); u.TurnID != tr.TurnID || u.Update["state"] != "running" {
				t.Errorf("the turn's first update is %s, want running with the turn's id", first.Params)
			}
			var p struct{ TurnID, SessionID string }
			json.Unmarshal(asked, &p)
			if p.TurnID != tr.TurnID || p.SessionID != tr.SessionID {
				t.Errorf("the command's permission was asked as %s, want the turn's ids", asked)
			}
			if e.made() != tc.made {
				t.Errorf("the command ran: %v, want %v", e.made(), tc.made)
			}
			if tc.made {
				if !e.modelSaw(0, "Status: fine for the parser") {
					t.Errorf("the model did not get the expansion: %s", e.model.ModelCalls()[0].Body)
				}
				return
			}
			if u := updateOf(t, last); u.TurnID != tr.TurnID || !strings.Contains(fmt.Sprint(u.Update["error"]), "command /status") {
				t.Errorf("the failure is %s, want the command named", last.Params)
			}
			if len(e.model.ModelCalls()) != 0 {
				t.Error("the model was called after the command was refused")
			}
		})
	}
}
