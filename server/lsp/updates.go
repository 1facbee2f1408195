package lsp

import (
	"encoding/json"
	"fmt"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/server/internal/acpupdate"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
)

// sessionUpdateParams are the params of darman/sessionUpdate.
type sessionUpdateParams struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
	Update    update `json:"update"`
}

// update is one ACP-shaped session update: SessionUpdate names the kind,
// and only that kind's fields are set.
type update struct {
	SessionUpdate string `json:"sessionUpdate"`

	// user_message_chunk, agent_message_chunk, agent_thought_chunk
	Content *contentBlock `json:"content,omitempty"`

	// tool_call, tool_call_update
	ToolCallID string              `json:"toolCallId,omitempty"`
	Title      string              `json:"title,omitempty"`
	Kind       string              `json:"kind,omitempty"`
	Status     string              `json:"status,omitempty"`
	Locations  []protocol.Location `json:"locations,omitempty"`
	RawInput   json.RawMessage     `json:"rawInput,omitempty"`
	ToolOutput []toolCallContent   `json:"-"`

	// plan
	Entries []agent.PlanEntry `json:"entries,omitempty"`

	// usage_update
	Usage *usageUpdate `json:"-"`

	// state_update
	State string       `json:"state,omitempty"`
	Error *updateError `json:"error,omitempty"`

	// notice
	Level   string `json:"level,omitempty"`
	Message string `json:"message,omitempty"`
	Source  string `json:"source,omitempty"`

	// new_session (/new)
	NewSessionID string `json:"newSessionId,omitempty"`
}

