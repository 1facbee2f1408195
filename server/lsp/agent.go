package lsp

import (
	"context"
	"encoding/json"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// Setup is what the server knows when it starts the agent: the workspace
// named by initialize, and the server's own views of the editor that the
// agent must use.
type Setup struct {
	// Root is the workspace root: the first workspace folder, else the
	// rootUri, else Options.Root.
	Root string
	// Folders are every workspace folder, Root first.
	Folders []string
	// Workspace reads the editor's unsaved buffers and writes through the
	// editor; the session service must use it for its tools.
	Workspace tool.Workspace
	// Asker asks the user through the editor; it finds the turn a
	// question belongs to by the request's Session.
	Asker permission.Asker
	// Elicitor takes MCP servers' elicitations to the editor's user (see
	// the Elicitor type's doc in mcp_elicit.go).
	Elicitor permission.Elicitor
	// Notices is where the agent sends the state changes of the MCP
	// servers and of the language servers, for the editor (see
	// notices).
	Notices func(level, text string)
	// Agents are the workspace's named agents as initialize listed them
	// (Options.Agents); the session service must run these, so that a
	// file change the server notices is the service's too.
	Agents *agents.Catalog
	// EditorTrusted is the editor's own trust of the folder
	// (initializationOptions.workspaceTrusted, then darman.trust with
	// {"editor": true}); nil when the editor says nothing, and darman's
	// records decide.
	EditorTrusted *bool
	// Settings are the client's darman settings
	// (initializationOptions.darman, or the darman section of
	// workspace/didChangeConfiguration), same keys as the config file;
	// nil when the client sent none.
	Settings json.RawMessage
}

// Sessions runs turns. *session.Service implements it.
type Sessions interface {
	Create(ctx context.Context, opts session.CreateOptions) (agent.Session, error)
	// Start begins a turn and returns while it runs; its events reach
	// the server through tn.Events.
	Start(ctx context.Context, tn session.Turn) (*session.Running, error)
	Cancel(id agent.ID) bool
	// Busy says whether the session runs a turn now (what Start refuses
	// with session.ErrBusy).
	Busy(id agent.ID) bool
	// Between runs do between the session's turns: session.ErrBusy while
	// one runs; no turn starts while do runs. AfterTurn cancels the
	// running turn first and waits for its end (session.Service).
	Between(ctx context.Context, id agent.ID, do func() error) error
	AfterTurn(ctx context.Context, id agent.ID, do func() error) error
	// Rename sets a session's title.
	Rename(ctx context.Context, id agent.ID, title string) error
	// Apply writes text as a file's content for the session, as an edit
	// of its last turn, asking its edit permission first
	// (darman.turn.apply).
	Apply(ctx context.Context, id agent.ID, path, text string) (session.Applied, error)
	// Commands are the commands a prompt runs by /name, the built-in ones
	// and the workspace's files read again now: darman.command.list and
	// .run ask, and code actions offer the ones last found.
	Commands() *prompt.Commands
}

// Store reads and deletes stored sessions. *store.Store implements it.
type Store interface {
	ListSessions(ctx context.Context, opts store.ListOptions) ([]agent.Session, error)
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error)
	// Page is a page of a session's history (darman.session.load).
	Page(ctx context.Context, id agent.ID, opts store.PageOptions) (store.Page, error)
	DeleteSession(ctx context.Context, id agent.ID) error
	// Fork copies the conversation before a user message into a new
	// session (darman.session.fork) and returns it with that message's
	// text.
	Fork(ctx context.Context, id, at agent.ID) (agent.Session, string, error)
	// Blob reads what a part refers to (a prompt's image,
	// darman.session.image).
	Blob(ctx context.Context, session agent.ID, key string) ([]byte, error)
	// Checkpoints are a session's turns' checkpoints, in turn order
	// (darman.session.load says which turns changed files).
	Checkpoints(ctx context.Context, session agent.ID) ([]agent.Checkpoint, error)
}

// Runtime is the workspace runtime as the server asks it, beside its
// sessions and store: cmd/darman's workspace implements it.
type Runtime interface {
	// Model picks the "provider/model-id" of a session the client
	// creates without naming one.
	Model(ctx context.Context) (string, error)
	// Status describes the agent for darman.status (provider, MCP
	// bindings, language servers, …); nil adds nothing to what the server
	// knows.
	Status(ctx context.Context) map[string]any
	// Deleted removes what others keep of a session that
	// darman.session.delete removed from the store.
	Deleted(id agent.ID) error
	// Definitions answers definition lookups from the workspace's
	// language servers, for the inline completions' context; nil means
	// none.
	Definitions() complete.Definer
	// Close releases the runtime once the server's turns have ended.
	Close() error
}

// Agent is the agent core as the server drives it; Options.Start builds
// it. The server owns it from then on and closes its Runtime when it
// stops.
type Agent struct {
	Sessions Sessions
	Store    Store
	// Runtime is the rest of the workspace runtime the server uses.
	// Required.
	Runtime Runtime
	// PromptActions are the selection's code actions from the configuration
	// file; nil means DefaultPromptActions. The editor's own settings win.
	PromptActions []PromptAction
	// NoTranscript turns the transcript fallback off, from the
	// configuration file ("transcript": false). The editor's settings win.
	NoTranscript bool
	// Checkpoints reverts and redoes turns (darman.turn.revert,
	// darman.turn.redo); nil when checkpoints are off.
	Checkpoints Checkpoints
	// Trust is what was made of the folder's own configuration, said to
	// the user when the agent starts (see trust.go).
	Trust TrustState
}
