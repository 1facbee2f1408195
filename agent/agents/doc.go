// Package agents is darman's named agents: the built-in build and plan,
// the Markdown files users already have (.darman/agent/*.md,
// ~/.config/darman/agent/*.md, and Claude Code's .claude/agents/*.md and
// ~/.claude/agents/*.md, read as Claude Code writes them), and the
// configuration's "agents" key.
//
// Start with Load, which gives a Catalog: List for the fronts (initialize,
// ACP modes, the picker), Get for a turn (session.Turn.Agent) and the task
// tool, Refresh to notice files that changed. An Agent says what a turn
// run by it may do: its tools (Allows), its permission rules over the
// configured ones (Rules), its model, temperature and step limit, and the
// instructions added to the system prompt.
//
// Precedence, for a name defined more than once: the configuration over
// files; darman's files over Claude's; the project's over the user's; a
// built-in agent is the base a file or the configuration changes. The
// plan agent's lock (no edits, bash only for the read-only commands) is
// applied after every rule, so no configuration makes it write.
package agents
