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
// The protocol types are glsp's (github.com/tliron/glsp/protocol_3_16),
// the LSP front's too, named in protocol.go. Where glsp's 3.16 types lack
// a 3.17 shape (pull diagnostics, a workspace symbol without a range,
// the position encoding) or decode one wrongly (a diagnostic's code, a
// MarkedString hover, a rename's file operations), this package keeps a
// small type of its own: only what is used is decoded, and every union
// the specification allows survives decoding. URIs a server sends are
// read in darman's spelling (DocumentURI), glsp's Location's too.
package lsp
