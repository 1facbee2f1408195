// Package rpc is the base protocol of darman's language server: the
// Content-Length framing and a dispatcher on github.com/sourcegraph/jsonrpc2
// that follows the LSP rules glsp's own server breaks.
//
// Start with Serve: it reads messages from a stream and hands them to the
// Handlers, and its Conn sends notifications and calls to the client.
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
// and any other error answers RequestFailed (-32803) with its text. A panic
// in a handler answers InternalError (-32603), is logged with its stack, and
// the server carries on. Requests before initialize answer
// ServerNotInitialized (-32002); requests after shutdown answer
// InvalidRequest (-32600); notifications before initialize are dropped,
// except exit.
//
// # Framing
//
// Header names are matched without regard to case, LF-only line ends are
// accepted, and unknown headers are ignored. A frame that cannot be used —
// a missing or bad Content-Length, a body that is not JSON or not a
// JSON-RPC message, a body over the size limit — is answered with a
// ParseError or InvalidRequest reply (with the request's id when it can be
// read), logged, and skipped; the stream then finds the next frame. Only
// the end of the input or a failed read or write ends the connection.
//
// # Server to client
//
// Conn.Call sends a request and waits for the answer, at most
// Options.CallTimeout; when it gives up it tells the client with
// $/cancelRequest. A reply with an error comes back as a *jsonrpc2.Error,
// so callers can tell MethodNotFound from other failures (IsMethodNotFound).
package rpc
