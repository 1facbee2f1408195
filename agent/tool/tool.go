// Package tool defines what a tool is to the agent — something the model may
// call, with a typed input, a timeout and a capped output — and holds the
// built-in tools, one file each, each with its model-facing description in an
// embedded Markdown file.
//
// Start with Builtins: read, write, edit, multiedit, apply_patch, glob, grep,
// list, bash, bash_output, bash_kill, todo, webfetch, and skill when there are
// skills.
// A call runs with an Env the agent loop makes: the Workspace (Disk for the
// headless front), Permit (a permission.Checker), and the session's FileTimes
// and Jobs, which the loop creates per session; at the session's end it
// closes the Jobs and calls RemoveOutputs.
//
// Every tool asks Permit before it acts: read, glob, grep and list with the
// absolute path; edit, multiedit, write and apply_patch with the edit
// permission, the path(s) as subjects and every file's diff in the call's
// Diffs; bash with the command line and its directory; webfetch with the
// URL. The Checker adds
// external_directory to a path permission for a path outside the root, so
// tools do not ask it again; bash asks it for a workdir outside the root.
// Edits of files outside the root are asked before the file is read, so a
// failed edit cannot show the model a file it may not touch.
//
// Outputs are capped; what was cut is kept in a file under OutputDir, which
// read opens without asking, and the result says how to get at it.
//
// A tool's failure that the model can act on (a file that does not exist,
// an edit that does not match, a command that exits 1, a permission the
// human refused) is a Result with IsError set, not a Go error. A Go error
// from Run means the environment broke (the workspace is gone, the context
// was cancelled) and ends the turn.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
)

// Tool is one thing the model may do. Implementations are stateless or
// guard their own state: one Tool value serves every session, concurrently.
type Tool interface {
	Info() Info
	// Run executes one call. input is the model's arguments, unvalidated.
	// Run must return promptly once ctx is done.
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Info describes a tool to the model and to the agent loop.
type Info struct {
	Name string
	// Description is what the model reads: when to use the tool and how.
	Description string
	// Schema is the JSON Schema of the input, an object.
	Schema json.RawMessage
	Kind   agent.ToolKind
	// ReadOnly tools change nothing, so the loop may run several at once.
	ReadOnly bool
	// Timeout bounds one call; zero means the loop's default.
	Timeout time.Duration
}

// Result is what a call produced.
type Result struct {
	// Output is what the model reads, already capped by the tool.
	Output string
	// IsError says Output describes a failure the model should handle.
	IsError bool
	// Title is a short summary for people ("main.go:10-40", "go test ./...").
	Title       string
	Locations   []agent.Location
	Diff        *agent.Diff
	Attachments []agent.File
	// Metadata is kept with the call in the store (the full output when
	// Output was truncated, exit codes, match counts, ...).
	Metadata json.RawMessage
}

// Env is what a call may use besides its input. The agent loop makes one per
// call; every func field is safe for concurrent use.
type Env struct {
	SessionID agent.ID
	// CallID is the provider's ID of this call.
	CallID    string
	Workspace Workspace
	// Permit decides a permission before the tool acts. A nil error means go
	// ahead; a *permission.DeniedError is turned into the Result (see
	// Denied); any other error ends the call as an environment failure.
	// The time Permit waits for a person's answer is not the call's: the
	// call's timeout stops meanwhile (see Clock).
	Permit func(ctx context.Context, call permission.Call) error
	// Pause stops the call's timeout while the call waits for a person by
	// another way than Permit (an MCP server's elicitation during the call)
	// and returns the func that starts it again; nil means the call has no
	// timeout to stop.
	Pause func() (resume func())
	// Elicit asks the user an MCP server's request for input made during
	// the call, as a question on the turn's stream (session.Question), so
	// the user sees it after the call it is about; nil when the turn's
	// questions are not on its stream (the server's elicitor asks it
	// then). Its errors are permission.Elicitor's.
	Elicit func(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error)
	// Progress streams partial output (a command's terminal text, whole so
	// far) to the people watching, as an update of the call; "" says the
	// command started, with no output yet. Nil drops it.
	Progress func(output string)
	// Plan publishes the agent's plan; used by the todo tool.
	Plan func(entries []agent.PlanEntry)
	// Charge adds model use made on the session's behalf during the call
	// (an MCP server's sampling request) to the session's usage; nil
	// charges nothing.
	Charge func(u agent.Usage, cost float64)
	// Files remembers what this session read, for write-after-read checks;
	// nil turns those checks off.
	Files *FileTimes
	// Jobs holds the session's background commands (bash with
	// run_in_background, and what a command leaves running when it exits);
	// the loop makes one per session and closes it when the session ends.
	// nil means the session has no background jobs: such commands are
	// refused, and leftovers are stopped when their command exits.
	Jobs   *Jobs
	Logger *slog.Logger
}

// ErrUnsaved is what Workspace.WriteFile returns, wrapped, when the editor
// holds unsaved changes to the file: writing would clobber them, so the tool
// tells the model to have the user save or discard them first.
var ErrUnsaved = errors.New("the file has unsaved changes in the editor")

// Denied turns a refused permission into the call's result: a
// *permission.DeniedError anywhere in err's chain becomes an error Result
// whose Output is the refusal, written for the model. ok is false for any
// other error, which is a failure of the environment.
func Denied(err error) (res Result, ok bool) {
	var d *permission.DeniedError
	if !errors.As(err, &d) {
		return Result{}, false
	}
	return Result{Output: d.Error(), IsError: true, Title: "permission denied"}, true
}

// Workspace is the files the agent works on. Paths given to its methods are
// absolute and clean. The headless front reads and
// writes the disk; the LSP front reads the editor's unsaved buffers and
// routes writes through the editor, so an edit lands where the user sees it.
type Workspace interface {
	// Root is the workspace's absolute root directory.
	Root() string
	// ReadFile returns a file's content: the editor's unsaved buffer when
	// the file is open there, else the disk's. Errors wrap fs.ErrNotExist
	// for a missing file.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces a file's content, creating it (and its directory)
	// when needed and keeping the mode of an existing file. When it returns,
	// the new content is on disk, so a following command sees it, unless
	// the workspace is a Buffers that left it in the editor's buffer.
	// It fails, without writing, when the editor holds unsaved changes to
	// the file (see ErrUnsaved).
	WriteFile(ctx context.Context, path string, content []byte) error
}

// Buffers is a Workspace that may leave a write in the editor's buffer,
// not saved (an editor that applies edits without saving them, such as
// Helix): the user sees it there and saves it. InBuffer reports whether
// path holds such a change now; the edit tools then tell the model that
// commands see it only once the user saves.
type Buffers interface {
	InBuffer(path string) bool
}

// Remover is a Workspace that deletes files itself (the LSP front, through
// the editor). apply_patch uses it when the workspace has it, and removes
// the file from the disk otherwise.
type Remover interface {
	// Remove deletes a file; like WriteFile it fails with ErrUnsaved when
	// the editor holds unsaved changes to it.
	Remove(ctx context.Context, path string) error
}

// Source offers tools from elsewhere, such as MCP servers.
type Source interface {
	// Tools returns the tools available now; it may change between calls.
	Tools(ctx context.Context) ([]Tool, error)
}

// SourceFunc is a Source made of a function.
type SourceFunc func(ctx context.Context) ([]Tool, error)

// Tools calls f.
func (f SourceFunc) Tools(ctx context.Context) ([]Tool, error) { return f(ctx) }
