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
// program run something later: git's hooks and configuration, darman's own
// configuration and commands, other agents' settings and MCP files, the
// editor's tasks, direnv and npm configuration. Its subject is the path
// (relative to the workspace root, or absolute outside it). It is asked
// even when edit is allowed; only a rule naming protected_path itself can
// allow it ("*" does not), and an "always" answer covers that one path.
// Reading a protected file is an ordinary read.
//
// A protected_path rule whose action is ask or deny also adds its pattern
// to the list: {"protected_path": {"deploy/**": "ask"}}.
const ProtectedPath = "protected_path"

// protectedPattern is one entry of the built-in list.
type protectedPattern struct {
	pattern, why string
}

var gitConfigWhy = "git reads it on every command, and its settings (core.fsmonitor, core.hooksPath, core.pager, aliases, include.path) run programs the next time you use git"

var protectedList = []protectedPattern{
	{".git/hooks/**", "git runs the hooks in it on commit, checkout, merge and push"},
	{".git/config", gitConfigWhy},
	{".git/config.worktree", gitConfigWhy},
	{".git/worktrees/*/config.worktree", gitConfigWhy},
	{".git/modules/**/config", gitConfigWhy},
	{".git/modules/**/hooks/**", "git runs the hooks in it on commit, checkout, merge and push"},
	{"darman.json", "it is darman's configuration: permission rules, MCP servers and language servers (which are commands)"},
	{".darman/**", "it holds darman's configuration, commands (whose !`…` lines run in a shell) and skills"},
	{".claude/settings.json", "Claude Code runs the hooks and MCP servers it configures"},
	{".claude/settings.local.json", "Claude Code runs the hooks and MCP servers it configures"},
	{".claude/commands/**", "agents run the shell lines of these commands"},
	{".claude/agents/**", "agents load these as sub-agents with their own tools and permissions"},
	{".claude/hooks/**", "Claude Code runs these hooks"},
	{".mcp.json", "agents start the MCP servers it lists, which are commands"},
	{".vscode/mcp.json", "VS Code starts the MCP servers it lists, which are commands"},
	{".vscode/settings.json", "VS Code and its extensions run programs it names (terminal profiles, linters, formatters)"},
	{".vscode/tasks.json", "VS Code runs its tasks, some when the folder opens"},
	{".vscode/launch.json", "VS Code runs the programs it launches"},
	{"**/.envrc", "direnv runs it in your shell when you enter the directory"},
	{"**/.npmrc", "npm reads it on every command; it can point scripts, the shell and the registry elsewhere"},
	{"**/.yarnrc.yml", "yarn runs the program its yarnPath names"},
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
// they exist yet), and the config and hooks of the repository's real git
// directories (through a .git file's "gitdir:" and a worktree's common
// directory). Patterns that match at any depth (**/.envrc) are left to
// the permission checks.
func ProtectedPaths(root string) []string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = filepath.Clean(root)
	}
	var out []string
	for _, p := range protectedList {
		literal := strings.TrimSuffix(p.pattern, "/**")
		if strings.ContainsAny(literal, "*?") {
			continue
		}
		out = append(out, filepath.Join(real, filepath.FromSlash(literal)))
	}
	for _, g := range gitDirs(real) {
		out = append(out, filepath.Join(g, "config"), filepath.Join(g, "hooks"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

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
		if r, err := filepath.Rel(g, real); err == nil && !strings.HasPrefix(r, "..") {
			r = fold(filepath.ToSlash(r))
			if r == "config" || r == "config.worktree" || r == "hooks" || strings.HasPrefix(r, "hooks/") {
				if r == "config" || r == "config.worktree" {
					return gitConfigWhy
				}
				return "git runs the hooks in it on commit, checkout, merge and push"
			}
		}
	}
	subject := rel
	if subject == "" {
		subject = filepath.ToSlash(real)
	}
	if key := fold(rel); key != "" && mayBeProtected(key) {
		for _, p := range protectedList {
			if match(p.pattern, key, true) {
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

// mayBeProtected is a quick look at whether the list may match rel.
func mayBeProtected(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	switch first {
	case ".git", ".darman", ".claude", ".vscode", "darman.json", ".mcp.json":
		return true
	}
	switch path.Base(rel) {
	case ".envrc", ".npmrc", ".yarnrc.yml":
		return true
	}
	return false
}

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
