package acp_test

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
)

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
		answer: func(method string, params json.RawMessage) (any, error) {
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
				mu.Lock()
				writes = append(writes, p.Path+"="+p.Content)
				mu.Unlock()
				return map[string]any{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
			}
			return defaultAnswer(method, params)
		},
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
