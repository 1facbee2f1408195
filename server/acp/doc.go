// Package acp is darman's agent for Agent Client Protocol clients (Zed,
// JetBrains IDEs, Neovim's CodeCompanion and avante, Emacs agent-shell):
// protocol version 1, newline-delimited JSON-RPC 2.0 on a byte stream,
// usually the stdio of `darman acp`.
//
// Start with New and Server.Serve. The server starts one agent per working
// directory a client opens sessions in (Options.Start, the same wiring as
// darman run and darman lsp) and drives it through Sessions and Store.
// docs/acp.md describes the protocol as built. The connection is
// server/rpc's JSON-RPC engine run with rpc.ACP (newline framing,
// $/cancel_request): handlers are registered in Server.handlers, and
// conn.go holds the thin calls the rest of the package makes to the
// client (notify, call).
//
// # A turn
//
// session/prompt subscribes to the session's events, runs the turn, and
// sends each event as a session/update (message and thought chunks, tool
// calls and their updates with diffs, terminals and output, the plan, usage)
// before it answers with the stop reason. The updates go out in the order
// the session's bus gave them, every one before the answer; text deltas may
// arrive merged (the bus coalesces them for a slow client), nothing else is
// merged or dropped. session/load sends the stored history the same way,
// before its answer. Permission questions the rules
// leave open become session/request_permission, answered according to the
// session's mode first (ask, accept edits, read only).
//
// # The client's side
//
// The turn's context carries its session, so the agent's Workspace reads
// through fs/read_text_file (the editor's unsaved buffers) and writes
// through fs/write_text_file when the client offers them, and bash runs in
// the client's terminal (terminal/*) when it offers one. The MCP servers a
// client names in session/new or session/load are bound for that session
// only (Options.BindMCP) and stop with it.
package acp
