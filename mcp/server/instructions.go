package server

// Instructions is the guidance darman gives models at initialize, and
// what `darman mcp --instructions` prints.
func Instructions() string {
	return `darman serves this project's real language servers (gopls, typescript-language-server, pyright, rust-analyzer, clangd, as installed) through tools that take names, not cursor positions.

Some ways they can help:
- Before writing a file, check_source tells what the language server would report for the new text; diagnostics reports what is on disk now.
- lookup_symbol finds declarations by (part of a) name; definition, describe_symbol, find_references and outline then work from a name such as Foo, pkg.Foo or T.M. When a name is ambiguous, giving path picks the declaration in that file.
- package_api lists what a package (a directory) exports in one answer: signatures, doc comments' first sentences, types' exported members.
- rename_symbol shows the edits and a diff; it writes only with apply: true.
- format_source formats a file or text and returns the result without writing.
- explain_diagnostic says what a diagnostic code means, as far as darman and the server can tell.

Answers are short: a lookup of an exact name lists just its declarations, one line each with the signature, the project's own code before tests, dependencies only when asked (scope "all") or named (json.Marshal). Each list stops at its limit; its note says what was left out and how to ask for it (limit, fuzzy, scope, path).

Paths are relative to the project root; paths outside it are refused. A failed call says why in its first word (MCP-SYMBOL-NOT-FOUND lists near matches; MCP-NO-LANGUAGE-SERVER says what to install; MCP-LANGUAGE-SERVER-UNAVAILABLE means the language server runs but cannot load the project, so nothing can be concluded about the code: it quotes the server and says what to do). A "missing" list in a result names the servers whose part of the answer is absent.`
}
