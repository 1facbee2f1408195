package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
)

// applyAnswer is darman.turn.apply's result.
type applyAnswer struct {
	Applied, Unchanged, Denied bool
	Message, URI, TurnID       string
}

// loadTurns are darman.session.load's turns of the session.
func loadTurns(e *env, id string) []struct {
	TurnID string
	Files  bool
} {
	var load struct {
		Turns []struct {
			TurnID string
			Files  bool
		}
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": id}, &load)
	return load.Turns
}

// asking answers darman/requestPermission with optionID, remembers each
// question's params, and gives the editor's other requests to ed.
type asking struct {
	ed       *bufferEditor
	mu       sync.Mutex
	optionID string
	asked    []json.RawMessage
}

func (a *asking) answer(method string, params json.RawMessage) (any, error) {
	if method != "darman/requestPermission" {
		return a.ed.answer(method, params)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, params)
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": a.optionID}}, nil
}

func (a *asking) questions() []json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]json.RawMessage(nil), a.asked...)
}

// startApply is a server whose first turn answers with text only (a code
// block), with checkpoints, an editor that applies and saves edits, and
// questions answered with optionID.
func startApply(t *testing.T, rules []permission.Rule, optionID string, files map[string]string) (*env, *asking, turn) {
	ed := &bufferEditor{t: t, buffers: map[string]string{}}
	a := &asking{ed: ed, optionID: optionID}
	e := start(t, options{
		script:      llmtest.Script{Steps: []llmtest.Step{{Text: "Here it is:\n```go main.go\npackage main\n\nfunc main() {}\n```"}}},
		rules:       rules,
		optIns:      map[string]bool{"sessionUpdates": true, "requestPermission": true, "applyEditAndSave": true},
		answer:      a.answer,
		checkpoints: true,
		files:       files,
	})
	ed.env = e
	tr := e.prompt("write main")
	e.client.Await(0, "the end", isState("idle"))
	return e, a, tr
}

