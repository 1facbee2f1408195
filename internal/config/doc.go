// Package config loads darman's configuration: JSON with comments and
// trailing commas, read from several layers and merged into one [Config].
//
// Start with [Load]. It applies, in order (later wins): the built-in
// defaults ([Default]), the user file, the project files found by walking up
// from the workspace root, the DARMAN_CONFIG file, DARMAN_CONFIG_CONTENT, the
// single-value DARMAN_* environment variables, and finally [Flags]. Objects
// merge key by key; arrays and scalars are replaced; permission rules are
// appended, so a later layer's rules win (the last matching rule wins).
//
// Every string value may use ${env:NAME} and ${file:path} substitutions
// ($${ writes a literal ${).
//
// Besides darman's own files, Load reads the MCP servers of other tools'
// files (Claude Code's .mcp.json and ~/.claude.json, VS Code's
// .vscode/mcp.json) into MCPServers, below darman's own by name, each with
// its Origin; a foreign file that does not parse is a warning.
//
// Problems are reported as an [*Error] listing every [Problem] found: the
// file, the key path (model, permission.bash["git *"], lsp.go.command[0])
// and what was expected. [Schema] returns the JSON Schema that editors use
// through "$schema"; docs/darman.schema.json is a copy of it that a test
// keeps current.
//
// The package imports nothing of darman's but internal/textdist and
// internal/lazyre, so every other package may use it.
package config
