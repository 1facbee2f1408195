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
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var parent *string
	put := func(uuid, kind string, at time.Time, m transcriptMessage) error {
		line := transcriptLine{Type: kind, UUID: uuid, ParentUUID: parent, SessionID: string(sess.ID),
			Timestamp: at.UTC().Format(time.RFC3339Nano), Cwd: sess.Workspace, Message: m}
		id := uuid
		parent = &id
		return enc.Encode(line)
	}
	for _, m := range msgs {
		msg := m.Message
		if msg.Role == agent.RoleUser {
			blocks := []contentBlock{}
			for _, p := range m.Parts {
				if p.Kind == agent.PartText && p.Text != "" {
					blocks = append(blocks, contentBlock{Type: "text", Text: p.Text})
				}
			}
			if err := put(string(msg.ID), "user", msg.Created, transcriptMessage{Role: "user", Content: blocks}); err != nil {
				return err
			}
			continue
		}
		var blocks, results []contentBlock
		for _, p := range m.Parts {
			switch {
			case p.Kind == agent.PartText && p.Text != "":
				blocks = append(blocks, contentBlock{Type: "text", Text: p.Text})
			case p.Kind == agent.PartReasoning && p.Text != "":
				blocks = append(blocks, contentBlock{Type: "thinking", Thinking: p.Text})
			case p.Kind == agent.PartTool && p.Tool != nil:
				t := p.Tool
				blocks = append(blocks, contentBlock{Type: "tool_use", ID: t.CallID, Name: ToolName(t.Name), Input: toolInput(t.Name, root, t.Input)})
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
		if blocks == nil {
			blocks = []contentBlock{}
		}
		if err := put(string(msg.ID), "assistant", msg.Created, transcriptMessage{Role: "assistant", Model: msg.Model, Content: blocks,
			StopReason: stopReasons[msg.Finish]}); err != nil {
			return err
		}
		if len(results) > 0 {
			at := msg.Completed
			if at.IsZero() {
				at = msg.Created
			}
			if err := put(string(msg.ID)+"-results", "user", at, transcriptMessage{Role: "user", Content: results}); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
