// Package client runs the MCP servers a user configured and offers their
// tools to the agent as tool.Tool values, so the agent never sees MCP.
//
// Start with New and a Definition per server. A Manager holds one binding
// per server: Start connects them all concurrently without blocking the
// caller, Wait blocks until each has settled and returns a *StartupError
// listing every failure, and Tools (the tool.Source the agent uses) returns
// the tools of the bindings that are ready, after waiting for the required
// ones. Status reports each binding's state for doctor and the editor, and
// Subscribe reports each change as it happens. Source(Audience) is what a
// session service asks at every turn (session.Options.ToolSource), so a
// server ready later or a new catalog reaches the next turn.
//
// Scope: a binding is the workspace's (shared by every session of the
// process) or, with Definition.Session, one session's own (servers an ACP
// client passed to session/new). ToolsFor and Source take an Audience, so a
// session (and its sub-agents, through Audience.Parent) sees its own
// bindings and the workspace bindings whose Definition.Visible admits the
// session or its agent (darman's config calls that list a server's
// agents: "main" or "task"). Retire takes a manager out of new turns
// while the calls in flight finish on it.
//
// Transports: stdio (Command), streamable HTTP (URL) and the legacy
// HTTP+SSE transport (URL with SSE). The go-sdk client probes
// server/discover and falls back to initialize; a server that exits on the
// probe (go-sdk #1177) is restarted straight to initialize, and
// Options.ProtocolCache remembers across runs which servers speak only
// initialize so their next start skips the probe.
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
// server is trusted and the tool says it is read-only. Cancelling a call
// sends notifications/cancelled; progress notifications reach
// tool.Env.Progress; images are saved under Options.FilesDir.
//
// Servers may ask darman for things. Elicitation (a form, or a URL to
// open) goes to a human through Options.Gate (nil: not advertised;
// DeclineGate when nobody is there). Sampling is offered only to a server
// whose Definition has a SamplingMaxTokens budget, and is served by
// Options.Sampler (ModelSampler runs darman's own model), each request
// capped and its tokens charged to the server (Status.Sampling) and to the
// session whose tool call it serves, through tool.Env.Charge: the call's
// own when the request comes within it (the multi-round-trip protocol),
// else the one session with calls in flight on that server (none when
// several sessions have).
//
// Identity: BindingIdentity digests what a binding is (definition without
// secrets, capabilities, filter, limits, catalog and each exposed tool's
// schemas). A session records the identities it ran with
// (Options.Sessions, or Manager.Resume), and a resumed session hears what
// changed (Drift).
package client
