// Package update is the LSP front's vocabulary of darman/sessionUpdate: the
// ACP-shaped updates a client that opted in (initializationOptions
// sessionUpdates) is sent, made from a live turn's agent events (Of) and
// from a stored session (History), so a reloaded session shows as it did
// live. It only converts: the relay (server/lsp/relay.go) decides what is
// sent when, and docs/protocol.md is the wire's description.
package update

import (
	"encoding/json"
	"fmt"
	"strings"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/server/internal/acpupdate"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
)

// Params are the params of darman/sessionUpdate.
type Params struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
	Update    Update `json:"update"`
}

// Update is one ACP-shaped session update: SessionUpdate names the kind,
// and only that kind's fields are set.
type Update struct {
	SessionUpdate string `json:"sessionUpdate"`

	// user_message_chunk, agent_message_chunk, agent_thought_chunk
	Content *ContentBlock `json:"content,omitempty"`

	// tool_call, tool_call_update
	ToolCallID string              `json:"toolCallId,omitempty"`
	Title      string              `json:"title,omitempty"`
	Kind       string              `json:"kind,omitempty"`
	Status     string              `json:"status,omitempty"`
	Locations  []protocol.Location `json:"locations,omitempty"`
	RawInput   json.RawMessage     `json:"rawInput,omitempty"`
	ToolOutput []ToolCallContent   `json:"-"`

	// plan
	Entries []agent.PlanEntry `json:"entries,omitempty"`

	// usage_update
	Usage *Usage `json:"-"`

	// state_update
	State string `json:"state,omitempty"`
	Error *Error `json:"error,omitempty"`

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
func (u Update) MarshalJSON() ([]byte, error) {
	type plain Update
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

// ContentBlock is a chunk's content: text, or a resource_link to a stored
// image (Image).
type ContentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// A resource_link's.
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Size     int    `json:"size,omitempty"`
}

func textBlock(s string) *ContentBlock { return &ContentBlock{Type: "text", Text: s} }

// ToolCallContent is one item of a tool call's content: text, a diff or
// terminal output.
type ToolCallContent struct {
	Type     string        `json:"type"` // content, diff, terminal
	Content  *ContentBlock `json:"content,omitempty"`
	URI      string        `json:"uri,omitempty"`
	OldText  *string       `json:"oldText,omitempty"`
	NewText  *string       `json:"newText,omitempty"`
	Output   *string       `json:"output,omitempty"`
	ExitCode *int          `json:"exitCode,omitempty"`
}

// Usage is a usage_update's figures.
type Usage struct {
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

// Error is a failed state_update's error.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The states of state_update (and of darman.session.list's sessions).
const (
	StateRunning        = "running"
	StateIdle           = "idle"
	StateRequiresAction = "requires_action"
	StateFailed         = "failed"
	StateCancelled      = "cancelled"
)

// Notice is a notice update: a warning or message beside the turn.
func Notice(level, msg string) Update {
	return Update{SessionUpdate: "notice", Level: level, Message: msg}
}

// Of converts an agent event to the updates sent to clients: one for
// most, none for events clients are not sent (a permission's question
// and answer travel as darman/requestPermission), a user's message as its
// text and its images.
func Of(e agent.Event) []Update {
	if e.Kind == agent.EventUserMessage {
		return userMessage(e)
	}
	if u, ok := of(e); ok {
		return []Update{u}
	}
	return nil
}

// of converts an agent event other than a user's message; ok is false
// for events clients are not sent.
func of(e agent.Event) (u Update, ok bool) {
	switch e.Kind {
	case agent.EventMessageChunk:
		return Update{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Text)}, true
	case agent.EventThoughtChunk:
		return Update{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Text)}, true
	case agent.EventToolCall, agent.EventToolCallUpdate:
		if e.Tool == nil {
			return Update{}, false
		}
		kind := "tool_call_update"
		if e.Kind == agent.EventToolCall {
			kind = "tool_call"
		}
		return toolUpdate(kind, e.Tool), true
	case agent.EventPlan:
		return Update{SessionUpdate: "plan", Entries: e.Plan}, true
	case agent.EventUsage:
		if e.Usage == nil {
			return Update{}, false
		}
		u := e.Usage
		return Update{SessionUpdate: "usage_update", Usage: &Usage{InputTokens: u.Input, OutputTokens: u.Output,
			CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, Cost: e.Cost,
			ContextUsed: u.Input + u.CacheRead + u.CacheWrite, ContextWindow: e.ContextWindow}}, true
	case agent.EventState:
		return Update{SessionUpdate: "state_update", State: StateOf(e), Error: errorOf(e)}, true
	case agent.EventNewSession:
		return Update{SessionUpdate: "new_session", NewSessionID: string(e.NewSession)}, e.NewSession != ""
	case agent.EventRetry:
		if e.Retry == nil {
			return Update{}, false
		}
		return Notice("warning", fmt.Sprintf("the model call failed (%s); retrying in %s (attempt %d)", e.Retry.Reason, e.Retry.Delay.Round(1e8), e.Retry.Attempt)), true
	}
	return Update{}, false
}

// StateOf names an event's state as clients see it: a turn that ended
// because it was cancelled is "cancelled", not "idle".
func StateOf(e agent.Event) string {
	switch {
	case e.State == agent.StateIdle && e.Reason == string(agent.FinishCancelled):
		return StateCancelled
	case e.State == agent.StateFailed:
		return StateFailed
	}
	return string(e.State)
}

func errorOf(e agent.Event) *Error {
	if e.State != agent.StateFailed {
		return nil
	}
	return &Error{Code: "turn_failed", Message: e.Reason}
}

