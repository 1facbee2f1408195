package hook

import (
	"bufio"
	"encoding/json"
	"io"
	"time"

	"github.com/darman-dev/darman/agent"
)

// transcriptLine is one line of a transcript in Claude Code's shape: a
// user or assistant entry chained by uuid and parentUuid, its message in
// the Messages API's roles and content blocks.
type transcriptLine struct {
	Type       string            `json:"type"`
	UUID       string            `json:"uuid"`
	ParentUUID *string           `json:"parentUuid"`
	SessionID  string            `json:"sessionId"`
	Timestamp  string            `json:"timestamp"`
	Cwd        string            `json:"cwd"`
	Message    transcriptMessage `json:"message"`
}

type transcriptMessage struct {
	Role       string         `json:"role"`
	Model      string         `json:"model,omitempty"`
	Content    []contentBlock `json:"content"`
	StopReason string         `json:"stop_reason,omitempty"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// stopReasons are darman's finishes as the Messages API names them.
var stopReasons = map[agent.Finish]string{
	agent.FinishStop:      "end_turn",
	agent.FinishToolCalls: "tool_use",
	agent.FinishLength:    "max_tokens",
}

// WriteTranscript writes a session as a transcript in Claude Code's JSONL
// shape, what a hook reads at transcript_path: a "user" line per prompt
// (its text), an "assistant" line per answer (text, thinking and tool_use
// blocks, tool names and inputs as hooks see them: ToolName, Claude's
// keys), then a "user" line of tool_result blocks for the answer's tool
// calls that ended.
func WriteTranscript(w io.Writer, root string, sess agent.Session, msgs []agent.MessageWithParts) error {
	bw := bufio.NewWriter(w)
	tw := NewTranscriptWriter(bw, root, sess, "")
	for _, m := range msgs {
		if err := tw.Message(m); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// TranscriptWriter writes a transcript message by message, so that a
// transcript can be extended: start one after the lines already written
// with the uuid of the last of them.
type TranscriptWriter struct {
	enc    *json.Encoder
	root   string
	sess   agent.Session
	parent *string
}

// NewTranscriptWriter writes sess's lines to w; after is the uuid of the
// line they follow, "" for the first.
func NewTranscriptWriter(w io.Writer, root string, sess agent.Session, after string) *TranscriptWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	tw := &TranscriptWriter{enc: enc, root: root, sess: sess}
	if after != "" {
		tw.parent = &after
	}
	return tw
}

// Last is the uuid of the last line written, "" before any.
func (tw *TranscriptWriter) Last() string {
	if tw.parent == nil {
		return ""
	}
	return *tw.parent
}

func (tw *TranscriptWriter) put(uuid, kind string, at time.Time, m transcriptMessage) error {
	line := transcriptLine{Type: kind, UUID: uuid, ParentUUID: tw.parent, SessionID: string(tw.sess.ID),
		Timestamp: at.UTC().Format(time.RFC3339Nano), Cwd: tw.sess.Workspace, Message: m}
	id := uuid
	tw.parent = &id
	return tw.enc.Encode(line)
}

// Message writes one message's lines.
func (tw *TranscriptWriter) Message(m agent.MessageWithParts) error {
	msg := m.Message
	if msg.Role == agent.RoleUser {
		blocks := []contentBlock{}
		for _, p := range m.Parts {
			if p.Kind == agent.PartText && p.Text != "" {
				blocks = append(blocks, contentBlock{Type: "text", Text: p.Text})
			}
		}
		return tw.put(string(msg.ID), "user", msg.Created, transcriptMessage{Role: "user", Content: blocks})
	}
	blocks, results := []contentBlock{}, []contentBlock{}
	for _, p := range m.Parts {
		switch {
		case p.Kind == agent.PartText && p.Text != "":
			blocks = append(blocks, contentBlock{Type: "text", Text: p.Text})
		case p.Kind == agent.PartReasoning && p.Text != "":
			blocks = append(blocks, contentBlock{Type: "thinking", Thinking: p.Text})
		case p.Kind == agent.PartTool && p.Tool != nil:
			t := p.Tool
			blocks = append(blocks, contentBlock{Type: "tool_use", ID: t.CallID, Name: ToolName(t.Name), Input: toolInput(t.Name, tw.root, t.Input)})
			switch t.Status {
			case agent.ToolCompleted:
				out := t.Output
				results = append(results, contentBlock{Type: "tool_result", ToolUseID: t.CallID, Content: &out})
			case agent.ToolFailed:
				out := t.Error
				results = append(results, contentBlock{Type: "tool_result", ToolUseID: t.CallID, Content: &out, IsError: true})
			}
		}
	}
	if err := tw.put(string(msg.ID), "assistant", msg.Created, transcriptMessage{Role: "assistant", Model: msg.Model, Content: blocks,
		StopReason: stopReasons[msg.Finish]}); err != nil {
		return err
	}
	if len(results) == 0 {
		return nil
	}
	at := msg.Completed
	if at.IsZero() {
		at = msg.Created
	}
	return tw.put(string(msg.ID)+"-results", "user", at, transcriptMessage{Role: "user", Content: results})
}
