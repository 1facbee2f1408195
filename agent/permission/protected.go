package permission

import (
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ProtectedPath is asked before any tool writes a file that makes another
// program run something later. Its subject is the path (relative to the
// workspace root, or absolute outside it). It is asked even when edit is
// allowed; only a rule naming protected_path itself can allow it ("*"
// does not), and an "always" answer covers that one path. Reading a
// protected file is an ordinary read.
//
// The rule that decides what is on the list: a file is protected when a
// program on the user's machine other than darman reads it as an
// instruction to run something (a command, a script, a binary it fetches,
// a server it starts), or to let something run without asking, without
// the user asking for that file's program to run: when git runs (any git
// command, darman's own git status included), when an editor or another
// agent opens the folder, when a shell enters the directory, when a tool
// starts in it (a toolchain resolving its version, a REPL reading its rc
// file). Git's directory is git's alone: nothing in it is the model's to
// write. Files the user runs on purpose as the project's own code
// (Makefile, package.json scripts, go.mod, build.rs, CI workflows, which
// run elsewhere) are not protected: the user runs them knowingly, and
// they show in every diff. Instruction files an agent only reads as text
// (AGENTS.md, CLAUDE.md) are not protected either; the tools and
// permissions another agent's directory grants are. A new tool's file is
// covered when it fits that rule; protectedList below names each file
// with the reason.
//
// A protected_path rule whose action is ask or deny also adds its pattern
// to the list: {"protected_path": {"deploy/**": "ask"}}.
const ProtectedPath = "protected_path"

// protectedPattern is one entry of the built-in list.
type protectedPattern struct {
	pattern, why string
	// gitWrites marks an entry git itself writes on every commit: the
	// permission checks ask about it, the sandbox cannot keep it
	// read-only (ProtectedPaths leaves it out).
	gitWrites bool
}

var (
	gitConfigWhy   = "git reads it on every command, and its settings (core.fsmonitor, core.hooksPath, core.pager, aliases, include.path) run programs the next time you use git"
	gitHooksWhy    = "git runs the hooks in it on commit, checkout, merge and push"
	gitDirWhy      = "it points git at another git directory, whose configuration and hooks then run programs the next time you use git"
	gitInfoWhy     = "git reads it on every command (attributes choose the filter and diff programs git runs)"
	gitOwnWhy      = "it is git's own directory: git reads what is in it as its configuration, hooks and objects, and only git writes there"
	claudeWhy      = "Claude Code runs the hooks and MCP servers it configures, and runs the tools it allows without asking"
	agentDirWhy    = "the agent that reads this directory starts the MCP servers, hooks and commands it configures, and runs the tools it allows without asking"
	editorDirWhy   = "the editor runs the tasks, language servers, debuggers and terminal profiles it configures, some when the folder opens"
	gitHookToolWhy = "a git hook manager runs the commands it lists on commit and push"
	miseWhy        = "mise runs the hooks, tasks and environment scripts it configures when your shell enters the directory"
	toolchainWhy   = "the toolchain fetches and runs the programs it names whenever it starts there (editors start it when the folder opens)"
	replWhy        = "the program reads it as commands when it starts in that directory"
)

// protectedList is the built-in list. Patterns are relative to the
// workspace root; "**/" ones apply in every directory, for programs that
// read the file wherever they start (or in any parent of it).
var protectedList = []protectedPattern{
	// Git: its configuration and hooks, and every file that points it at
	// others (a gitdir: file, commondir, alternates) or chooses programs
	// (info/attributes). The first entries name the workspace's own git
	// directory for the sandbox; the last ones cover every git directory
	// and .git file at any depth (a nested repository is git's too).
	{pattern: ".git/hooks/**", why: gitHooksWhy},
	{pattern: ".git/config", why: gitConfigWhy},
	{pattern: ".git/config.worktree", why: gitConfigWhy},
	{pattern: ".git/commondir", why: gitDirWhy},
	{pattern: ".git/objects/info/alternates", why: "git reads objects from the directories it names, and a repository there brings its own configuration"},
	{pattern: ".git/info/**", why: gitInfoWhy},
	{pattern: ".git/worktrees/*/config.worktree", why: gitConfigWhy},
	{pattern: ".git/worktrees/*/commondir", why: gitDirWhy},
	{pattern: ".git/modules/**/config", why: gitConfigWhy},
	{pattern: ".git/modules/**/hooks/**", why: gitHooksWhy},
	{pattern: "**/.git", why: gitDirWhy, gitWrites: true},
	{pattern: "**/.git/**", why: gitOwnWhy, gitWrites: true},
	{pattern: "**/.hg/hgrc", why: "Mercurial runs the hooks and extensions it configures"},
	{pattern: "**/.jj/repo/config.toml", why: "jj runs the pager, diff and fix tools it configures"},
	// Git hook managers.
	{pattern: "**/.husky/**", why: gitHookToolWhy},
	{pattern: ".pre-commit-config.yaml", why: gitHookToolWhy},
	{pattern: "lefthook*.yml", why: gitHookToolWhy},
	{pattern: "lefthook*.yaml", why: gitHookToolWhy},
	{pattern: ".lefthook*.yml", why: gitHookToolWhy},
	{pattern: ".lefthook*.yaml", why: gitHookToolWhy},
	{pattern: ".lefthook/**", why: gitHookToolWhy},
	{pattern: ".lefthook-local/**", why: gitHookToolWhy},
	{pattern: ".overcommit.yml", why: gitHookToolWhy},
	// darman.
	{pattern: "darman.json", why: "it is darman's configuration: permission rules, MCP servers and language servers (which are commands)"},
	{pattern: ".darman/**", why: "it holds darman's configuration, commands (whose !`…` lines run in a shell) and skills"},
	// Other agents: their settings, MCP servers, hooks, commands, skills,
	// sub-agents and plugins.
	{pattern: ".claude/settings.json", why: claudeWhy},
	{pattern: ".claude/settings.local.json", why: claudeWhy},
	{pattern: ".claude/commands/**", why: "agents run the shell lines of these commands"},
	{pattern: ".claude/agents/**", why: "agents load these as sub-agents with their own tools and permissions"},
	{pattern: ".claude/hooks/**", why: "Claude Code runs these hooks"},
	{pattern: ".claude/skills/**", why: "agents load these skills, with their scripts and the tools they allow without asking"},
	{pattern: ".claude/**", why: claudeWhy},
	{pattern: ".mcp.json", why: "agents start the MCP servers it lists, which are commands"},
	{pattern: ".cursor/**", why: agentDirWhy},
	{pattern: ".gemini/**", why: agentDirWhy},
	{pattern: ".codex/**", why: agentDirWhy},
	{pattern: ".opencode/**", why: "opencode runs its plugins (code) and starts the MCP servers and commands it configures"},
	{pattern: "opencode.json", why: agentDirWhy},
	{pattern: "opencode.jsonc", why: agentDirWhy},
	{pattern: ".qwen/**", why: agentDirWhy},
	{pattern: ".continue/**", why: agentDirWhy},
	{pattern: ".windsurf/**", why: agentDirWhy},
	{pattern: ".roo/**", why: agentDirWhy},
	{pattern: ".kilocode/**", why: agentDirWhy},
	{pattern: ".clinerules", why: agentDirWhy},
	{pattern: ".clinerules/**", why: agentDirWhy},
	{pattern: ".amazonq/**", why: agentDirWhy},
	{pattern: ".kiro/**", why: agentDirWhy},
	{pattern: ".openhands/**", why: "OpenHands runs its setup script when a session starts"},
	{pattern: "crush.json", why: agentDirWhy},
	{pattern: ".crush.json", why: agentDirWhy},
	{pattern: ".aider.conf.yml", why: "aider runs the lint and test commands it names after each change"},
	// Editors and dev containers.
	{pattern: ".vscode/mcp.json", why: "VS Code starts the MCP servers it lists, which are commands"},
	{pattern: ".vscode/settings.json", why: "VS Code and its extensions run programs it names (terminal profiles, linters, formatters)"},
	{pattern: ".vscode/tasks.json", why: "VS Code runs its tasks, some when the folder opens"},
	{pattern: ".vscode/launch.json", why: "VS Code runs the programs it launches"},
	{pattern: ".vscode/**", why: editorDirWhy},
	{pattern: "**/*.code-workspace", why: "VS Code reads its settings, tasks and launch configurations as the folder's own"},
	{pattern: ".idea/**", why: editorDirWhy},
	{pattern: ".zed/**", why: editorDirWhy},
	{pattern: ".helix/**", why: "Helix starts the language servers it configures"},
	{pattern: ".theia/**", why: editorDirWhy},
	{pattern: ".fleet/**", why: editorDirWhy},
	{pattern: "**/.nvim.lua", why: "Neovim runs it as code when it starts there ('exrc')"},
	{pattern: "**/.nvimrc", why: "Neovim and Vim run it as commands when they start there ('exrc')"},
	{pattern: "**/.exrc", why: "Neovim and Vim run it as commands when they start there ('exrc')"},
	{pattern: "**/.dir-locals.el", why: "Emacs evaluates what it sets for the files below it"},
	{pattern: "**/.dir-locals-2.el", why: "Emacs evaluates what it sets for the files below it"},
	{pattern: ".devcontainer/**", why: "dev container tools build the image and run the commands it configures (postCreateCommand, initializeCommand on the host)"},
	{pattern: ".devcontainer.json", why: "dev container tools build the image and run the commands it configures (postCreateCommand, initializeCommand on the host)"},
	// Shells, package managers and toolchains.
	{pattern: "**/.envrc", why: "direnv runs it in your shell when you enter the directory"},
	{pattern: "**/mise.toml", why: miseWhy},
	{pattern: "**/.mise.toml", why: miseWhy},
	{pattern: "**/mise.local.toml", why: miseWhy},
	{pattern: "**/.mise.local.toml", why: miseWhy},
	{pattern: "**/.mise/**", why: miseWhy},
	{pattern: "**/.config/mise.toml", why: miseWhy},
	{pattern: "**/.config/mise/**", why: miseWhy},
	{pattern: "**/.npmrc", why: "npm reads it on every command; it can point scripts, the shell and the registry elsewhere"},
	{pattern: "**/.yarnrc", why: "yarn runs the program its yarn-path names"},
	{pattern: "**/.yarnrc.yml", why: "yarn runs the program its yarnPath names"},
	{pattern: "**/.cargo/config.toml", why: "cargo runs the wrappers, runners and aliases it configures on every command"},
	{pattern: "**/.cargo/config", why: "cargo runs the wrappers, runners and aliases it configures on every command"},
	{pattern: "**/rust-toolchain.toml", why: toolchainWhy},
	{pattern: "**/rust-toolchain", why: toolchainWhy},
	{pattern: "**/.bazelversion", why: toolchainWhy},
	{pattern: "**/.bazeliskrc", why: toolchainWhy},
	{pattern: ".bazelrc", why: "bazel applies its options (wrappers, run_under) to every command"},
	{pattern: "gradle/wrapper/**", why: toolchainWhy},
	{pattern: ".mvn/**", why: toolchainWhy},
	{pattern: "**/.bundle/config", why: "bundler reads it on every command; it can point bundler at another Gemfile"},
	{pattern: "**/.pdbrc", why: replWhy},
	{pattern: "**/.irbrc", why: replWhy},
	{pattern: "**/.pryrc", why: replWhy},
	{pattern: "**/.Rprofile", why: replWhy},
}

// ProtectedPatterns returns the built-in list of protected paths, as
// path patterns relative to the workspace root, for the sandbox to keep
// read-only and for documentation.
func ProtectedPatterns() []string {
	out := make([]string, len(protectedList))
	for i, p := range protectedList {
		out[i] = p.pattern
	}
	return out
}

// ProtectedPaths returns the absolute paths a sandbox should keep
// read-only for the model's commands: the entries of the built-in list
// that name one file or directory at the workspace root (whether or not
// they exist yet; a "**/" entry names its root one), a .git file (a
// worktree's or submodule's pointer to its git directory), and the
// configuration, hooks and pointers of the repository's real git
// directories (through a .git file's "gitdir:" and a worktree's common
// directory). Entries git writes itself, and patterns that match many
// names (lefthook*.yml), are left to the permission checks.
func ProtectedPaths(root string) []string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = filepath.Clean(root)
	}
	var out []string
	for _, p := range protectedList {
		if p.gitWrites {
			continue
		}
		literal := strings.TrimSuffix(strings.TrimPrefix(p.pattern, "**/"), "/**")
		if strings.ContainsAny(literal, "*?") {
			continue
		}
		out = append(out, filepath.Join(real, filepath.FromSlash(literal)))
	}
	if info, err := os.Lstat(filepath.Join(real, ".git")); err == nil && info.Mode().IsRegular() {
		out = append(out, filepath.Join(real, ".git"))
	}
	for _, g := range gitDirs(real) {
		for _, name := range gitPointers {
			out = append(out, filepath.Join(g, filepath.FromSlash(name)))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gitPointers are the files and directories of a git directory that run
// programs or point git elsewhere, for the sandbox (the permission checks
// protect all of it).
var gitPointers = []string{"config", "config.worktree", "hooks", "commondir", "info", "objects/info/alternates"}

// gitDirs returns the real git directories of the repository at root: its
// .git directory, or the one a .git file's "gitdir:" line names, and that
// one's common directory (a worktree's main repository).
func gitDirs(realRoot string) []string {
	dotgit := filepath.Join(realRoot, ".git")
	info, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	var dir string
	switch {
	case info.IsDir():
		// A real directory under the real root: its path is real. A
		// worktree's common directory is named by a file in it.
		dir = dotgit
		if _, err := os.Lstat(filepath.Join(dir, "commondir")); err != nil {
			return []string{dir}
		}
	case info.Mode().IsRegular():
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return nil
		}
		line, _, _ := strings.Cut(string(b), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return nil
		}
		dir = strings.TrimSpace(target)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(realRoot, dir)
		}
	default:
		dir = dotgit
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	dirs := []string{dir}
	if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		if real, err := filepath.EvalSymlinks(common); err == nil {
			common = real
		}
		dirs = append(dirs, common)
	}
	return dirs
}

