package lsp_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/server/lsp/text"
)

// bufferEditor is an editor with buffers that opted into applyEditAndSave:
// workspace/applyEdit changes the open buffer (sending didChange, as an
// editor does) or the file, saves it, then answers. Typing in a buffer
// changes it without saving.
type bufferEditor struct {
	t       *testing.T
	env     *env
	mu      sync.Mutex
	buffers map[string]string // uri → text, for open documents
	version int
	edited  []string // the URIs of every applyEdit, in order
}

func (b *bufferEditor) open(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := b.env.read(rel)
	b.buffers[b.env.uri(rel)] = text
	b.env.open(rel, text)
}

// typeText makes the buffer hold text, unsaved.
func (b *bufferEditor) typeText(rel, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changed(b.env.uri(rel), text)
}

// changed sends didChange; b.mu is held.
func (b *bufferEditor) changed(uri, text string) {
	b.buffers[uri] = text
	b.version++
	b.env.client.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": b.version + 1},
		"contentChanges": []map[string]any{{"text": text}},
	})
}

func (b *bufferEditor) answer(method string, params json.RawMessage) (any, error) {
	if method != "workspace/applyEdit" {
		return defaultAnswer(method, params)
	}
	var p struct {
		Edit struct {
			Changes map[string][]struct {
				Range struct {
					Start, End struct{ Line, Character uint32 }
				} `json:"range"`
				NewText string `json:"newText"`
			} `json:"changes"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for uri, edits := range p.Edit.Changes {
		b.edited = append(b.edited, uri)
		u, _ := url.Parse(uri)
		old, open := b.buffers[uri]
		if !open {
			disk, _ := os.ReadFile(u.Path)
			old = string(disk)
		}
		c := text.New(old)
		for _, ed := range edits {
			rg := lspRange(ed.Range.Start.Line, ed.Range.Start.Character, ed.Range.End.Line, ed.Range.End.Character)
			var err error
			if c, err = c.Apply(&rg, ed.NewText); err != nil {
				return map[string]any{"applied": false, "failureReason": err.Error()}, nil
			}
		}
		if open {
			b.changed(uri, c.String())
		}
		if err := os.WriteFile(u.Path, []byte(c.String()), 0o644); err != nil {
			return nil, err
		}
	}
	return map[string]any{"applied": true}, nil
}

func (b *bufferEditor) edits() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.edited...)
}

// TestRevertATurnThroughTheEditor: a turn edits three files (two of them
// open in the editor) and makes one with bash; darman.turn.revert by the
// turnId previews the combined diff, then restores the files through
// workspace/applyEdit and removes the made one; darman.turn.redo puts the
// turn back, except the file whose buffer the user changed meanwhile,
// which is reported as a conflict and left as the user has it.
func TestRevertATurnThroughTheEditor(t *testing.T) {
	ed := &bufferEditor{t: t, buffers: map[string]string{}}
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{
				{Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)},
				{Name: "edit", Arguments: json.RawMessage(`{"path":"b.txt","oldString":"beta","newString":"BETA"}`)},
				{Name: "edit", Arguments: json.RawMessage(`{"path":"sub/c.txt","oldString":"gamma","newString":"GAMMA"}`)},
				{Name: "bash", Arguments: json.RawMessage(`{"command":"echo delta > d.txt","description":"make d"}`)},
			}},
			{Text: "done"},
		}},
		rules:       append(editRules(), permission.Rule{Permission: permission.Bash, Pattern: "*", Action: permission.Allow}),
		optIns:      map[string]bool{"sessionUpdates": true, "applyEditAndSave": true},
		answer:      ed.answer,
		checkpoints: true,
		files:       map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "sub/c.txt": "gamma\n"},
	})
	ed.env = e
	ed.open("a.txt")
	ed.open("b.txt")
	tr := e.prompt("change the files")
	e.client.Await(0, "the end", isState("idle"))
	for rel, want := range map[string]string{"a.txt": "ALPHA\n", "b.txt": "BETA\n", "sub/c.txt": "GAMMA\n", "d.txt": "delta\n"} {
		if got := e.read(rel); got != want {
			t.Fatalf("after the turn %s = %q, want %q", rel, got, want)
		}
	}
	turnEdits := len(ed.edits())

	var rep checkpoint.Report
	e.client.mustCommand("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": tr.TurnID, "preview": true}, &rep)
	if rep.Applied || len(rep.Files) != 4 || !strings.Contains(rep.Diff, "-ALPHA\n+alpha") || !strings.Contains(rep.Diff, "-delta") {
		t.Errorf("preview: %+v", rep)
	}
	if len(ed.edits()) != turnEdits || e.read("a.txt") != "ALPHA\n" {
		t.Fatal("the preview changed something")
	}

	rep = checkpoint.Report{}
	e.client.mustCommand("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": tr.TurnID}, &rep)
	if !rep.Applied || len(rep.Conflicts) != 0 || len(rep.Files) != 4 {
		t.Errorf("revert: %+v", rep)
	}
	for rel, want := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "sub/c.txt": "gamma\n"} {
		if got := e.read(rel); got != want {
			t.Errorf("after revert %s = %q, want %q", rel, got, want)
		}
	}
	if _, err := os.Stat(e.root + "/d.txt"); !os.IsNotExist(err) {
		t.Errorf("d.txt, made by the turn's command, is still there: %v", err)
	}
	reverted := ed.edits()[turnEdits:]
	for _, rel := range []string{"a.txt", "b.txt", "sub/c.txt"} {
		if !strings.Contains(strings.Join(reverted, " "), e.uri(rel)) {
			t.Errorf("%s was not restored through the editor (applyEdit for %v)", rel, reverted)
		}
	}
	ed.mu.Lock()
	if ed.buffers[e.uri("a.txt")] != "alpha\n" {
		t.Errorf("the buffer of a.txt holds %q", ed.buffers[e.uri("a.txt")])
	}
	ed.mu.Unlock()

	// The user types in b.txt without saving; redo leaves it alone.
	ed.typeText("b.txt", "beta, mine\n")
	before := len(ed.edits())
	rep = checkpoint.Report{}
	e.client.mustCommand("darman.turn.redo", map[string]any{"sessionId": tr.SessionID}, &rep)
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != "b.txt" || !strings.Contains(rep.Conflicts[0].Diff, "-beta, mine") ||
		!strings.Contains(rep.Conflicts[0].Diff, "+BETA") {
		t.Errorf("redo's conflicts: %+v", rep.Conflicts)
	}
	for rel, want := range map[string]string{"a.txt": "ALPHA\n", "b.txt": "beta\n", "sub/c.txt": "GAMMA\n", "d.txt": "delta\n"} {
		if got := e.read(rel); got != want {
			t.Errorf("after redo %s = %q, want %q", rel, got, want)
		}
	}
	for _, uri := range ed.edits()[before:] {
		if uri == e.uri("b.txt") {
			t.Error("redo sent an edit for b.txt, whose buffer the user changed")
		}
	}
	ed.mu.Lock()
	if ed.buffers[e.uri("b.txt")] != "beta, mine\n" {
		t.Errorf("the user's buffer of b.txt holds %q", ed.buffers[e.uri("b.txt")])
	}
	ed.mu.Unlock()

	// Nothing left to redo: a clear error, not a crash.
	if err := e.client.command("darman.turn.redo", map[string]any{"sessionId": tr.SessionID}, nil); err == nil || !strings.Contains(err.Error(), "no reverted turn") {
		t.Errorf("a second redo: %v", err)
	}
}

// TestLoadNamesTheTurns: darman.session.load says where each turn of the
// page begins and its turnId, so a client reloaded after the turn still
// offers its Revert: the id reverts that turn.
func TestLoadNamesTheTurns(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}}},
			{Text: "done"},
			{Text: "nothing to change"},
		}},
		rules:       editRules(),
		optIns:      map[string]bool{"sessionUpdates": true},
		checkpoints: true,
		files:       map[string]string{"a.txt": "alpha\n"},
	})
	tr := e.prompt("change a")
	e.client.Await(0, "the end", isState("idle"))
	from := e.client.Count()
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "and now?"}, &tr)
	e.turnUpdates(from, tr)
	var l struct {
		Updates []map[string]any `json:"updates"`
		Turns   []struct {
			TurnID string `json:"turnId"`
			Start  int    `json:"start"`
		} `json:"turns"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, &l)
	if len(l.Turns) != 2 {
		t.Fatalf("load named %d turns, want 2: %+v", len(l.Turns), l.Turns)
	}
	for i, want := range []string{"change a", "and now?"} {
		tn := l.Turns[i]
		if !strings.HasPrefix(tn.TurnID, "msg_") || tn.Start >= len(l.Updates) || l.Updates[tn.Start]["sessionUpdate"] != "user_message_chunk" ||
			l.Updates[tn.Start]["content"].(map[string]any)["text"] != want {
			t.Errorf("turn %d is %+v, not the user message %q", i, tn, want)
		}
	}
	var rep checkpoint.Report
	e.client.mustCommand("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": l.Turns[0].TurnID, "preview": true}, &rep)
	if len(rep.Files) != 1 || rep.Files[0].Path != "a.txt" {
		t.Errorf("the loaded turn's id does not revert its edit: %+v", rep)
	}
}

