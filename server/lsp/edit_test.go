package lsp_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/server/lsp/text"
)

// editRules let the agent write files without asking.
func editRules() []permission.Rule {
	return append(permission.Defaults(), permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Allow})
}

// writeScript reads a file, as the write tool wants, then writes it.
func writeScript(path, content string) llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": path}),
		toolStep("write", map[string]string{"path": path, "content": content}),
		{Text: "written"},
	}}
}

// Without applyEditAndSave, a file whose buffer is clean is written to the
// disk, atomically, and the editor is sent no applyEdit.
func TestEditWritesDiskWhenBufferIsClean(t *testing.T) {
	e := start(t, options{
		script: writeScript("main.go", "package main // by darman\n"),
		rules:  editRules(),
		optIns: map[string]bool{"sessionUpdates": true},
	})
	path := e.write("main.go", "package main\n")
	e.open("main.go", "package main\n")
	e.prompt("rewrite main.go")
	e.client.Await(0, "the end", isState("idle"))
	if got := e.read("main.go"); got != "package main // by darman\n" {
		t.Errorf("disk holds %q", got)
	}
	if len(e.client.All("workspace/applyEdit")) != 0 {
		t.Error("applyEdit sent to a client that did not opt into applyEditAndSave")
	}
	if !e.modelSaw(2, "Wrote main.go") {
		t.Errorf("the write failed: %s", e.model.ModelCalls()[2].Body)
	}
	_ = path
}

// A buffer with unsaved changes is never written over: the tool tells the
// model, and the disk keeps its content.
func TestEditRefusesDirtyBuffer(t *testing.T) {
	e := start(t, options{
		script: writeScript("main.go", "package main // by darman\n"),
		rules:  editRules(),
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.write("main.go", "package main\n")
	e.open("main.go", "package main // the user's unsaved work\n")
	e.prompt("rewrite main.go")
	e.client.Await(0, "the end", isState("idle"))
	if got := e.read("main.go"); got != "package main\n" {
		t.Errorf("the disk was written over unsaved work: %q", got)
	}
	if !e.modelSaw(2, "unsaved changes in the editor") {
		t.Errorf("the model was not told:\n%s", e.model.ModelCalls()[2].Body)
	}
}

// After darman wrote a file, the editor's buffer shows the old content
// until it reloads: that buffer is stale, not unsaved work, so a second
// write goes through and reads see the disk.
func TestSecondEditBeforeReload(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("write", map[string]string{"path": "main.go", "content": "package main // one\n"}),
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("write", map[string]string{"path": "main.go", "content": "package main // two\n"}),
			{Text: "done"},
		}},
		rules:  editRules(),
		optIns: map[string]bool{"sessionUpdates": true},
	})
	e.write("main.go", "package main\n")
	e.open("main.go", "package main\n")
	e.prompt("two edits")
	e.client.Await(0, "the end", isState("idle"))
	if got := e.read("main.go"); got != "package main // two\n" {
		t.Errorf("disk holds %q", got)
	}
	if !e.modelSaw(3, "// one") {
		t.Errorf("the read between the writes did not see the first write:\n%s", e.model.ModelCalls()[3].Body)
	}
}

// fakeEditor is an editor that opted into applyEditAndSave: it applies
// workspace/applyEdit to its buffers and saves them in place (same inode,
// as editors write), then answers.
type fakeEditor struct {
	t     *testing.T
	root  string
	mu    sync.Mutex
	edits []json.RawMessage
}

