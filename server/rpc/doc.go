// Package rpc is darman's one JSON-RPC engine, for both of its editor
// fronts: a dispatcher on github.com/sourcegraph/jsonrpc2 that follows the
// LSP rules glsp's own server breaks, over one of two framings.
// Options.Protocol picks LSP (Content-Length headers, the initialize →
// shutdown → exit lifecycle, $/cancelRequest) or ACP (one message per
// line, no lifecycle, $/cancel_request); everything else below holds for
// both.
//
// Start with NewConn and Conn.Run: Run reads messages from a stream and
// hands them to the Handlers, and the Conn sends notifications and calls
// to the client.
//
// # Order and concurrency
//
// Notifications run on the read goroutine, one after another, in the order
// they arrived, so a didChange is applied before any request that follows
// it starts. A notification handler must therefore be quick and must not
// wait for the client (a Call inside it would wait for a reply that nobody
// reads); it starts owned background work for anything slow.
//
// Requests run on their own goroutines, concurrently, each with a context
// that ends when the client sends $/cancelRequest for it, when the
// connection ends, or when the server shuts down. A cancelled request is
// answered at once with RequestCancelled (-32800); whatever its handler
// returns later is dropped. initialize and shutdown run on the read
// goroutine, so nothing overtakes them.
//
// # Errors
//
// A handler's error becomes the reply's error: a *jsonrpc2.Error keeps its
// code (see InvalidParams and Errorf), a cancelled request answers -32800,
// and any other error answers RequestFailed (-32803; ACP: InternalError,
// -32603) with its text. A handler that answers a Then leaves its After
// for once the answer is out. A panic
// in a handler answers InternalError (-32603), is logged with its stack, and
// the server carries on. Requests before initialize answer
// ServerNotInitialized (-32002); requests after shutdown answer
// InvalidRequest (-32600); notifications before initialize are dropped,
// except exit. (LSP only: ACP serves every request as it comes.)
//
// # Framing
//
// Content-Length: header names are matched without regard to case, LF-only
// line ends are accepted, and unknown headers are ignored. Newline: blank
// lines are skipped, CRLF is accepted, a last line without its end counts.
//
// A frame that cannot be used — a missing or bad Content-Length, a body
// that is not JSON or not a JSON-RPC message (for ACP, also one without
// "jsonrpc": "2.0") — is answered with a ParseError or InvalidRequest reply
// (with the request's id when it can be read), logged, and skipped; the
// stream then finds the next frame. A message over the size limit
// (DefaultMaxBody, 64 MiB) is read past in small pieces without being
// kept, and answered InvalidRequest with the id and method its first bytes
// show. Only the end of the input or a failed read or write ends the
// connection.
//
// # Server to client
//
// Conn.Call sends a request and waits for the answer, at most
// Options.CallTimeout (CallWait sets its own limit, or none); when it gives
// up it tells the client with $/cancelRequest ($/cancel_request). A reply with an error comes back as a *jsonrpc2.Error,
// so callers can tell MethodNotFound from other failures (IsMethodNotFound).
package rpc