// protectedWhy says why the real path real is protected, "" when it is not.
// rel is its path relative to the workspace root ("" when outside); gits
// are the repository's real git directories.
func protectedWhy(rules []Rule, rel, real string, gits []string) string {
	fold := func(s string) string { return s }
	if foldProtected {
		fold = strings.ToLower
	}
	for _, g := range gits {
		if r, err := filepath.Rel(g, real); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			switch r = fold(filepath.ToSlash(r)); {
			case r == "config" || r == "config.worktree":
				return gitConfigWhy
			case r == "hooks" || strings.HasPrefix(r, "hooks/"):
				return gitHooksWhy
			case r == "commondir":
				return gitDirWhy
			}
			return gitOwnWhy
		}
	}
	subject := rel
	if subject == "" {
		subject = filepath.ToSlash(real)
	}
	if key := fold(rel); key != "" && mayBeProtected(key) {
		for _, p := range protectedList {
			if match(fold(p.pattern), key, true) {
				return p.why
			}
		}
	}
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		if r.Permission == ProtectedPath && r.Action != Allow && r.Pattern != "*" && match(fold(r.Pattern), fold(subject), true) {
			return "the configuration protects it (rule " + r.String() + ")"
		}
	}
	return ""
}

// foldProtected compares protected paths without case, where the file
// systems darman runs on usually do (NTFS, and APFS as macOS formats it):
// there `.VSCODE/tasks.json` is the `.vscode/tasks.json` an editor reads,
// and `.Git/HOOKS` git's hooks. Asking about a path on a case-sensitive
// volume there is the cost.
var foldProtected = runtime.GOOS == "windows" || runtime.GOOS == "darwin"