func toolUpdate(kind string, t *agent.ToolCall) Update {
	f := acpupdate.Tool(t)
	u := Update{SessionUpdate: kind, ToolCallID: t.CallID, Title: f.Title, Kind: f.Kind, Status: f.Status, RawInput: f.RawInput}
	for _, l := range t.Locations {
		line := max(l.Line-1, 0)
		p := protocol.Position{Line: protocol.UInteger(line)}
		u.Locations = append(u.Locations, protocol.Location{URI: buffer.PathToURI(l.Path), Range: protocol.Range{Start: p, End: p}})
	}
	switch {
	case t.Diff != nil:
		u.ToolOutput = append(u.ToolOutput, ToolCallContent{Type: "diff", URI: buffer.PathToURI(t.Diff.Path), OldText: &t.Diff.OldText, NewText: &t.Diff.NewText})
	case t.Terminal != "":
		u.ToolOutput = append(u.ToolOutput, ToolCallContent{Type: "terminal", Output: &t.Terminal})
	}
	switch {
	case t.Status == agent.ToolFailed && t.Error != "":
		u.ToolOutput = append(u.ToolOutput, ToolCallContent{Type: "content", Content: textBlock(t.Error)})
	case t.Status == agent.ToolCompleted && t.Output != "":
		u.ToolOutput = append(u.ToolOutput, ToolCallContent{Type: "content", Content: textBlock(t.Output)})
	}
	return u
}

// History renders a stored session as the updates a live turn sends, for
// darman.session.load.
func History(msgs []agent.MessageWithParts) []Update {
	out, _ := HistoryTurns(msgs)
	return out
}

// TurnStart is where a turn of the page begins in its updates: Start is
// the index of its user message's first update, TurnID that message's id
// (what darman.turn.revert takes), so a reloaded client can offer each
// turn's Revert as the live stream did.
type TurnStart struct {
	TurnID string `json:"turnId"`
	Start  int    `json:"start"`
	// Files says the turn changed files its revert would take back (its
	// checkpoint, not reverted, differs from before it), whatever changed
	// them: an edit applied to it after it ended has no tool call on the
	// page.
	Files bool `json:"files,omitempty"`
}

// HistoryTurns is History and the turns that begin in it.
func HistoryTurns(msgs []agent.MessageWithParts) ([]Update, []TurnStart) {
	var out []Update
	var turns []TurnStart
	for _, m := range msgs {
		start := len(out)
		for _, p := range m.Parts {
			switch kind := acpupdate.HistoryKind(m.Message.Role, p); {
			case kind == acpupdate.ToolCall:
				out = append(out, toolUpdate(kind, p.Tool))
			case acpupdate.StoredImage(m.Message.Role, p) != nil:
				out = append(out, Image(m.Message.SessionID, p.File))
			case kind != "":
				out = append(out, Update{SessionUpdate: kind, Content: textBlock(p.Shown())})
			case p.Kind == agent.PartStepFinish && p.Usage != nil:
				u, _ := of(agent.Event{Kind: agent.EventUsage, Usage: p.Usage, Cost: p.Cost})
				out = append(out, u)
			}
		}
		if acpupdate.WasInterrupted(m) {
			out = append(out, Notice("warning", acpupdate.Interrupted))
		}
		// A turn that failed or was cancelled ends as it did live, so a
		// reloaded session still says so.
		switch m.Message.Finish {
		case agent.FinishError:
			out = append(out, Update{SessionUpdate: "state_update", State: StateFailed, Error: &Error{Code: "turn_failed", Message: m.Message.Error}})
		case agent.FinishCancelled:
			out = append(out, Update{SessionUpdate: "state_update", State: StateCancelled})
		}
		if m.Message.Role == agent.RoleUser && len(out) > start && out[start].SessionUpdate == acpupdate.UserMessageChunk {
			turns = append(turns, TurnStart{TurnID: string(m.Message.ID), Start: start})
		}
	}
	return out, turns
}

// Image is how a stored image of a user's message shows, in the live turn
// and in darman.session.load alike: a user_message_chunk whose content is
// a resource_link to the image (ImageURI), without its bytes;
// darman.session.image reads them.
func Image(session agent.ID, f *agent.File) Update {
	name := f.Name
	if name == "" {
		name = "image"
	}
	return Update{SessionUpdate: acpupdate.UserMessageChunk, Content: &ContentBlock{Type: "resource_link", Text: acpupdate.ImageLabel(f),
		URI: ImageURI(session, f.Blob), Name: name, MimeType: f.MIME, Size: f.Size}}
}

// userMessage is a live turn's user message (agent.EventUserMessage) as
// darman.session.load replays it once stored: its text, unless it is
// blank beside images (the turn stores no text then), and then each image
// the turn stored.
func userMessage(e agent.Event) []Update {
	var out []Update
	if strings.TrimSpace(e.Text) != "" || len(e.Images) == 0 {
		out = append(out, Update{SessionUpdate: acpupdate.UserMessageChunk, Content: textBlock(e.Text)})
	}
	for i := range e.Images {
		out = append(out, Image(e.SessionID, &e.Images[i]))
	}
	return out
}

// imageScheme starts the URI of a stored image.
const imageScheme = "darman-image:"

// ImageURI names a stored image: darman-image:<session>/<blob key>.
func ImageURI(session agent.ID, key string) string {
	return imageScheme + string(session) + "/" + key
}

// ParseImageURI is ImageURI's session and key; ok is false for a URI of
// another scheme.
func ParseImageURI(uri string) (session, key string, ok bool) {
	rest, ok := strings.CutPrefix(uri, imageScheme)
	if !ok {
		return "", "", false
	}
	session, key, _ = strings.Cut(rest, "/")
	return session, key, true
}
