// Package server is `darman mcp`: it serves the workspace's real language
// servers (the diagnostics pool) to other agents over the Model Context
// Protocol, through tools addressed by name rather than by cursor position.
//
// Start with New, which takes a project Root (see DetectRoot) and builds
// the pool; Server.Run serves one client over a transport (stdio in
// `darman mcp`), Server.HTTPHandler serves streamable HTTP on loopback.
// Each tool lives in a file of its own (tool_*.go).
//
// Contracts every tool keeps:
//   - every path argument is resolved against the root, symlinks
//     included, and refused with MCP-PATH-OUTSIDE-PROJECT when it lands
//     outside;
//   - results carry schemaVersion "1.0" as structured content, with a
//     readable text rendering as the content; find_references answers in
//     text only, since its text is its data (see textOnly);
//   - diagnostics are data; a tool's failure is an isError result whose
//     text starts with its code (MCP-INVALID-INPUT, MCP-PATH-OUTSIDE-PROJECT,
//     MCP-NO-LANGUAGE-SERVER, MCP-LANGUAGE-SERVER-UNAVAILABLE,
//     MCP-SYMBOL-NOT-FOUND, MCP-TIMEOUT, MCP-INTERNAL, ...), and a
//     language server that runs but cannot load the project is such a
//     failure (or, when other servers answered, the result's "missing"
//     part), never an empty answer;
//   - a panic in a handler answers JSON-RPC -32603 and the server keeps
//     serving.
//
// This is the only package that serves MCP; agent/... never imports it.
package server
