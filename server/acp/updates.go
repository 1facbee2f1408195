package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/internal/acpupdate"
)

// update is one session/update: SessionUpdate names the kind and only
// that kind's fields are set. Paths are absolute and lines 1-based, as
// darman keeps them.
type update struct {
	SessionUpdate string `json:"sessionUpdate"`

	// user_message_chunk, agent_message_chunk, agent_thought_chunk: a
	// content block; tool_call, tool_call_update: a list (ToolContent).
	Content     *contentBlock     `json:"-"`
	ToolContent []toolCallContent `json:"-"`
	// user_message_chunk of a stored image, for session/load (image.go).
	Image *imageContent `json:"-"`

	// tool_call, tool_call_update
	ToolCallID string          `json:"toolCallId,omitempty"`
	Title      string          `json:"title,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Status     string          `json:"status,omitempty"`
	Locations  []location      `json:"locations,omitempty"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`

	// plan
	Entries []planEntry `json:"entries,omitempty"`

	// available_commands_update
	AvailableCommands []availableCommand `json:"availableCommands,omitempty"`

	// current_mode_update
	CurrentModeID string `json:"currentModeId,omitempty"`

	// config_option_update
	ConfigOptions []configOption `json:"configOptions,omitempty"`

	// usage_update
	Used *int64 `json:"used,omitempty"`
	Size int64  `json:"size,omitempty"`
	Cost *cost  `json:"cost,omitempty"`
}

// MarshalJSON writes the update with its content under "content", a block
// or a list by kind.
func (u update) MarshalJSON() ([]byte, error) {
	type plain update
	b, err := json.Marshal(plain(u))
	if err != nil {
		return nil, err
	}
	var content any
	switch {
	case u.Content != nil:
		content = u.Content
	case u.ToolContent != nil:
		content = u.ToolContent
	case u.Image != nil:
		content = u.Image
	default:
		return b, nil
	}
	c, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	// b is an object with at least sessionUpdate: splice content in.
	return append(append(append(b[:len(b)-1:len(b)-1], `,"content":`...), c...), '}'), nil
}

type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func text(s string) *contentBlock { return &contentBlock{Type: "text", Text: s} }

type toolCallContent struct {
	Type       string        `json:"type"` // content, diff, terminal
	Content    *contentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	OldText    *string       `json:"oldText,omitempty"`
	NewText    *string       `json:"newText,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
}

type location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// updateOf converts an agent event of the session's turn to the update
// sent; ok is false for events ACP has no update for (states: the turn's
// end is session/prompt's answer; permission questions travel as
// session/request_permission). A sub-task's text is left out, as ACP
// cannot nest it; its tool calls are sent.
func (ls *liveSession) updateOf(e agent.Event) (update, bool) {
	sub := e.ParentCallID != ""
	switch e.Kind {
	case agent.EventUserMessage:
		// Not sent: the client shows the prompt it sent, images included.
		// ACP's user_message_chunk is session/load's replay of a stored
		// message (historyUpdates, which shows the images the event names
		// as the store keeps them); a client such as Zed adds a live one
		// to the user's message it shows, which would show it twice.
		return update{}, false
	case agent.EventMessageChunk:
		return update{SessionUpdate: "agent_message_chunk", Content: text(e.Text)}, !sub && e.Text != ""
	case agent.EventThoughtChunk:
		return update{SessionUpdate: "agent_thought_chunk", Content: text(e.Text)}, !sub && e.Text != ""
	case agent.EventToolCall, agent.EventToolCallUpdate:
		if e.Tool == nil {
			return update{}, false
		}
		kind := "tool_call_update"
		if e.Kind == agent.EventToolCall {
			kind = "tool_call"
		}
		done := e.Tool.Status == agent.ToolCompleted || e.Tool.Status == agent.ToolFailed
		return toolUpdate(kind, e.Tool, ls.terminalOf(e.Tool.CallID, done)), true
	case agent.EventPlan:
		return update{SessionUpdate: "plan", Entries: planOf(e.Plan)}, !sub
	case agent.EventNotice:
		// ACP has no notice in its stable updates: darman's notices (a
		// hook that failed, its message for the user) are a line of the
		// answer, as the LSP front shows them as warnings.
		return update{SessionUpdate: acpupdate.AgentMessageChunk, Content: text(noticeText(e.Text))}, e.Text != ""
	case agent.EventUsage:
		if e.Usage == nil || e.ContextWindow == 0 || sub {
			return update{}, false
		}
		used := e.Usage.Input + e.Usage.CacheRead + e.Usage.CacheWrite
		return update{SessionUpdate: "usage_update", Used: &used, Size: int64(e.ContextWindow), Cost: &cost{Amount: e.Cost, Currency: "USD"}}, true
	}
	return update{}, false
}

// noticeText is a notice as the answer's text shows it: a paragraph of
// its own, marked as darman's.
func noticeText(s string) string { return "\n\n[darman: " + s + "]\n\n" }

