// Package lsp is darman's client side of the Language Server Protocol: the
// subset darman needs to keep a language server's view of a workspace in
// step with the agent's edits and to ask it questions.
//
// Start with Connect, which runs the initialize handshake over any
// io.ReadWriteCloser (a child process's stdin and stdout, or a pipe in
// tests) and declares only what the client really handles: work-done
// progress, versioned publishDiagnostics, pull diagnostics, dynamic
// registration of watched files and of pull diagnostics, and UTF-16, UTF-8
// or UTF-32 positions (Mapper converts). The server's requests to the
// client (configuration, registrations, progress tokens, workspace
// folders, message prompts) are answered on the connection's read
// goroutine, in order with its notifications.
//
// Sync sends a document's text (didOpen, then didChange with a new
// version); Diagnostics waits for the set that belongs to that version.
// The protocol types are small ones of this package's own: only what is
// used is decoded, and every union the specification allows (a diagnostic
// code as a number or a string, a provider as a boolean or an object)
// survives decoding.
package lsp
