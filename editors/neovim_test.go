package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// currentNvim writes the init file a Neovim 0.12 user has from the docs,
// exactly as printed: darman by vim.lsp.config and vim.lsp.enable, and the
// native inline completions with their Tab mapping.
func currentNvim(t *testing.T, s *sid) {
	config := docSnippet(t, "lua", "On Neovim 0.11 and later:")
	inline := docSnippet(t, "lua", "Neovim 0.12 has inline completions built in")
	s.write("home/.config/nvim/init.lua", config+"\n"+inline)
	copyFile(t, "testdata/nvim/current.lua", s.host("current.lua"))
}

// TestNeovim012: a headless Neovim 0.12 from the Debian sid root,
// configured by the docs' snippet (vim.lsp.config + vim.lsp.enable), starts
// darman for a Go file, lists darman's code actions on a `darman:` line and
// runs "darman: do it" (client:exec_cmd); the permission is answered with
// vim.ui.select; the agent's edit, with non-ASCII text, lands in the buffer,
// unsaved, the disk unchanged; one u restores the text; redo and :w save it
// without a "file has changed" question.
func TestNeovim012(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "fmt.Println(undefinedGreeting)", "newString": helixFixed}),
		{Text: "main.go greets the world."},
	}}, map[string]string{"main.go": helixMain}, "")
	currentNvim(t, s)
	r := s.run([]string{"MODE=edit", "FIXED=" + helixFixed}, "nvim", "--headless", "-i", "NONE", "-n", "-c", "luafile "+s.in("current.lua"))
	expect(t, r, map[string]string{
		"buffer_changed": "true", "modified": "true", "disk_unchanged": "true", "progress_end": "done",
		"undo_restores": "true", "saved": "true", "saved_fixed": "true", "stopped": "true",
	})
	if v := r["version"]; len(v) != 1 || !strings.HasPrefix(v[0], "0.12.") {
		t.Errorf("Neovim %v, want 0.12", v)
	}
	if a := r["actions"]; len(a) != 1 || !strings.Contains(a[0], "darman: do it") {
		t.Errorf("code actions %v, want darman: do it", a)
	}
	if a := r["asked"]; len(a) != 1 || !strings.Contains(a[0], "Edit main.go") {
		t.Errorf("the person was asked %v, want the edit of main.go once", a)
	}
}

// TestNeovim012InlineCompletion: Neovim 0.12's own inline completions
// (vim.lsp.inline_completion, as the docs enable them) show darman's
// suggestion as ghost text at the end of a line with non-ASCII text before
// the cursor, moving the cursor withdraws it, and Tab accepts it.
func TestNeovim012InlineCompletion(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step { return llmtest.Step{Text: suggestion} }},
		map[string]string{"main.go": completionMain}, `, "completion": {"model": "anthropic/claude-haiku-4-5"}`)
	currentNvim(t, s)
	r := s.run([]string{"MODE=complete", "SUGGESTION=" + suggestion}, "nvim", "--headless", "-i", "NONE", "-n", "-c", "luafile "+s.in("current.lua"))
	line7 := "\t_ = \"é\"; fmt."
	expect(t, r, map[string]string{
		"ghost":        fmt.Sprintf("6:%d:%s", len(line7), suggestion),
		"moved_clears": "true",
		"accepted":     line7 + suggestion,
		"stopped":      "true",
	})
}

// TestNeovim012Helper: the shipped helper (editors/nvim/darman.lua) on
// Neovim 0.12, driven by the same script as on 0.7.2
// (server/lsp/testdata/nvim/edit.lua, MODE=helper): the helper opts into
// applyEditAndSave, session updates and permissions with vim.ui.select;
// the edit lands in the buffer and on disk (saved by the helper), one u
// restores the text, and the agent's go build, run after the edit, builds.
func TestNeovim012Helper(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "undefinedGreeting", "newString": `"hello from darman"`}),
		toolStep("bash", map[string]string{"command": "go build ./..."}),
		{Text: "main.go builds now."},
	}}, map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(undefinedGreeting)\n}\n"}, "")
	copyFile(t, "../server/lsp/testdata/nvim/edit.lua", s.host("edit.lua"))
	os.MkdirAll(s.host("helper"), 0o755)
	copyFile(t, "nvim/darman.lua", s.host("helper/darman.lua"))
	r := s.run([]string{"MODE=helper", "DARMAN_BIN=" + s.in("bin/darman"), "WORKSPACE=" + s.in("ws"), "HELPER_DIR=" + s.in("helper")},
		"nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+s.in("edit.lua"))
	expect(t, r, map[string]string{"state": "idle", "buffer_changed": "true", "modified": "false", "undo_restores": "true", "write_ok": "true", "stopped": "true"})
	if len(r["asked"]) != 2 {
		t.Errorf("the person was asked %v, want the edit and go build", r["asked"])
	}
	calls := s.model.ModelCalls()
	if len(calls) < 4 || !strings.Contains(string(calls[3].Body), "Exit code 0.") {
		t.Errorf("go build after the edit did not succeed (%d model calls)", len(calls))
	}
}