// TestNoTurnWhileARevertIsApplied: darman.prompt sent while
// darman.turn.revert is still writing the files (its workspace/applyEdit
// not answered yet) starts its turn only once the revert is done: the
// session is busy with the revert. The turn then edits the reverted file,
// and neither loses the other's work.
func TestNoTurnWhileARevertIsApplied(t *testing.T) {
	ed := &bufferEditor{t: t, buffers: map[string]string{}}
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	answer := func(method string, params json.RawMessage) (any, error) {
		if method == "workspace/applyEdit" && hold.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return ed.answer(method, params)
	}
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}}},
			{Text: "done"},
			{ToolCalls: []llmtest.ToolCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","oldString":"alpha","newString":"second"}`)}}},
			{Text: "done again"},
		}},
		rules:       editRules(),
		optIns:      map[string]bool{"sessionUpdates": true, "applyEditAndSave": true},
		answer:      answer,
		checkpoints: true,
		files:       map[string]string{"a.txt": "alpha\n"},
	})
	ed.env = e
	tr := e.prompt("change a")
	_, end := e.client.Await(0, "the first turn's end", isState("idle"))

	hold.Store(true)
	var rep checkpoint.Report
	reverted := make(chan error, 1)
	go func() {
		reverted <- e.client.command("darman.turn.revert", map[string]any{"sessionId": tr.SessionID, "turnId": tr.TurnID}, &rep)
	}()
	select {
	case <-held:
	case err := <-reverted:
		t.Fatalf("the revert ended (%v) without writing through the editor", err)
	case <-time.After(wait):
		t.Fatal("the revert never wrote through the editor")
	}
	var second turn
	prompted := make(chan error, 1)
	go func() {
		prompted <- e.client.command("darman.prompt", map[string]any{"sessionId": tr.SessionID, "prompt": "change a again"}, &second)
	}()
	// While the revert waits for the editor, the prompt must not start
	// its turn. A second is the window this test looks through: a prompt
	// answered in it ran beside the revert.
	select {
	case err := <-prompted:
		close(release)
		t.Fatalf("darman.prompt answered (turn %q, err %v) while the revert was writing the files", second.TurnID, err)
	case <-time.After(time.Second):
	}
	close(release)
	if err := <-reverted; err != nil || !rep.Applied {
		t.Fatalf("the revert: %v, %+v", err, rep)
	}
	select {
	case err := <-prompted:
		if err != nil {
			t.Fatalf("darman.prompt after the revert: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("darman.prompt never answered after the revert ended")
	}
	e.client.Await(end+1, "the second turn's end", isState("idle"))
	if got := e.read("a.txt"); got != "second\n" {
		t.Errorf("a.txt = %q, want the revert's alpha edited by the second turn (second)", got)
	}
}

// TestRevertAndForkRefusedWhileATurnRuns: while a turn waits for the
// user's answer to a permission question, darman.turn.revert and
// darman.session.fork are refused with the busy error and change nothing
// (the core's word, Sessions.Busy); darman.session.delete cancels the turn
// and deletes the session once it ended.
func TestRevertAndForkRefusedWhileATurnRuns(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}}},
			{Text: "done"},
			toolStep("bash", map[string]string{"command": "echo hi > b.txt", "description": "make b"}),
			{Text: "made"},
		}},
		rules:       append(editRules(), permission.Rule{Permission: permission.Bash, Pattern: "*", Action: permission.Ask}),
		optIns:      map[string]bool{"sessionUpdates": true, "requestPermission": true},
		checkpoints: true,
		files:       map[string]string{"a.txt": "alpha\n"},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method != "darman/requestPermission" {
				return defaultAnswer(method, params)
			}
			once.Do(func() { close(asked) })
			<-release
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
		},
	})
	defer close(release)
	first := e.prompt("change a")
	_, end := e.client.Await(0, "the first turn's end", isState("idle"))
	msgs, err := e.store.Messages(context.Background(), agent.ID(first.SessionID))
	if err != nil || len(msgs) == 0 {
		t.Fatalf("the session's messages: %v (%d)", err, len(msgs))
	}
	var second turn
	e.client.mustCommand("darman.prompt", map[string]any{"sessionId": first.SessionID, "prompt": "make b"}, &second)
	select {
	case <-asked:
	case <-time.After(wait):
		t.Fatal("the second turn never asked its question")
	}
	for _, c := range []struct {
		name string
		arg  map[string]any
	}{
		{"darman.turn.revert", map[string]any{"sessionId": first.SessionID, "turnId": first.TurnID}},
		{"darman.session.fork", map[string]any{"sessionId": first.SessionID, "messageId": string(msgs[0].Message.ID), "files": true}},
	} {
		if err := e.client.command(c.name, c.arg, nil); err == nil || !strings.Contains(err.Error(), "running a turn") {
			t.Errorf("%s while a turn runs: %v, want the busy error", c.name, err)
		}
	}
	if got := e.read("a.txt"); got != "ALPHA\n" {
		t.Errorf("a.txt = %q after the refused revert and fork, want the first turn's ALPHA", got)
	}
	if list, _ := e.store.ListSessions(context.Background(), store.ListOptions{}); len(list) != 1 {
		t.Errorf("%d sessions after the refused fork, want 1", len(list))
	}
	e.client.mustCommand("darman.session.delete", map[string]any{"sessionId": first.SessionID}, nil)
	e.client.Await(end+1, "the second turn's end", isState("cancelled"))
	if _, err := e.store.Session(context.Background(), agent.ID(first.SessionID)); err == nil {
		t.Error("the session is still stored after darman.session.delete")
	}
}
