// Package session runs the agent: a session's turns, each a loop of model
// calls and tool calls, with every change stored as it happens and published
// on the session's event bus.
//
// Start with New and Service.Run. A front describes a turn with a Turn (the
// session, the prompt's parts, the editor's context, a command and its
// arguments, the model, its own tools) and an Events callback, and calls
// Service.Start, which returns once the turn has begun, or Service.Run,
// which waits for its Result (stop reason, the answer's text, usage, cost,
// duration, error). The service subscribes to the session's bus for the
// front and passes it every event of the turn in order, the last one with
// Update.Last set; that event is published only once the session is free,
// so a front may start the next turn on it. Service.Shell runs a
// command's !`cmd` under the session's bash permission. A session runs at
// most one turn at a time: a prompt sent while a turn runs is refused with
// ErrBusy rather than queued, because a queued prompt was written against a conversation that
// will have moved on by the time it runs; the editor shows the running turn
// and offers to cancel it. What a front does between turns (revert, redo,
// fork, delete, a change of agent) runs in Service.Between: refused with
// ErrBusy while a turn runs, and a Start waits for it, so no front keeps
// a lock of its own.
//
// # A turn
//
// The user's message is stored, then, step by step: the history is read back
// from the store and sent to the model with the system prompt and the tools;
// the answer streams in, each delta stored and published; the tool calls the
// model asked for run — read-only ones at the same time, the others one
// after another in the order asked — and their results are stored; and the
// next step sends them back. The turn ends when the model answers without
// calling a tool, at the step limit, on a failure, or when it is cancelled.
//
// The tools a turn offers are Options.Tools, then those Options.ToolSource
// gives for the session (the MCP servers'), asked at the turn's start and
// again before each model call, then task, with the turn's own
// Turn.Tools over them. When the source fails (a required MCP
// server not ready), the turn fails with its error before the user's
// message is stored.
//
// # Commands
//
// A prompt that starts with /name runs a command, the same in every
// front: Service.Commands are the workspace's command files
// (Options.Commands, read again each time) and darman's built-in ones
// (builtin.go: /help, /clear, /compact, /model). A file's template is
// expanded (prompt.Command.Expand) and sent to the model, while the
// message stored and shown is what the user typed (agent.Part.Typed); the
// editor's context (Turn.Context) is added for the model only, too. A
// built-in command runs as a turn of its own without a model call (but
// /compact's summary); its answer is the turn's text, not stored.
//
// # Sub-tasks
//
// With Options.Tasks the model gets the task tool, which runs a sub-agent:
// a child session (Session.ParentID is the parent, its title the task's
// description) with the turn's model and tools but task and todo, or the
// subset the call names. One turn of it runs on the call's prompt, and its
// final answer is the call's result; the result's metadata names the child
// session. The child's events are published on the parent's bus, with
// their own SessionID and ParentCallID set to the task call, so a front
// nests them under that call — and must not take the child's idle or
// failed state for the end of the parent's turn. The child shares the
// parent's permission checker and background jobs, keeps its own record of
// files read, and runs under the task call's context: cancelling the
// parent cancels it. Its usage and cost are added to the parent session
// and to the parent turn's Result; its permission questions carry its
// session as permission.Request.Child.
//
// # Agents
//
// Every turn runs a named agent (agent/agents, Options.Agents): Turn.Agent,
// else the session's current one (agent.Session.Agent; build when unset).
// The agent decides the tools offered (a call of another is refused with a
// result naming the agent's tools), adds its rules to every permission
// check after the configured ones and the grants (permission.Call.Rules),
// adds its prompt to the system prompt, and may set the model, the
// temperature and the step limit. The task tool's agent input names a
// sub-agent; a sub-agent keeps its parent agent's lock, so a sub-task of
// plan cannot edit either.
//
// # Compaction
//
// Before each model call the loop estimates the request's size: the tokens
// the model reported for the last answer (its whole input and its output),
// plus a token per four bytes of what was added since. When that is more
// than the model's context window less its maximum output (from
// llm.Provider.Model), or when the provider refuses a call as too long
// (llm.ErrContextTooLong), the history is made smaller, in two stages:
//
//   - Pruning: the results of tool calls older than the last two user turns
//     are replaced, in the request only, by a note telling the model to run
//     the tool again if it needs the output. The store keeps them. Once a
//     session needed pruning, its following steps prune too, so the
//     request's prefix stays the same from step to step (and in the
//     provider's prompt cache).
//   - Summarizing, when pruning is not enough: one model call, without
//     tools, on a transcript of the history (each entry capped, the oldest
//     left out if it is still too long) asks for the goal, decisions, files
//     touched, what is done and what remains. The answer is stored as a
//     compaction part of a new user message, with the user's latest words
//     kept verbatim beside it, and the history sent from then on starts at
//     the latest compaction message. It is a user message because every API
//     wants the conversation to open with one and the summary stands for
//     what both sides said; transcripts show it as a summary. The messages
//     before it stay in the store.
//
// A call the provider refused is kept on record as an empty assistant
// message that failed, saying that darman compacted and asked again. If the
// request is refused even after summarizing twice, the turn fails. While
// summarizing, the session publishes a running state whose Reason says so.
//
// # Instructions of the directories a turn touches
//
// The workspace root's AGENTS.md is in the system prompt. When a tool call
// completes, the instruction files of the directories between the root and
// each file it touched (its result's locations, and the path in its input;
// see prompt.DirInstructions) that the session has not been given yet are
// added to the end of its output, which is what the model and the store
// see. A session remembers them in memory: after a restart or a compaction
// they are given again.
//
// Because every part is written as it changes, a process that dies mid-turn
// leaves an assistant message with no finish reason, which
// agent.Message.Interrupted reports and the history sent to the model closes
// off cleanly.
package session
