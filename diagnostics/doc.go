// Package diagnostics runs the workspace's real language servers behind the
// agent: after an edit it tells whether the code still builds, and it
// answers symbol, reference, rename and format queries for `darman mcp`.
//
// Start with New, which makes a Pool for one workspace root. Nothing runs
// until a file needs a server: Touch sends a file's current content (read
// through a FileReader, so the editor's unsaved buffers count) and
// Diagnostics returns the set the server gives for that version, waiting
// at most a configurable time and marking a late answer Stale. Check wraps
// the two for the edit tools and formats the errors for the model.
//
// One server runs per (language server, root); the root is the nearest
// directory with one of the server's markers (go.mod, package.json, ...).
// The built-in table (gopls, rust-analyzer, typescript-language-server or
// TypeScript 7's tsc --lsp, pyright or basedpyright, clangd) merges with
// the configuration's lsp map. A server that crashes is restarted on its
// next use after a backoff; one that fails to start is marked failed, with
// the reason in Status and through Options.OnStatus, and nothing else is
// affected. One that runs but cannot load the workspace (gopls without
// the go command) answers its queries with a LoadError in its own words,
// not with its empty answers, and is started again on next use after a
// backoff (see health.go). Problems and FormatErrors are what the model
// reads of it all (see format.go). Each server runs in a process group of its own, killed on
// Close, when New's context ends, and (on Linux) when darman dies.
//
// The protocol itself is package lsp.
package diagnostics