// terminalOf is the client's terminal a call's bash runs in, if any; a
// call that is done is forgotten, since nothing is sent about it again.
func (ls *liveSession) terminalOf(callID string, done bool) string {
	if ls == nil {
		return ""
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	id := ls.terminals[callID]
	if done {
		delete(ls.terminals, callID)
	}
	return id
}

func planOf(entries []agent.PlanEntry) []planEntry {
	out := make([]planEntry, len(entries))
	for i, e := range entries {
		p := planEntry{Content: e.Content, Priority: e.Priority, Status: e.Status}
		if p.Priority == "" {
			p.Priority = "medium"
		}
		if p.Status == "" {
			p.Status = "pending"
		}
		out[i] = p
	}
	return out
}

// toolUpdate renders a tool call; terminalID is the client's terminal the
// call's command runs in, if any.
func toolUpdate(kind string, t *agent.ToolCall, terminalID string) update {
	f := acpupdate.Tool(t)
	u := update{SessionUpdate: kind, ToolCallID: t.CallID, Title: f.Title, Kind: f.Kind, Status: f.Status, RawInput: f.RawInput}
	for _, l := range t.Locations {
		u.Locations = append(u.Locations, location{Path: l.Path, Line: max(l.Line, 0)})
	}
	content := []toolCallContent{}
	switch {
	case terminalID != "":
		content = append(content, toolCallContent{Type: "terminal", TerminalID: terminalID})
	case t.Diff != nil:
		old, updated := t.Diff.OldText, t.Diff.NewText
		content = append(content, toolCallContent{Type: "diff", Path: t.Diff.Path, OldText: &old, NewText: &updated})
	case t.Terminal != "" && t.Status == agent.ToolRunning:
		content = append(content, toolCallContent{Type: "content", Content: text(t.Terminal)})
	}
	switch {
	case t.Status == agent.ToolFailed && t.Error != "":
		content = append(content, toolCallContent{Type: "content", Content: text(t.Error)})
	case t.Status == agent.ToolCompleted && t.Output != "" && terminalID == "":
		content = append(content, toolCallContent{Type: "content", Content: text(t.Output)})
	}
	if len(content) > 0 || kind == "tool_call_update" && (t.Status == agent.ToolCompleted || t.Status == agent.ToolFailed) {
		u.ToolContent = content
	}
	return u
}

// historyUpdates renders a stored session as the updates its turns sent,
// for session/load; blob reads a stored image's bytes (image.go).
func historyUpdates(msgs []agent.MessageWithParts, blob func(key string) ([]byte, error)) []update {
	var out []update
	for _, m := range msgs {
		for _, p := range m.Parts {
			if u, ok := historyImage(m.Message.Role, p, blob); ok {
				out = append(out, u)
				continue
			}
			switch kind := acpupdate.HistoryKind(m.Message.Role, p); kind {
			case "":
			case acpupdate.ToolCall:
				out = append(out, toolUpdate(kind, p.Tool, ""))
			default:
				out = append(out, update{SessionUpdate: kind, Content: text(p.Shown())})
			}
		}
		if acpupdate.WasInterrupted(m) {
			out = append(out, update{SessionUpdate: acpupdate.AgentMessageChunk, Content: text("\n\n[" + acpupdate.Interrupted + "]")})
		}
	}
	return out
}

// promptParts reads a prompt's content blocks: text as it is, a resource
// link as a mention of the file (the model reads it with its tools), an
// embedded resource as the file's content (or, for a binary one, its size
// and type), an image as an image (image.go). A linked or embedded file
// must be one darman would attach itself (complete.Attachable: inside the
// workspace root, not a secret), or nothing is sent.
func promptParts(blocks []json.RawMessage, root string) ([]session.Part, error) {
	if len(blocks) == 0 {
		return nil, invalidParams("session/prompt: the prompt is empty")
	}
	var parts []session.Part
	for i, raw := range blocks {
		var b struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource *struct {
				URI      string  `json:"uri"`
				Text     *string `json:"text"`
				Blob     string  `json:"blob"`
				MimeType string  `json:"mimeType"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, invalidParams("session/prompt: prompt[%d]: %v", i, err)
		}
		switch b.Type {
		case "text":
			parts = append(parts, session.Part{Text: b.Text})
		case "resource_link":
			if b.URI == "" {
				return nil, invalidParams("session/prompt: prompt[%d]: a resource_link needs a uri", i)
			}
			if err := attachable(b.URI, root); err != nil {
				return nil, invalidParams("session/prompt: prompt[%d]: %v", i, err)
			}
			parts = append(parts, session.Part{File: pathOf(b.URI)})
		case "resource":
			if b.Resource == nil || b.Resource.URI == "" {
				return nil, invalidParams("session/prompt: prompt[%d]: a resource needs resource.uri", i)
			}
			r := b.Resource
			if err := attachable(r.URI, root); err != nil {
				return nil, invalidParams("session/prompt: prompt[%d]: %v", i, err)
			}
			switch {
			case r.Text != nil:
				parts = append(parts, session.Part{File: pathOf(r.URI), Text: *r.Text, Embedded: true})
			default:
				data, err := base64.StdEncoding.DecodeString(r.Blob)
				if err != nil {
					return nil, invalidParams("session/prompt: prompt[%d]: resource.blob is not base64: %v", i, err)
				}
				parts = append(parts, session.Part{File: pathOf(r.URI), Size: len(data), MIME: r.MimeType})
			}
		case "image":
			p, err := imagePart(i, raw)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		case "audio":
			return nil, invalidParams("session/prompt: prompt[%d]: darman takes no %s in prompts (promptCapabilities says so); attach the file by path instead", i, b.Type)
		default:
			return nil, invalidParams("session/prompt: prompt[%d]: unknown content type %q", i, b.Type)
		}
	}
	if strings.TrimSpace(session.MessageText(parts)) == "" && !hasImage(parts) {
		return nil, invalidParams("session/prompt: the prompt has no text")
	}
	return parts, nil
}

// attachable checks a linked or embedded resource's URI: a file (a file
// URI, or a bare path, relative to root) must be one darman attaches
// (complete.Attachable); another scheme's resource is the client's own.
func attachable(uri, root string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("%q is not a URI: %v", uri, err)
	}
	path := u.Path
	switch u.Scheme {
	case "file":
	case "":
		path = uri
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
	default:
		return nil
	}
	_, err = complete.Attachable(root, path)
	return err
}

// pathOf is a file URI's path, or the URI itself for another scheme.
func pathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	return u.Path
}