// MarshalJSON writes the update; the tool call's content and the usage
// fields sit at the top level of the update as ACP has them, which the
// struct cannot say with tags alone (content is a block in chunks and a
// list in tool calls).
func (u update) MarshalJSON() ([]byte, error) {
	type plain update
	b, err := json.Marshal(plain(u))
	if err != nil || (u.ToolOutput == nil && u.Usage == nil) {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if u.ToolOutput != nil {
		if m["content"], err = json.Marshal(u.ToolOutput); err != nil {
			return nil, err
		}
	}
	if u.Usage != nil {
		ub, err := json.Marshal(u.Usage)
		if err != nil {
			return nil, err
		}
		var um map[string]json.RawMessage
		json.Unmarshal(ub, &um)
		for k, v := range um {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// A resource_link's (a stored image: image.go).
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Size     int    `json:"size,omitempty"`
}

func textBlock(s string) *contentBlock { return &contentBlock{Type: "text", Text: s} }

// toolCallContent is one item of a tool call's content: text, a diff or
// terminal output.
type toolCallContent struct {
	Type     string        `json:"type"` // content, diff, terminal
	Content  *contentBlock `json:"content,omitempty"`
	URI      string        `json:"uri,omitempty"`
	OldText  *string       `json:"oldText,omitempty"`
	NewText  *string       `json:"newText,omitempty"`
	Output   *string       `json:"output,omitempty"`
	ExitCode *int          `json:"exitCode,omitempty"`
}

type usageUpdate struct {
	InputTokens      int64   `json:"inputTokens"`
	OutputTokens     int64   `json:"outputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens"`
	CacheWriteTokens int64   `json:"cacheWriteTokens"`
	Cost             float64 `json:"cost"`
	// ContextUsed is what the last model call was sent: its input
	// tokens, cached or not.
	ContextUsed int64 `json:"contextUsed"`
	// ContextWindow is the model's context window; omitted when unknown.
	ContextWindow int `json:"contextWindow,omitempty"`
}

type updateError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The states of state_update.
const (
	stateRunning        = "running"
	stateIdle           = "idle"
	stateRequiresAction = "requires_action"
	stateFailed         = "failed"
	stateCancelled      = "cancelled"
)

// updatesOf converts an agent event to the updates sent to clients: one
// for most, none for events clients are not sent (updateOf), a user's
// message as its text and its images (userMessageUpdates).
func updatesOf(e agent.Event) []update {
	if e.Kind == agent.EventUserMessage {
		return userMessageUpdates(e)
	}
	if u, ok := updateOf(e); ok {
		return []update{u}
	}
	return nil
}

// updateOf converts an agent event other than a user's message to the
// update sent to clients; ok is false for events clients are not sent (a
// permission's question and answer travel as darman/requestPermission).
func updateOf(e agent.Event) (u update, ok bool) {
	switch e.Kind {
	case agent.EventMessageChunk:
		return update{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Text)}, true
	case agent.EventThoughtChunk:
		return update{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Text)}, true
	case agent.EventToolCall, agent.EventToolCallUpdate:
		if e.Tool == nil {
			return update{}, false
		}
		kind := "tool_call_update"
		if e.Kind == agent.EventToolCall {
			kind = "tool_call"
		}
		return toolUpdate(kind, e.Tool), true
	case agent.EventPlan:
		return update{SessionUpdate: "plan", Entries: e.Plan}, true
	case agent.EventUsage:
		if e.Usage == nil {
			return update{}, false
		}
		u := e.Usage
		return update{SessionUpdate: "usage_update", Usage: &usageUpdate{InputTokens: u.Input, OutputTokens: u.Output,
			CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, Cost: e.Cost,
			ContextUsed: u.Input + u.CacheRead + u.CacheWrite, ContextWindow: e.ContextWindow}}, true
	case agent.EventState:
		return update{SessionUpdate: "state_update", State: stateOf(e), Error: errorOf(e)}, true
	case agent.EventNewSession:
		return update{SessionUpdate: "new_session", NewSessionID: string(e.NewSession)}, e.NewSession != ""
	case agent.EventRetry:
		if e.Retry == nil {
			return update{}, false
		}
		return update{SessionUpdate: "notice", Level: "warning",
			Message: fmt.Sprintf("the model call failed (%s); retrying in %s (attempt %d)", e.Retry.Reason, e.Retry.Delay.Round(1e8), e.Retry.Attempt)}, true
	}
	return update{}, false
}

// stateOf names an event's state as clients see it: a turn that ended
// because it was cancelled is "cancelled", not "idle".
func stateOf(e agent.Event) string {
	switch {
	case e.State == agent.StateIdle && e.Reason == string(agent.FinishCancelled):
		return stateCancelled
	case e.State == agent.StateFailed:
		return stateFailed
	}
	return string(e.State)
}

func errorOf(e agent.Event) *updateError {
	if e.State != agent.StateFailed {
		return nil
	}
	return &updateError{Code: "turn_failed", Message: e.Reason}
}

func toolUpdate(kind string, t *agent.ToolCall) update {
	f := acpupdate.Tool(t)
	u := update{SessionUpdate: kind, ToolCallID: t.CallID, Title: f.Title, Kind: f.Kind, Status: f.Status, RawInput: f.RawInput}
	for _, l := range t.Locations {
		line := max(l.Line-1, 0)
		p := protocol.Position{Line: protocol.UInteger(line)}
		u.Locations = append(u.Locations, protocol.Location{URI: buffer.PathToURI(l.Path), Range: protocol.Range{Start: p, End: p}})
	}
	switch {
	case t.Diff != nil:
		u.ToolOutput = append(u.ToolOutput, toolCallContent{Type: "diff", URI: buffer.PathToURI(t.Diff.Path), OldText: &t.Diff.OldText, NewText: &t.Diff.NewText})
	case t.Terminal != "":
		u.ToolOutput = append(u.ToolOutput, toolCallContent{Type: "terminal", Output: &t.Terminal})
	}
	switch {
	case t.Status == agent.ToolFailed && t.Error != "":
		u.ToolOutput = append(u.ToolOutput, toolCallContent{Type: "content", Content: textBlock(t.Error)})
	case t.Status == agent.ToolCompleted && t.Output != "":
		u.ToolOutput = append(u.ToolOutput, toolCallContent{Type: "content", Content: textBlock(t.Output)})
	}
	return u
}

// historyUpdates renders a stored session as the updates a live turn
// sends, for darman.session.load.
func historyUpdates(msgs []agent.MessageWithParts) []update {
	out, _ := historyTurns(msgs)
	return out
}

// turnStart is where a turn of the page begins in its updates: Start is
// the index of its user message's first update, TurnID that message's id
// (what darman.turn.revert takes), so a reloaded client can offer each
// turn's Revert as the live stream did.
type turnStart struct {
	TurnID string `json:"turnId"`
	Start  int    `json:"start"`
}

// historyTurns is historyUpdates and the turns that begin in them.
func historyTurns(msgs []agent.MessageWithParts) ([]update, []turnStart) {
	var out []update
	var turns []turnStart
	for _, m := range msgs {
		start := len(out)
		for _, p := range m.Parts {
			switch kind := acpupdate.HistoryKind(m.Message.Role, p); {
			case kind == acpupdate.ToolCall:
				out = append(out, toolUpdate(kind, p.Tool))
			case acpupdate.StoredImage(m.Message.Role, p) != nil:
				out = append(out, imageUpdate(m.Message.SessionID, p.File))
			case kind != "":
				out = append(out, update{SessionUpdate: kind, Content: textBlock(p.Shown())})
			case p.Kind == agent.PartStepFinish && p.Usage != nil:
				u, _ := updateOf(agent.Event{Kind: agent.EventUsage, Usage: p.Usage, Cost: p.Cost})
				out = append(out, u)
			}
		}
		if acpupdate.WasInterrupted(m) {
			out = append(out, update{SessionUpdate: "notice", Level: "warning", Message: acpupdate.Interrupted})
		}
		// A turn that failed or was cancelled ends as it did live, so a
		// reloaded session still says so.
		switch m.Message.Finish {
		case agent.FinishError:
			out = append(out, update{SessionUpdate: "state_update", State: stateFailed, Error: &updateError{Code: "turn_failed", Message: m.Message.Error}})
		case agent.FinishCancelled:
			out = append(out, update{SessionUpdate: "state_update", State: stateCancelled})
		}
		if m.Message.Role == agent.RoleUser && len(out) > start && out[start].SessionUpdate == acpupdate.UserMessageChunk {
			turns = append(turns, turnStart{TurnID: string(m.Message.ID), Start: start})
		}
	}
	return out, turns
}
