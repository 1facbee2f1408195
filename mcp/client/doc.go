// Package client runs the MCP servers a user configured and offers their
// tools to the agent as tool.Tool values, so the agent never sees MCP.
//
// Start with New and a Definition per server. A Manager holds one binding
// per server: Start connects them all concurrently without blocking the
// caller, Wait blocks until each has settled and returns a *StartupError
// listing every failure, and Tools (the tool.Source the agent uses) returns
// the tools of the bindings that are ready, after waiting for the required
// ones. Status reports each binding's state for doctor and the editor.
//
// Failures are classified (FailureClass) and their text is bounded and
// redacted: header values, environment values and URL credentials never
// appear in a message. An optional binding that fails leaves the others
// working; a required one makes Tools fail with an error naming it.
//
// A stdio server runs in its own process group, recorded in the
// child.Registry, and is stopped with its group. A server that crashes is
// restarted on next use, with a backoff between attempts. A
// tools/list_changed notification builds a new catalog generation off the
// notification goroutine; a call in flight finishes on the connection it
// started on.
//
// A tool reaches the model as {server}_{tool} (see ModelName); every call
// asks the permission "mcp" with that name as the subject, unless the
// server is trusted and the tool says it is read-only.
package client
