// Package lsp is darman's language server: the agent as LSP, for any
// editor that can start a language server. It is the only package that
// knows LSP; the agent core knows nothing of it. docs/protocol.md is the
// contract it implements.
//
// Start with New and Server.Serve. cmd/darman's `darman lsp` builds the
// Options: Start is called once initialize has named the workspace, and
// builds the agent (session service, store, model) with the server's own
// tool.Workspace (open buffers first; writes through the editor or, never
// over unsaved work, to the disk) and permission.Asker (darman's request,
// showMessageRequest, or code actions).
//
// The base protocol — framing, dispatch, cancellation, lifecycle — is in
// server/rpc; positions and incremental edits of documents in server/lsp/text;
// the open buffers (by URI and path) and file: URIs in
// server/lsp/internal/buffer; the agent's tool.Workspace, whose edits go
// through the editor, in server/lsp/internal/edit; inline completions in
// server/lsp/internal/completion; darman/sessionUpdate's updates in
// server/lsp/internal/update; a turn's work-done progress in
// server/lsp/internal/progress. Here there is one file per feature:
// initialize.go, documents.go, commands.go, codeaction.go, permission.go,
// transcript.go, config.go; turns.go keeps the turns' books (which runs,
// its progress, its questions; revert, fork and delete run between turns
// in the core's Sessions.Between) and relay.go passes their events on.
//
// # Turns and their events
//
// A command that starts a turn answers at once with the turn's id; the turn
// runs on a goroutine the server owns. Each session the client uses has one
// relay, a goroutine subscribed to the session's event bus, which passes
// the events on in the order the session published them: as
// darman/sessionUpdate notifications to a client that opted in, otherwise
// as the fallbacks (work-done progress, the Markdown transcript, an error
// message). The bus merges text deltas when the client reads slower than
// the model writes; no other event is merged or dropped. The server lets
// go of the turn before its last event is passed on (the core let go of
// the session before it published it), so a client that prompts as soon
// as it sees the end is never told the session is busy.
//
// Stopping — shutdown, exit, or the end of the input — cancels the turns
// (the session records them as cancelled), waits for every goroutine the
// server started, and closes the agent.
package lsp