// A code block applied with darman.turn.apply after a turn that changed no
// file: the edit permission is asked with the diff, the file is written
// through the editor once allowed, and the turn's revert (by the turnId
// the apply answered) takes it back.
func TestApplyIsAskedAndRevertedWithTheTurn(t *testing.T) {
	e, a, tr := startApply(t, nil, "allow_once", map[string]string{"main.go": "package main\n"})
	want := "package main\n\nfunc main() {}\n"
	var res applyAnswer
	e.client.mustCommand("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri("main.go"), "text": want}, &res)
	if !res.Applied || res.Denied || !strings.HasPrefix(res.TurnID, "msg_") || res.URI != e.uri("main.go") {
		t.Fatalf("darman.turn.apply answered %+v", res)
	}
	if got := e.read("main.go"); got != want {
		t.Fatalf("main.go = %q after the apply, want %q", got, want)
	}
	qs := a.questions()
	if len(qs) != 1 {
		t.Fatalf("%d questions, want 1", len(qs))
	}
	var q struct {
		SessionID string
		ToolCall  struct {
			Permission string
			Subjects   []string
			Content    []struct{ Type, URI, OldText, NewText string }
		}
	}
	json.Unmarshal(qs[0], &q)
	if q.SessionID != tr.SessionID || q.ToolCall.Permission != "edit" || len(q.ToolCall.Content) != 1 ||
		q.ToolCall.Content[0].Type != "diff" || q.ToolCall.Content[0].OldText != "package main\n" || q.ToolCall.Content[0].NewText != want {
		t.Errorf("the question: %s", qs[0])
	}

	// A reloaded session says the turn changed files, though no tool call
	// of it did: the client offers its Revert.
	if turns := loadTurns(e, tr.SessionID); len(turns) != 1 || turns[0].TurnID != res.TurnID || !turns[0].Files {
		t.Errorf("darman.session.load's turns after the apply: %+v", turns)
	}

	var rep checkpoint.Report
	e.client.mustCommand("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": res.TurnID}, &rep)
	if !rep.Applied || len(rep.Conflicts) != 0 {
		t.Errorf("revert: %+v", rep)
	}
	if turns := loadTurns(e, tr.SessionID); len(turns) != 1 || turns[0].Files {
		t.Errorf("darman.session.load's turns after the revert: %+v", turns)
	}
	if got := e.read("main.go"); got != "package main\n" {
		t.Errorf("main.go = %q after the revert, want it back as it was", got)
	}
	// The last turn is reverted: another apply is refused before asking.
	err := e.client.command("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri("main.go"), "text": want}, nil)
	if err == nil || !strings.Contains(err.Error(), "is reverted") || len(a.questions()) != 1 || e.read("main.go") != "package main\n" {
		t.Errorf("an apply into the reverted turn: %v, %d questions, main.go = %q", err, len(a.questions()), e.read("main.go"))
	}
}

// A denied apply, one to a protected path the user rejects, and ones
// refused before anything is asked (outside the workspace, a secret, a
// session without a turn) leave every file as it was.
func TestApplyDeniedOrRefusedLeavesTheFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"main.go": "package main\n", ".vscode/tasks.json": "{}\n", ".env": "TOKEN=1\n"}

	t.Run("denied", func(t *testing.T) {
		e, a, tr := startApply(t, nil, "reject_once", files)
		var res applyAnswer
		e.client.mustCommand("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri("main.go"), "text": "changed\n"}, &res)
		if res.Applied || !res.Denied || res.Message == "" || len(a.questions()) != 1 {
			t.Errorf("answered %+v after %d questions", res, len(a.questions()))
		}
		if got := e.read("main.go"); got != "package main\n" {
			t.Errorf("main.go = %q", got)
		}
	})

	t.Run("protected path", func(t *testing.T) {
		// Edits are allowed by the rules; a protected path is still asked.
		e, a, tr := startApply(t, editRules(), "reject_once", files)
		var res applyAnswer
		e.client.mustCommand("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri(".vscode/tasks.json"), "text": `{"tasks": [{"command": "touch pwned"}]}`}, &res)
		qs := a.questions()
		if res.Applied || !res.Denied || len(qs) != 1 || !strings.Contains(string(qs[0]), `"protected_path"`) {
			t.Errorf("answered %+v after questions %s", res, qs)
		}
		if got := e.read(".vscode/tasks.json"); got != "{}\n" {
			t.Errorf(".vscode/tasks.json = %q", got)
		}
	})

	t.Run("refused", func(t *testing.T) {
		e, a, tr := startApply(t, editRules(), "allow_once", files)
		for _, tc := range []struct{ uri, why string }{
			{fileURI(outside), "outside the workspace"},
			{e.uri(".env"), "secret"},
		} {
			err := e.client.command("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": tc.uri, "text": "changed\n"}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("apply to %s: %v, want an error saying %q", tc.uri, err, tc.why)
			}
		}
		var fresh struct{ SessionID string }
		e.client.mustCommand("darman.session.new", nil, &fresh)
		err := e.client.command("darman.turn.apply", map[string]any{"sessionId": fresh.SessionID, "uri": e.uri("main.go"), "text": "changed\n"}, nil)
		if err == nil || !strings.Contains(err.Error(), "no turn yet") {
			t.Errorf("apply in a session without a turn: %v", err)
		}
		if n := len(a.questions()); n != 0 {
			t.Errorf("%d questions asked for refused applies", n)
		}
		if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
			t.Errorf("the file outside = %q", b)
		}
		if e.read(".env") != "TOKEN=1\n" || e.read("main.go") != "package main\n" {
			t.Errorf(".env = %q, main.go = %q", e.read(".env"), e.read("main.go"))
		}
	})
}

// An apply after a turn that edited a file is a step of that turn: the
// turn's revert, by darman.prompt's turnId, takes back both its own edit
// and the applied one.
func TestApplyAfterAnEditingTurnIsRevertedWithIt(t *testing.T) {
	ed := &bufferEditor{t: t, buffers: map[string]string{}}
	e := start(t, options{
		script:      llmtest.Script{Steps: []llmtest.Step{toolStep("write", map[string]string{"path": "a.txt", "content": "A\n"}), {Text: "wrote a.txt; main.go could be:\n```go main.go\npackage main // new\n```"}}},
		rules:       editRules(),
		optIns:      map[string]bool{"sessionUpdates": true, "requestPermission": true, "applyEditAndSave": true},
		answer:      ed.answer,
		checkpoints: true,
		files:       map[string]string{"main.go": "package main\n"},
	})
	ed.env = e
	tr := e.prompt("write a and main")
	e.client.Await(0, "the end", isState("idle"))
	var res applyAnswer
	e.client.mustCommand("darman.turn.apply", map[string]any{"sessionId": tr.SessionID, "uri": e.uri("main.go"), "text": "package main // new\n"}, &res)
	if !res.Applied || e.read("main.go") != "package main // new\n" || e.read("a.txt") != "A\n" {
		t.Fatalf("apply answered %+v; main.go = %q, a.txt = %q", res, e.read("main.go"), e.read("a.txt"))
	}
	var rep checkpoint.Report
	e.client.mustCommand("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": tr.TurnID}, &rep)
	if !rep.Applied || len(rep.Conflicts) != 0 || len(rep.Turns) != 1 {
		t.Errorf("revert: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(e.root, "a.txt")); !os.IsNotExist(err) || e.read("main.go") != "package main\n" {
		t.Errorf("after the revert a.txt is there (%v) or main.go = %q", err, e.read("main.go"))
	}
}
