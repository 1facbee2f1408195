// Package session runs the agent: a session's turns, each a loop of model
// calls and tool calls, with every change stored as it happens and published
// on the session's event bus.
//
// Start with New and Service.Prompt. A session runs at most one turn at a
// time: a prompt sent while a turn runs is refused with ErrBusy rather than
// queued, because a queued prompt was written against a conversation that
// will have moved on by the time it runs; the editor shows the running turn
// and offers to cancel it.
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
// Because every part is written as it changes, a process that dies mid-turn
// leaves an assistant message with no finish reason, which
// agent.Message.Interrupted reports and the history sent to the model closes
// off cleanly.
package session
