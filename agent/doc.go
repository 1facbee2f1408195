// Package agent holds darman's core vocabulary — sessions, messages, parts,
// tool calls, usage and the events a session publishes — and, in its
// subpackages, the machinery around it: the event bus (agent/bus), the
// session store (agent/store), model providers (agent/llm) and permissions
// (agent/permission).
//
// Nothing under agent/ knows LSP or MCP: editors and MCP are fronts that
// translate to and from these types.
package agent
