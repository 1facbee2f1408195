package session_test

import (
	"context"
	"encoding/json"
	"github.com/darman-dev/darman/agent/session"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/tool"
)

func TestToolOutputCarriesDirectoryInstructionsOnce(t *testing.T) {
	root := t.TempDir()
	for path, content := range map[string]string{
		"AGENTS.md":          "Root rules, already in the system prompt.",
		"sub/AGENTS.md":      "Use tabs in sub.",
		"sub/deep/CLAUDE.md": "Deep rules.",
		"sub/deep/x.go":      "package deep\n",
		"sub/y.go":           "package sub\n",
		"other/z.go":         "package other\n",
		"notes/AGENTS.md":    "Notes are in English.",
		"notes/todo.txt":     "nothing\n",
		"sub/deep/more/m.go": "package more\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id, path string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "read", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}
	}
	// The probe reports no locations: its input's path is what it touched.
	p := &probe{name: "probe", readOnly: true}
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{read("deep", "sub/deep/x.go")}},
		{ToolCalls: []llmtest.ToolCall{read("sub", "sub/y.go"), read("other", "other/z.go"), read("more", "sub/deep/more/m.go"),
			{ID: "notes", Name: "probe", Arguments: json.RawMessage(`{"path":"notes/todo.txt"}`)}}},
		{Text: "done"},
	}}, root: root, tools: append(tool.Builtins(tool.Options{}), p)})

	if msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("look around")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", msg, err)
	}
	outputs := storedOutputs(t, f)
	deep := outputs["deep"]
	i, j := strings.Index(deep, "Instructions from sub/AGENTS.md:\n\nUse tabs in sub."), strings.Index(deep, "Instructions from sub/deep/CLAUDE.md:\n\nDeep rules.")
	if !strings.Contains(deep, "package deep") || i < 0 || j < i {
		t.Errorf("the first read in sub/deep does not end with sub's then sub/deep's instructions:\n%s", deep)
	}
	if strings.Contains(deep, "Root rules") {
		t.Error("the root's AGENTS.md, already in the system prompt, was added again")
	}
	for _, id := range []string{"sub", "other", "more"} {
		if strings.Contains(outputs[id], "Instructions from") {
			t.Errorf("%s: directories already seen, or without instructions, added some:\n%s", id, outputs[id])
		}
	}
	if !strings.Contains(outputs["notes"], "Instructions from notes/AGENTS.md:\n\nNotes are in English.") {
		t.Errorf("the path in a call's input did not bring its directory's instructions:\n%s", outputs["notes"])
	}
	// The model was given each file once.
	calls := f.srv.ModelCalls()
	last := string(calls[len(calls)-1].Body)
	for _, text := range []string{"Use tabs in sub.", "Deep rules.", "Notes are in English."} {
		if n := strings.Count(last, text); n != 1 {
			t.Errorf("the last request holds %q %d times", text, n)
		}
	}
}