// mayBeProtected is a quick look at whether the list may match rel: a
// component of it is one the list's patterns name (its first, or the one
// after a leading "**/"), or its base name starts with one of
// protectedPrefixes.
func mayBeProtected(rel string) bool {
	for rest := rel; rest != ""; {
		c, after, _ := strings.Cut(rest, "/")
		if _, ok := protectedNames[c]; ok {
			return true
		}
		rest = after
	}
	base := path.Base(rel)
	for _, p := range protectedPrefixes {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return strings.HasSuffix(base, ".code-workspace")
}

// protectedNames are the path components that lead to an entry of
// protectedList; a test checks that each entry has one.
var protectedNames = map[string]struct{}{
	".git": {}, ".hg": {}, ".jj": {}, ".husky": {}, ".pre-commit-config.yaml": {}, ".lefthook": {}, ".lefthook-local": {},
	".overcommit.yml": {}, "darman.json": {}, ".darman": {}, ".claude": {}, ".mcp.json": {}, ".cursor": {}, ".gemini": {},
	".codex": {}, ".opencode": {}, "opencode.json": {}, "opencode.jsonc": {}, ".qwen": {}, ".continue": {}, ".windsurf": {},
	".roo": {}, ".kilocode": {}, ".clinerules": {}, ".amazonq": {}, ".kiro": {}, ".openhands": {}, "crush.json": {},
	".crush.json": {}, ".aider.conf.yml": {}, ".vscode": {}, ".idea": {}, ".zed": {}, ".helix": {}, ".theia": {}, ".fleet": {},
	".nvim.lua": {}, ".nvimrc": {}, ".exrc": {}, ".dir-locals.el": {}, ".dir-locals-2.el": {}, ".devcontainer": {},
	".devcontainer.json": {}, ".envrc": {}, "mise.toml": {}, ".mise.toml": {}, "mise.local.toml": {}, ".mise.local.toml": {},
	".mise": {}, ".config": {}, ".npmrc": {}, ".yarnrc": {}, ".yarnrc.yml": {}, ".cargo": {}, "rust-toolchain.toml": {},
	"rust-toolchain": {}, ".bazelversion": {}, ".bazeliskrc": {}, ".bazelrc": {}, "gradle": {}, ".mvn": {}, ".bundle": {},
	".pdbrc": {}, ".irbrc": {}, ".pryrc": {}, ".Rprofile": {}, ".rprofile": {}, // folded on Windows and macOS
}

// protectedPrefixes are the base-name prefixes of entries whose first
// component is a pattern (lefthook*.yml).
var protectedPrefixes = []string{"lefthook", ".lefthook"}

// decideProtected decides a write to a protected path: only a rule whose
// permission is protected_path itself counts, and anything but allow or
// deny asks.
func decideProtected(rules []Rule, subject, why string) Check {
	c := Check{Permission: ProtectedPath, Subject: subject, Action: Ask, Reason: why, Suggest: escapePattern(subject)}
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if r.Permission == ProtectedPath && match(r.Pattern, subject, true) {
			c.Rule = &r
			if r.Action == Allow || r.Action == Deny {
				c.Action = r.Action
			}
			break
		}
	}
	return c
}
