package agent

import "time"

// EventKind names what an Event reports. The vocabulary follows ACP's
// session/update so the LSP front, the CLI and the VS Code panel can render
// one stream the same way.
type EventKind string

// The kinds of event.
const (
	// EventUserMessage: the user's prompt was recorded (MessageID, Text,
	// Images).
	EventUserMessage EventKind = "user_message"
	// EventMessageChunk: more answer text (MessageID, PartID, Text is the delta).
	EventMessageChunk EventKind = "agent_message_chunk"
	// EventThoughtChunk: more reasoning text (MessageID, PartID, Text is the delta).
	EventThoughtChunk EventKind = "agent_thought_chunk"
	// EventToolCall: a tool call appeared (Tool, in state pending).
	EventToolCall EventKind = "tool_call"
	// EventToolCallUpdate: a tool call changed state or output (Tool, whole).
	EventToolCallUpdate EventKind = "tool_call_update"
	// EventPlan: the agent's plan changed (Plan, whole).
	EventPlan EventKind = "plan"
	// EventPermission: a permission was asked or answered (Permission).
	EventPermission EventKind = "permission"
	// EventElicitation: an MCP server asked the user for input during a
	// tool call of the turn, or the user answered (Elicitation).
	EventElicitation EventKind = "elicitation"
	// EventUsage: tokens and cost so far (Usage, Cost).
	EventUsage EventKind = "usage"
	// EventState: the session's state changed (State, Reason).
	EventState EventKind = "state"
	// EventRetry: a model call failed and will be retried (Retry).
	EventRetry EventKind = "retry"
	// EventNotice: something the user should know that is neither the
	// model's answer nor a failure of the turn (Text): a hook that failed,
	// a hook's message for the user.
	EventNotice EventKind = "notice"
	// EventNewSession: the user asked for a fresh session (/new) and
	// darman made it (NewSession): a front that shows one session at a
	// time switches to it.
	EventNewSession EventKind = "new_session"
)

// State is where a session is.
type State string

// The states of a session.
const (
	StateIdle           State = "idle"
	StateRunning        State = "running"
	StateRequiresAction State = "requires_action" // waiting for a permission answer
	StateFailed         State = "failed"
)

// Event is one observable change in a session. Only the fields its Kind
// names are set.
type Event struct {
	Kind      EventKind `json:"kind"`
	SessionID ID        `json:"sessionId"`
	MessageID ID        `json:"messageId,omitempty"`
	PartID    ID        `json:"partId,omitempty"`
	// ParentCallID is set on events of a sub-task, naming the task tool call
	// of the parent session they belong under.
	ParentCallID string             `json:"parentCallId,omitempty"`
	Text         string             `json:"text,omitempty"`
	Tool         *ToolCall          `json:"tool,omitempty"`
	Plan         []PlanEntry        `json:"plan,omitempty"`
	Permission   *PermissionUpdate  `json:"permission,omitempty"`
	Elicitation  *ElicitationUpdate `json:"elicitation,omitempty"`
	Usage        *Usage             `json:"usage,omitempty"`
	Cost         float64            `json:"cost,omitempty"`
	// ContextWindow is the model's context window, in tokens, on usage
	// events; zero when unknown.
	ContextWindow int   `json:"contextWindow,omitempty"`
	State         State `json:"state,omitempty"`
	// Reason says why the state is what it is (a failure's cause).
	Reason string     `json:"reason,omitempty"`
	Retry  *RetryInfo `json:"retry,omitempty"`
	// Images are the images stored with a user's message, in order: the
	// File of each of its file parts as the store keeps it, which refers
	// to the session's blob (Blob) and never holds the bytes.
	Images []File `json:"images,omitempty"`
	// NewSession is the session an EventNewSession made.
	NewSession ID `json:"newSession,omitempty"`
}

// PlanEntry is one item of the agent's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`             // pending, in_progress, completed
	Priority string `json:"priority,omitempty"` // high, medium, low
}

// PermissionUpdate reports a permission asked of the human, or its answer.
type PermissionUpdate struct {
	RequestID  string   `json:"requestId"`
	Permission string   `json:"permission"`
	Subjects   []string `json:"subjects,omitempty"`
	Title      string   `json:"title,omitempty"`
	CallID     string   `json:"callId,omitempty"`
	// ChildSessionID is the sub-task's session when a sub-agent asks.
	ChildSessionID ID `json:"childSessionId,omitempty"`
	// Answer is empty while the question is open; then once, always or reject.
	Answer string `json:"answer,omitempty"`
}

// ElicitationUpdate reports an MCP server's request for the user's input
// during a tool call, or its answer. What the server asks for (a form's
// fields, a URL that may carry a one-time token) is not in it: the front
// that asks has it (session.Question), and no event keeps it.
type ElicitationUpdate struct {
	RequestID string `json:"requestId"`
	// Server is the MCP server that asks; Mode is "form" or "url".
	Server  string `json:"server"`
	Mode    string `json:"mode"`
	Message string `json:"message,omitempty"`
	// CallID is the tool call the server asks during.
	CallID string `json:"callId,omitempty"`
	// ChildSessionID is the sub-task's session when its call asks.
	ChildSessionID ID `json:"childSessionId,omitempty"`
	// Action is empty while the question is open; then accept, decline
	// or cancel.
	Action string `json:"action,omitempty"`
}

// RetryInfo says which model call is retried, when and why.
type RetryInfo struct {
	Attempt int           `json:"attempt"`
	Delay   time.Duration `json:"delay"`
	Reason  string        `json:"reason"`
}

// CoalesceEvents merges next into prev when both are text deltas of the same
// part, so a slow subscriber receives fewer, larger chunks. Every other
// event stands alone. It has the signature the event bus expects.
func CoalesceEvents(prev, next Event) (Event, bool) {
	if prev.Kind != next.Kind || prev.PartID != next.PartID || prev.SessionID != next.SessionID {
		return prev, false
	}
	if prev.Kind != EventMessageChunk && prev.Kind != EventThoughtChunk {
		return prev, false
	}
	prev.Text += next.Text
	return prev, true
}
