package acp_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
)

// fsAnswer answers the client's fs/read_text_file and fs/write_text_file
// from the disk, telling writing of each write before it is done, and the
// rest as defaultAnswer.
func fsAnswer(writing func(path, content string)) func(string, json.RawMessage) (any, error) {
	return func(method string, params json.RawMessage) (any, error) {
		var p struct{ Path, Content string }
		json.Unmarshal(params, &p)
		switch method {
		case "fs/read_text_file":
			b, err := os.ReadFile(p.Path)
			if err != nil {
				return nil, err
			}
			return map[string]string{"content": string(b)}, nil
		case "fs/write_text_file":
			writing(p.Path, p.Content)
			return map[string]any{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
		}
		return defaultAnswer(method, params)
	}
}

// TestRevertSlashCommand: /revert and /redo, offered in
// available_commands_update, take a turn's changes back and forth through
// the client's fs/write_text_file, without calling the model.
func TestRevertSlashCommand(t *testing.T) {
	var mu sync.Mutex
	var writes []string
	e := start(t, options{
		caps:        fsCaps,
		checkpoints: true,
		rules:       append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Allow}),
		files:       map[string]string{"a.txt": "alpha\n"},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}},
			{Text: "Done."},
		}},
		answer: fsAnswer(func(path, content string) {
			mu.Lock()
			writes = append(writes, path+"="+content)
			mu.Unlock()
		}),
	})
	id := e.newSession()
	e.client.Await(0, "the commands", func(n note) bool { return strings.Contains(string(n.Params), `"name":"revert"`) })
	if stop := e.prompt(id, "shout"); stop != "end_turn" || e.read("a.txt") != "ALPHA\n" {
		t.Fatalf("the turn: %q, a.txt = %q", stop, e.read("a.txt"))
	}
	from := e.client.Count()
	e.prompt(id, "/revert --preview")
	if got := e.client.text(from); !strings.Contains(got, "would revert turn") || !strings.Contains(got, "+alpha") || e.read("a.txt") != "ALPHA\n" {
		t.Errorf("/revert --preview said %q; a.txt = %q", got, e.read("a.txt"))
	}
	from = e.client.Count()
	if stop := e.prompt(id, "/revert"); stop != "end_turn" || !strings.Contains(e.client.text(from), "reverted turn") {
		t.Errorf("/revert: %q, %q", stop, e.client.text(from))
	}
	if e.read("a.txt") != "alpha\n" {
		t.Errorf("after /revert a.txt = %q", e.read("a.txt"))
	}
	mu.Lock()
	if last := writes[len(writes)-1]; !strings.HasSuffix(last, "a.txt=alpha\n") {
		t.Errorf("the revert was not written through the client: %v", writes)
	}
	mu.Unlock()
	e.prompt(id, "/redo")
	if e.read("a.txt") != "ALPHA\n" {
		t.Errorf("after /redo a.txt = %q", e.read("a.txt"))
	}
	from = e.client.Count()
	e.prompt(id, "/redo")
	if got := e.client.text(from); !strings.Contains(got, "no reverted turn") {
		t.Errorf("a second /redo said %q", got)
	}
	if n := len(e.model.ModelCalls()); n != 2 {
		t.Errorf("the slash commands called the model: %d calls", n)
	}
}

func (e *env) read(rel string) string {
	b, err := os.ReadFile(e.root + "/" + rel)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestNoTurnWhileARevertIsApplied: while /revert writes the files back
// through the client, a prompt of the session does not start its turn
// (the model is not called); once the revert is done, the turn runs on
// the reverted files.
func TestNoTurnWhileARevertIsApplied(t *testing.T) {
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	e := start(t, options{
		caps:        fsCaps,
		checkpoints: true,
		rules:       append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Allow}),
		files:       map[string]string{"a.txt": "alpha\n"},
		script: llmtest.Script{Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`)}},
			{Text: "Done."},
			{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"a.txt","oldString":"alpha","newString":"second"}`)}},
			{Text: "Done again."},
		}},
		answer: fsAnswer(func(string, string) {
			if hold.CompareAndSwap(true, false) {
				close(held)
				<-release
			}
		}),
	})
	id := e.newSession()
	if stop := e.prompt(id, "shout"); stop != "end_turn" || e.read("a.txt") != "ALPHA\n" {
		t.Fatalf("the first turn: %q, a.txt = %q", stop, e.read("a.txt"))
	}
	prompt := func(text string, done chan<- error) {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": text}}}, &res)
		if err == nil && res.StopReason != "end_turn" {
			err = errors.New("stopped: " + res.StopReason)
		}
		done <- err
	}
	hold.Store(true)
	reverted, prompted := make(chan error, 1), make(chan error, 1)
	go prompt("/revert", reverted)
	select {
	case <-held:
	case err := <-reverted:
		t.Fatalf("/revert ended (%v) without writing through the client", err)
	case <-time.After(wait):
		t.Fatal("/revert never wrote through the client")
	}
	calls := len(e.model.ModelCalls())
	go prompt("shout again", prompted)
	// A second is the window this test looks through: a prompt answered,
	// or a model called, in it ran beside the revert.
	select {
	case err := <-prompted:
		close(release)
		t.Fatalf("session/prompt answered (%v) while /revert was writing the files", err)
	case <-time.After(time.Second):
	}
	if n := len(e.model.ModelCalls()); n != calls {
		t.Errorf("the model was called %d times while /revert was writing the files", n-calls)
	}
	close(release)
	if err := <-reverted; err != nil {
		t.Fatalf("/revert: %v", err)
	}
	if err := <-prompted; err != nil {
		t.Fatalf("the prompt after /revert: %v", err)
	}
	if got := e.read("a.txt"); got != "second\n" {
		t.Errorf("a.txt = %q, want the revert's alpha edited by the second turn (second)", got)
	}
}
