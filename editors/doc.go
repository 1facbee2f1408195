// Package editors holds darman's editor helpers as packages an editor's
// package manager installs from the repository: nvim/ is a Neovim plugin
// (lua/darman/init.lua, plugin/darman.lua; the helper is nvim/darman.lua)
// and emacs/darman.el an Emacs package (package-vc-install with :lisp-dir
// "editors/emacs"). Its tests install them as a user would and run
// the inline completions (nvim/lua/darman/completion.lua, eglot's
// completion items) against the real darman lsp (completion_test.go); the
// helpers' agent behaviour is tested in server/lsp (editors_test.go).
package editors
