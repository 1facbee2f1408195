// Package acpupdate holds what darman's two editor fronts, the LSP server
// (darman/sessionUpdate) and the ACP agent (session/update), render alike
// in their ACP-shaped session updates: the names of the update kinds a
// stored session replays as, and a tool call's title, kind, status and
// raw input. What differs on purpose stays in each front: ACP has paths,
// 1-based lines and terminal ids, the LSP front URIs, 0-based ranges and
// the terminal's output inline.
package acpupdate

import (
	"encoding/json"
	"fmt"

	"github.com/darman-dev/darman/agent"
)

// The kinds of update a stored part replays as.
const (
	UserMessageChunk  = "user_message_chunk"
	AgentMessageChunk = "agent_message_chunk"
	AgentThoughtChunk = "agent_thought_chunk"
	ToolCall          = "tool_call"
)

// HistoryKind is the update a stored session's part is replayed as when
// the session is loaded, as its live turn sent it: a chunk kind (the
// update's content is the part's Text), ToolCall (the part's Tool), or ""
// for a part that has no update of these kinds (a step's start or end,
// an empty text).
func HistoryKind(role agent.Role, p agent.Part) string {
	switch {
	case role == agent.RoleUser && p.Kind == agent.PartText:
		return UserMessageChunk
	case p.Kind == agent.PartText && p.Text != "":
		return AgentMessageChunk
	case p.Kind == agent.PartReasoning && p.Text != "":
		return AgentThoughtChunk
	case p.Kind == agent.PartTool && p.Tool != nil:
		return ToolCall
	}
	return ""
}

// ToolFields are the fields of a tool_call or tool_call_update that do
// not depend on the front.
type ToolFields struct {
	Title  string // the call's title, else the tool's name
	Kind   string // the tool's kind, "other" when it has none
	Status string // pending, in_progress, completed or failed
	// RawInput is the model's arguments; nil when they were cut off and
	// are not valid JSON.
	RawInput json.RawMessage
}

// Tool returns the front-neutral fields of a tool call's update.
func Tool(t *agent.ToolCall) ToolFields {
	f := ToolFields{Title: t.Title, Kind: string(t.Kind), Status: toolStatus[t.Status], RawInput: t.Input}
	if f.Title == "" {
		f.Title = t.Name
	}
	if f.Kind == "" {
		f.Kind = string(agent.ToolKindOther)
	}
	if len(f.RawInput) > 0 && !json.Valid(f.RawInput) {
		f.RawInput = nil
	}
	return f
}

var toolStatus = map[agent.ToolStatus]string{
	agent.ToolPending:   "pending",
	agent.ToolRunning:   "in_progress",
	agent.ToolCompleted: "completed",
	agent.ToolFailed:    "failed",
}

// Interrupted is what both fronts say, when a stored session is replayed,
// after an assistant message that was never finished (its writer died
// mid-answer: agent.Message.Interrupted): the LSP front as a warning
// notice, the ACP front, which has no notices, as the answer's last text.
const Interrupted = "this answer was interrupted before it finished"

// WasInterrupted reports whether m is an answer that was never finished.
func WasInterrupted(m agent.MessageWithParts) bool {
	return m.Message.Role == agent.RoleAssistant && m.Message.Interrupted()
}

// StoredImage is the image a stored part of a user's message refers to
// (a prompt's image, kept as a blob of the session), or nil for any other
// part. A live turn's user message carries the same files
// (agent.Event.Images), so both fronts render the two alike.
func StoredImage(role agent.Role, p agent.Part) *agent.File {
	if role != agent.RoleUser || p.Kind != agent.PartFile || p.File == nil || p.File.Blob == "" {
		return nil
	}
	return p.File
}

// ImageLabel names a stored image of a user's message in text, as both
// fronts' replays say it: "[image shot.png, 30×20]".
func ImageLabel(f *agent.File) string {
	s := "[image"
	if f.Name != "" {
		s += " " + f.Name
	}
	if f.Width > 0 {
		s += fmt.Sprintf(", %d×%d", f.Width, f.Height)
	}
	return s + "]"
}