// TestNeovim012PluginCommands: the README's Neovim line as a person follows
// it: the helper editors/nvim installed as a native package by the
// commands docs/editors.md prints (run by sh in the root as printed, the
// clone replaced by a copy of this checkout's editors/nvim), no init file,
// then `:DarmanStart` and `:DarmanPrompt {text}`: darman starts and
// attaches main.go, the edit is asked with vim.ui.select, lands in the
// buffer and on disk (the helper saves it), and the answer streams into
// the split.
func TestNeovim012PluginCommands(t *testing.T) {
	s := newSid(t)
	comment := "// Greets the world, with accents: é."
	s.workspace(llmtest.Script{Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "// darman: greet the world", "newString": comment}),
		{Text: "Commented main."},
	}}, map[string]string{"main.go": helixMain}, "")
	var install []string
	for _, line := range strings.Split(docSnippet(t, "sh", "As a native package (no plugin manager)"), "\n") {
		if strings.HasPrefix(line, "git clone ") {
			// The clone, from this checkout instead of the network.
			copyTree(t, "nvim", s.host("home/src/darman/editors/nvim"))
			continue
		}
		install = append(install, line)
	}
	if out, err := s.command(s.in("ws"), nil, "sh", "-ec", strings.Join(install, "\n")).CombinedOutput(); err != nil {
		t.Fatalf("the docs' install commands: %v\n%s", err, out)
	}
	copyFile(t, "testdata/nvim/commands.lua", s.host("commands.lua"))
	r := s.run([]string{"COMMENT=" + comment, "ANSWER=Commented main."}, "nvim", "--headless", "-i", "NONE", "-n", "-c", "luafile "+s.in("commands.lua"))
	expect(t, r, map[string]string{"commands": "2,2", "attached": "true", "buffer_changed": "true", "streamed": "true", "stopped": "true"})
	if v := r["version"]; len(v) != 1 || !strings.HasPrefix(v[0], "0.12.") {
		t.Errorf("Neovim %v, want 0.12", v)
	}
	if a := r["asked"]; len(a) != 1 || !strings.Contains(a[0], "main.go") {
		t.Errorf("the person was asked %v, want the edit of main.go once", a)
	}
	if got := s.read("ws/main.go"); got != strings.Replace(helixMain, "// darman: greet the world", comment, 1) {
		t.Errorf("main.go on disk:\n%s", got)
	}
}

// copyTree copies the directory from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNeovim012ApplyCodeBlock: the plugin's :DarmanApply on Neovim 0.12
// (a native package, no init file) with the cursor in a fenced block of
// darman's answer in the darman://session split, the block's fence naming
// main.go in one of the forms the VS Code panel reads: darman.turn.apply
// asks the edit permission through vim.ui.select; allowed, main.go's
// buffer and file hold the block's code and the turn's revert takes it
// back; rejected, the file is unchanged and the user is told. A fence
// naming no file applies to the file typed at vim.ui.input (its default
// the file the user came from), here by the split's key ga; a fence naming
// .env is refused by darman, nothing asked or written. With the cursor
// outside any block, :DarmanApply says so and asks nothing.
func TestNeovim012ApplyCodeBlock(t *testing.T) {
	testApplyCodeBlock(t, "```go main.go", "```go title=\"main.go\"", "2", "0.12.",
		func(t *testing.T, s *sid, c applyCase, env []string) map[string][]string {
			copyTree(t, "nvim", s.host("home/.local/share/nvim/site/pack/darman/start/darman"))
			copyFile(t, "testdata/nvim/apply.lua", s.host("apply.lua"))
			key := ""
			if c.name == "typed" {
				key = "ga" // the split's key applies it, not the command
			}
			return s.run(append(env, "KEY="+key),
				"nvim", "--headless", "-i", "NONE", "-n", "-c", "luafile "+s.in("apply.lua"))
		})
}
