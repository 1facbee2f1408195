package transcript_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func fixture() transcript.Session {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s := agent.Session{ID: "ses_01M8N7S49CCAECGE1ZFM944X60", Workspace: "/src/app", Title: "Fix the flaky test",
		Model: "anthropic/claude-sonnet-4-5", Created: at, Updated: at, Messages: 4, Cost: 0.0123}
	part := func(kind agent.PartKind, text string) agent.Part { return agent.Part{Kind: kind, Text: text} }
	msg := func(role agent.Role, finish agent.Finish, errText string, parts ...agent.Part) agent.MessageWithParts {
		return agent.MessageWithParts{Message: agent.Message{Role: role, Finish: finish, Error: errText, Model: "anthropic/claude-sonnet-4-5"}, Parts: parts}
	}
	ask := msg(agent.RoleUser, "", "", part(agent.PartText, "Why does TestFoo fail?"),
		agent.Part{Kind: agent.PartFile, File: &agent.File{Path: "screenshot.png", MIME: "image/png"}})
	ask.Message.ID = "msg_01M8N7S4A0Z3T5QK6J0B2C4D8E"
	return transcript.Session{Session: s, Messages: []agent.MessageWithParts{
		ask,
		msg(agent.RoleAssistant, agent.FinishStop, "",
			part(agent.PartReasoning, "Look at the test first.\nThen the code."),
			agent.Part{Kind: agent.PartTool, Tool: &agent.ToolCall{Name: "read", Status: agent.ToolCompleted, Title: "foo_test.go",
				Output: "```go\npackage foo\n```"}},
			agent.Part{Kind: agent.PartTool, Tool: &agent.ToolCall{Name: "bash", Status: agent.ToolFailed,
				Input: json.RawMessage(`{"command": "go test\n ./..."}`), Error: "exit status 1"}},
			part(agent.PartText, "It depends on map order.\n")),
		msg(agent.RoleAssistant, agent.FinishError, "rate limited", part(agent.PartCompaction, "Goal: fix TestFoo.")),
		msg(agent.RoleAssistant, "", "", part(agent.PartText, "Let me fix")),
	}}
}

func TestGolden(t *testing.T) {
	for name, render := range map[string]func(*bytes.Buffer, transcript.Session) error{
		"show.txt":  func(b *bytes.Buffer, s transcript.Session) error { return transcript.Text(b, s) },
		"export.md": func(b *bytes.Buffer, s transcript.Session) error { return transcript.Markdown(b, s) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TZ", "UTC")
			var b bytes.Buffer
			if err := render(&b, fixture()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name)
			if *update {
				os.MkdirAll("testdata", 0o755)
				os.WriteFile(golden, b.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs from %s (run with -update after checking):\n%s", name, golden, b.String())
			}
		})
	}
}

// A command cut off while it ran (darman was killed) has no output, only
// what it printed as it streamed: the transcript shows that.
func TestInterruptedCommandShowsWhatItPrinted(t *testing.T) {
	s := transcript.Session{Session: agent.Session{ID: "ses_01M8N7S49CCAECGE1ZFM944X60", Title: "t"}, Messages: []agent.MessageWithParts{{
		Message: agent.Message{Role: agent.RoleAssistant},
		Parts: []agent.Part{{Kind: agent.PartTool, Tool: &agent.ToolCall{Name: "bash", Status: agent.ToolRunning,
			Input: json.RawMessage(`{"command":"make"}`), Terminal: "building step 1\nbuilding step 2\n"}}},
	}}}
	var b bytes.Buffer
	if err := transcript.Markdown(&b, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("building step 1\nbuilding step 2")) {
		t.Fatalf("the transcript lacks the command's output:\n%s", b.String())
	}
}
