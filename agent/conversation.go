package agent

import (
	"encoding/json"
	"time"
)

// Session is one conversation in one workspace. It owns its messages; a
// message owns its parts. Values of these types are plain data: the store
// persists them, the bus carries them, and nothing in them refers back to a
// live object.
type Session struct {
	ID ID `json:"id"`
	// ParentID is set for a sub-task's session: the session whose task tool
	// call started it.
	ParentID ID `json:"parentId,omitempty"`
	// Workspace is the absolute path of the workspace root.
	Workspace string    `json:"workspace"`
	Title     string    `json:"title,omitempty"`
	Model     string    `json:"model,omitempty"` // "provider/model-id"
	Agent     string    `json:"agent,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	// Messages counts the session's messages; the store keeps it current.
	Messages int   `json:"messages"`
	Usage    Usage `json:"usage"`
	// Cost is the total in US dollars, as far as the model catalog knows prices.
	Cost float64 `json:"cost"`
}

// Role says who wrote a message.
type Role string

// The roles of a message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Finish says how an assistant message ended.
type Finish string

// The ways an assistant message ends. An empty Finish means the message is
// still being written, or its writer died: see Interrupted.
const (
	FinishStop      Finish = "stop"       // the model was done
	FinishToolCalls Finish = "tool_calls" // the model asked for tools
	FinishLength    Finish = "length"     // the output limit was hit
	FinishCancelled Finish = "cancelled"  // the user cancelled the turn
	FinishError     Finish = "error"      // the turn failed; Error says why
	FinishStepLimit Finish = "step_limit" // the turn hit its step limit
)

// Message is one user prompt or one assistant answer.
type Message struct {
	ID        ID        `json:"id"`
	SessionID ID        `json:"sessionId"`
	Role      Role      `json:"role"`
	Created   time.Time `json:"created"`
	// Completed is zero while the message is being written.
	Completed time.Time `json:"completed,omitzero"`
	Model     string    `json:"model,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Finish    Finish    `json:"finish,omitempty"`
	Error     string    `json:"error,omitempty"`
	Usage     Usage     `json:"usage,omitzero"`
	Cost      float64   `json:"cost,omitempty"`
}

// Interrupted reports whether an assistant message was never finished: its
// writer stopped (crashed, was killed) in the middle of the turn.
func (m Message) Interrupted() bool {
	return m.Role == RoleAssistant && m.Finish == ""
}

// PartKind says what a part holds.
type PartKind string

// The kinds of part.
const (
	PartText       PartKind = "text"
	PartReasoning  PartKind = "reasoning"
	PartTool       PartKind = "tool"
	PartFile       PartKind = "file"
	PartStepStart  PartKind = "step_start"
	PartStepFinish PartKind = "step_finish"
	PartCompaction PartKind = "compaction"
	PartError      PartKind = "error"
)

// Part is one piece of a message: a run of text, a tool call, an attached
// file, a step boundary. Parts of a message sort by ID in the order they were
// made. A part is rewritten in place as it grows (streamed text) or changes
// state (a tool call finishing).
type Part struct {
	ID        ID       `json:"id"`
	MessageID ID       `json:"messageId"`
	SessionID ID       `json:"sessionId"`
	Kind      PartKind `json:"kind"`
	// Text is the text of a text, reasoning, compaction or error part.
	Text string `json:"text,omitempty"`
	// Typed is, on a user's text part whose Text is not what the user
	// typed, what they typed: "/review x" whose Text is the command's
	// template expanded, or a question whose Text has the editor's
	// context ("The user is looking at main.go.") after it. The model
	// reads Text; people are shown Typed (see Shown). "" when Text is
	// what was typed.
	Typed string `json:"typed,omitempty"`
	// Signature is the provider's signature of a reasoning part, sent back
	// with it on the next request where the API asks for that.
	Signature string    `json:"signature,omitempty"`
	Tool      *ToolCall `json:"tool,omitempty"`
	File      *File     `json:"file,omitempty"`
	// Usage and Cost are set on step_finish parts.
	Usage   *Usage    `json:"usage,omitempty"`
	Cost    float64   `json:"cost,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
	// Metadata is free-form JSON for what a part's producer wants kept
	// (e.g. the full diagnostics set after an edit).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Shown is the part's text as people are shown it: Typed when set, else
// Text.
func (p Part) Shown() string {
	if p.Typed != "" {
		return p.Typed
	}
	return p.Text
}

// ToolStatus is where a tool call is in its life.
type ToolStatus string

// The states of a tool call.
const (
	ToolPending   ToolStatus = "pending"
	ToolRunning   ToolStatus = "running"
	ToolCompleted ToolStatus = "completed"
	ToolFailed    ToolStatus = "failed"
)

// ToolKind groups tools for display, as ACP's tool call kinds do.
type ToolKind string

// The kinds of tool.
const (
	ToolKindRead    ToolKind = "read"
	ToolKindEdit    ToolKind = "edit"
	ToolKindDelete  ToolKind = "delete"
	ToolKindMove    ToolKind = "move"
	ToolKindSearch  ToolKind = "search"
	ToolKindExecute ToolKind = "execute"
	ToolKindThink   ToolKind = "think"
	ToolKindFetch   ToolKind = "fetch"
	ToolKindOther   ToolKind = "other"
)

// ToolCall is a tool call the model asked for and what came of it.
type ToolCall struct {
	// CallID is the provider's ID for the call, linking its result to it.
	CallID string          `json:"callId"`
	Name   string          `json:"name"`
	Status ToolStatus      `json:"status"`
	Kind   ToolKind        `json:"kind,omitempty"`
	Title  string          `json:"title,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
	// RawInput is Input byte for byte as the model wrote it, kept when
	// storing Input as JSON would change its bytes (the spacing), because
	// the call goes back to the model in those bytes: prompt caches key on
	// them. Empty when Input is already compact, and for calls stored
	// before darman kept it.
	RawInput string `json:"rawInput,omitempty"`
	// Extra is what the provider sent with the call for it to go back
	// with (Gemini's thought signature), as JSON; usually empty.
	Extra string `json:"extra,omitempty"`
	// Output is what the model is shown; Error is set instead when the call
	// failed.
	Output    string     `json:"output,omitempty"`
	Error     string     `json:"error,omitempty"`
	Locations []Location `json:"locations,omitempty"`
	// Diff is set by tools that change a file.
	Diff *Diff `json:"diff,omitempty"`
	// Terminal is the output of a command, as it streams.
	Terminal string `json:"terminal,omitempty"`
	// Attachments are files (e.g. images) the tool returned.
	Attachments []File          `json:"attachments,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// Location is a place in a file a tool call is about. Line is 1-based; zero
// means the whole file.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// Diff is a change to one file.
type Diff struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// File is an attachment: an image the user pasted, a file a tool returned.
type File struct {
	Name string `json:"name,omitempty"`
	MIME string `json:"mime"`
	// Path is set for a file in the workspace; Data for inline content.
	Path string `json:"path,omitempty"`
	Data []byte `json:"data,omitempty"`
	// Blob is the store's key of content kept beside the part rather than
	// in it (a prompt's image): the part refers to it, the store keeps it
	// once per session. Data is empty then; Size is the blob's length.
	Blob string `json:"blob,omitempty"`
	Size int    `json:"size,omitempty"`
	// Width and Height are an image's size in pixels, when known.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// MessageWithParts is a message together with its parts in order.
type MessageWithParts struct {
	Message Message `json:"message"`
	Parts   []Part  `json:"parts"`
}