func (f *fakeEditor) answer(method string, params json.RawMessage) (any, error) {
	if method != "workspace/applyEdit" {
		return defaultAnswer(method, params)
	}
	f.mu.Lock()
	f.edits = append(f.edits, params)
	f.mu.Unlock()
	var p struct {
		Label string `json:"label"`
		Edit  struct {
			Changes map[string][]struct {
				Range   json.RawMessage `json:"range"`
				NewText string          `json:"newText"`
			} `json:"changes"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	for uri, edits := range p.Edit.Changes {
		u, err := url.Parse(uri)
		if err != nil {
			return nil, err
		}
		path := u.Path
		old, _ := os.ReadFile(path)
		c := text.New(string(old))
		for _, ed := range edits {
			var r struct {
				Start, End struct{ Line, Character uint32 }
			}
			json.Unmarshal(ed.Range, &r)
			var err error
			rg := lspRange(r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
			if c, err = c.Apply(&rg, ed.NewText); err != nil {
				return map[string]any{"applied": false, "failureReason": err.Error()}, nil
			}
		}
		if err := os.WriteFile(path, []byte(c.String()), 0o644); err != nil {
			return nil, err
		}
	}
	return map[string]any{"applied": true}, nil
}

// With applyEditAndSave, the edit goes through the editor, which saves it;
// darman never writes the file itself (the file keeps its inode, which an
// atomic rename by darman would change), and the edit covers only the
// changed lines.
func TestEditThroughTheEditor(t *testing.T) {
	ed := &fakeEditor{t: t}
	e := start(t, options{
		script: writeScript("main.go", "package main\n\nfunc main() {\n\tprintln(\"changed\")\n}\n"),
		rules:  editRules(),
		optIns: map[string]bool{"sessionUpdates": true, "applyEditAndSave": true},
		answer: ed.answer,
	})
	path := e.write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	before := inode(t, path)
	e.prompt("change the greeting")
	e.client.Await(0, "the end", isState("idle"))
	if got := e.read("main.go"); !strings.Contains(got, "changed") {
		t.Errorf("disk holds %q", got)
	}
	if inode(t, path) != before {
		t.Error("darman replaced the file itself instead of letting the editor save it")
	}
	if len(ed.edits) != 1 {
		t.Fatalf("%d applyEdit requests, want 1", len(ed.edits))
	}
	var p struct {
		Label string `json:"label"`
		Edit  struct {
			Changes map[string][]struct {
				Range struct{ Start, End struct{ Line int } } `json:"range"`
			} `json:"changes"`
		} `json:"edit"`
	}
	json.Unmarshal(ed.edits[0], &p)
	edits := p.Edit.Changes[e.uri("main.go")]
	if p.Label != "darman: edit main.go" || len(edits) != 1 || edits[0].Range.Start.Line != 3 || edits[0].Range.End.Line != 4 {
		t.Errorf("applyEdit %s: want one edit of line 4 only, labelled", ed.edits[0])
	}
}

// An editor that refuses the edit: the tool says so, the disk is unchanged.
func TestEditRefusedByTheEditor(t *testing.T) {
	e := start(t, options{
		script: writeScript("main.go", "package main // new\n"),
		rules:  editRules(),
		optIns: map[string]bool{"sessionUpdates": true, "applyEditAndSave": true},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "workspace/applyEdit" {
				return map[string]any{"applied": false, "failureReason": "the user said no"}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	e.write("main.go", "package main\n")
	e.prompt("edit")
	e.client.Await(0, "the end", isState("idle"))
	if got := e.read("main.go"); got != "package main\n" {
		t.Errorf("disk holds %q", got)
	}
	if !e.modelSaw(2, "the user said no") {
		t.Errorf("the model was not told:\n%s", e.model.ModelCalls()[2].Body)
	}
}

// A transcript of the session is written while the turn runs and shown
// with window/showDocument to a client without session updates.
func TestTranscriptFallback(t *testing.T) {
	e := start(t, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "The answer, in the transcript."}}},
		caps:   map[string]any{"window": map[string]any{"workDoneProgress": true, "showDocument": map[string]bool{"support": true}}},
		answer: func(method string, params json.RawMessage) (any, error) {
			if method == "window/showDocument" {
				return map[string]bool{"success": true}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	tr := e.prompt("write me a transcript")
	shown, _ := e.client.Await(0, "the transcript shown", isMethod("window/showDocument"))
	e.client.Await(0, "progress end", func(n note) bool {
		return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"end"`)
	})
	path := filepath.Join(e.data, "transcripts", tr.SessionID+".md")
	var p struct {
		URI       string `json:"uri"`
		TakeFocus *bool  `json:"takeFocus"`
	}
	json.Unmarshal(shown.Params, &p)
	if p.URI != fileURI(path) || p.TakeFocus == nil || *p.TakeFocus {
		t.Errorf("showDocument %s, want %s without focus", shown.Params, path)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "write me a transcript") || !strings.Contains(string(b), "The answer, in the transcript.") {
		t.Errorf("transcript %q, %v", b, err)
	}
}

// Neovim 0.7.2 cannot show documents: the transcript's path goes to the
// log instead, once.
func TestTranscriptWithoutShowDocument(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "a"}, {Text: "b"}}}})
	tr := e.prompt("first")
	msg, _ := e.client.Await(0, "the transcript's path", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "transcript")
	})
	if !strings.Contains(string(msg.Params), tr.SessionID+".md") {
		t.Errorf("logMessage %s", msg.Params)
	}
}

func lspRange(l1, c1, l2, c2 uint32) protocol.Range {
	return protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
}

// A client that opted into openDiff is shown each change as a diff; one
// that did not is sent none.
func TestOpenDiff(t *testing.T) {
	for _, opted := range []bool{true, false} {
		e := start(t, options{
			script: writeScript("main.go", "package main // by darman\n"),
			rules:  editRules(),
			optIns: map[string]bool{"sessionUpdates": true, "openDiff": opted},
		})
		path := e.write("main.go", "package main\n")
		e.open("main.go", "package main\n")
		e.prompt("rewrite main.go")
		e.client.Await(0, "the end", isState("idle"))
		diffs := e.client.All("darman/openDiff")
		if !opted {
			if len(diffs) != 0 {
				t.Errorf("openDiff sent to a client that did not opt in: %d", len(diffs))
			}
			continue
		}
		if len(diffs) != 1 {
			t.Fatalf("%d openDiff notifications, want 1", len(diffs))
		}
		var d struct{ URI, OldText, NewText, Title string }
		if err := json.Unmarshal(diffs[0].Params, &d); err != nil {
			t.Fatal(err)
		}
		if d.URI != fileURI(path) || d.OldText != "package main\n" || d.NewText != "package main // by darman\n" || d.Title == "" {
			t.Errorf("openDiff %+v", d)
		}
	}
}
