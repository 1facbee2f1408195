package permission

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtectedFilesOtherProgramsRun: with edit and every command allowed,
// a write to each file another program reads as something to run is a
// protected_path question, through the edit tool and through a shell
// redirection; the project's own files are not.
func TestProtectedFilesOtherProgramsRun(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755)
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	rules := append(Defaults(), Rule{Permission: Edit, Pattern: "*", Action: Allow}, Rule{Permission: Bash, Pattern: "*", Action: Allow})
	c := newChecker(t, Options{Root: root, Rules: rules})
	protected := []string{
		".git/commondir", ".git/objects/info/alternates", ".git/info/attributes", ".git/info/exclude",
		".git/worktrees/w/commondir", ".git/packed-refs", "sub/.git", "sub/.git/config", "vendor/x/.git/hooks/post-checkout",
		".husky/pre-commit", "web/.husky/pre-push", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook-local.yaml",
		".devcontainer/devcontainer.json", ".devcontainer.json",
		".cursor/mcp.json", ".cursor/hooks.json", ".zed/settings.json", ".zed/tasks.json", ".gemini/settings.json",
		".gemini/commands/x.toml", "opencode.json", ".opencode/plugin/x.ts", ".claude/skills/deploy/SKILL.md",
		".claude/skills/deploy/run.sh", ".codex/config.toml", ".kiro/hooks/x.json", ".amazonq/mcp.json", ".roo/mcp.json",
		".continue/mcpServers/x.yaml", "crush.json", ".aider.conf.yml", ".idea/workspace.xml", ".helix/languages.toml",
		".vscode/extensions.json", "app.code-workspace", "sub/.nvim.lua", ".exrc", "sub/.dir-locals.el",
		"sub/mise.toml", ".mise/tasks/build", ".cargo/config.toml", "crate/.cargo/config", "rust-toolchain.toml",
		".bazelversion", "gradle/wrapper/gradle-wrapper.properties", ".mvn/extensions.xml", "sub/.pdbrc", ".irbrc",
		".hg/hgrc", "sub/.yarnrc",
	}
	for _, p := range protected {
		err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, p)}})
		var d *DeniedError
		if !errors.As(err, &d) || d.Permission != ProtectedPath {
			t.Errorf("edit of %s: %v, want a protected_path question", p, err)
		}
		err = c.Check(t.Context(), bash("echo x > "+p))
		if !errors.As(err, &d) || d.Permission != ProtectedPath {
			t.Errorf("echo x > %s: %v, want a protected_path question", p, err)
		}
	}
	for _, p := range []string{"main.go", "Makefile", "package.json", "AGENTS.md", "CLAUDE.md", ".github/workflows/ci.yml",
		".gitignore", ".gitattributes", "docs/git.md", "src/.gitkeep", "config/mise-notes.txt", "gradle.properties", "my.claude"} {
		if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, p)}}); err != nil {
			t.Errorf("edit of %s: %v, want it allowed", p, err)
		}
	}
}

// TestProtectedListIsIndexed: each entry of the list is reached by
// mayBeProtected's quick look, so adding one without its name there
// cannot leave it unchecked.
func TestProtectedListIsIndexed(t *testing.T) {
	for _, p := range protectedList {
		sample := strings.NewReplacer("**/", "a/b/", "/**", "/x/y", "*", "x").Replace(p.pattern)
		if !match(p.pattern, sample, true) {
			t.Fatalf("%s: the sample %s does not match", p.pattern, sample)
		}
		if !mayBeProtected(sample) {
			t.Errorf("%s: mayBeProtected(%q) is false; add its name to protectedNames", p.pattern, sample)
		}
		if p.why == "" {
			t.Errorf("%s: no reason", p.pattern)
		}
	}
}

// TestProtectedPathsForTheSandboxCoverPointers: the sandbox's list holds
// git's pointers, the root instances of "**/" entries and a worktree's
// .git file, never the git directory itself (git writes there).
func TestProtectedPathsForTheSandboxCoverPointers(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	got := ProtectedPaths(root)
	real, _ := filepath.EvalSymlinks(root)
	has := map[string]bool{}
	for _, p := range got {
		has[p] = true
	}
	for _, want := range []string{".git/commondir", ".git/objects/info/alternates", ".git/info", ".husky", ".envrc",
		".pre-commit-config.yaml", ".devcontainer", ".cursor", ".claude", "opencode.json", ".cargo/config.toml"} {
		if !has[filepath.Join(real, filepath.FromSlash(want))] {
			t.Errorf("ProtectedPaths lacks %s", want)
		}
	}
	if has[filepath.Join(real, ".git")] {
		t.Errorf("ProtectedPaths holds the .git directory, which git writes on every commit")
	}
	wt := t.TempDir()
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(root, ".git")+"\n"), 0o644)
	realWt, _ := filepath.EvalSymlinks(wt)
	found := false
	for _, p := range ProtectedPaths(wt) {
		found = found || p == filepath.Join(realWt, ".git")
	}
	if !found {
		t.Errorf("ProtectedPaths of a worktree lacks its .git file")
	}
}
