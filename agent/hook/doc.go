// Package hook runs the user's hooks: shell commands configured on the
// agent's events, compatible with Claude Code's (the same event names,
// matchers, JSON on standard input and output contract), so that hooks
// written for Claude Code run in darman unchanged.
//
// Start with New, which takes the configured hooks (darman's own and
// those of Claude Code's settings files, as internal/config loads them)
// and how a command line becomes a process (the bash tool's way, in the
// OS sandbox); then Engine.Run for one event. The session service calls
// Run at the points of a turn each event names (see Event) and reads the
// Result: whether to block, the reason, context for the model, messages
// and failures for the user.
//
// Each matching hook runs as its own process group, the event's JSON on
// its standard input, in the workspace root, with CLAUDE_PROJECT_DIR and
// DARMAN_PROJECT_DIR set and no secrets in its environment; the hooks of
// one event run at the same time, an identical command once. A hook is
// stopped, with everything it started, at its timeout (60 s unless it sets
// one) or when the turn is cancelled. Exit code 0 proceeds: standard
// output that is a JSON object is read as Claude Code's JSON output, and
// plain output is context for the model where the event allows it
// (UserPromptSubmit, SessionStart). Exit code 2 blocks where the event
// can be blocked, with standard error as the reason. Any other ending (an
// exit code, a signal, a timeout, a failure to start) is a failure the
// user is shown; it never blocks and never ends the turn.
//
// Tool events match darman's tool names and Claude Code's (ToolName):
// a matcher of Bash and one of bash both match darman's bash tool, and
// the hook reads Claude's name in tool_name and Claude's keys in
// tool_input (file_path, old_string, ...) beside darman's own.
package hook
