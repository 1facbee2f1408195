package editors

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// currentEmacs writes the init file an Emacs 30 user has from the docs,
// exactly as printed, and the test's script.
func currentEmacs(t *testing.T, s *sid) {
	s.write("home/.emacs.d/init.el", docSnippet(t, "elisp", "**Emacs** (28 with eglot 1.9, and 29 and later"))
	copyFile(t, "testdata/emacs/current.el", s.host("current.el"))
}

// emacs30 runs Emacs 30 in batch mode with the user's init file (batch
// mode skips it unless told) and the script.
func emacs30(s *sid, env ...string) map[string][]string {
	return s.run(env, "emacs", "--batch", "-l", s.in("home/.emacs.d/init.el"), "-l", s.in("current.el"))
}

// TestEmacs30: Emacs 30 from the Debian sid root, with its built-in eglot
// and no package from ELPA, configured by the docs' snippet: main.go opens
// in go-ts-mode (the Go grammar built by install-sid-root.sh), eglot starts
// darman from the snippet's entry, lists darman's code actions on a
// `darman:` line and runs "darman: do it"; the permission is answered
// through completing-read; the edit, with non-ASCII text, lands in the
// buffer, unsaved, the disk unchanged, and undo restores the text; a prompt
// of one's own (darman.prompt) edits the buffer again, and saving writes it.
func TestEmacs30(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "comment main", Steps: []llmtest.Step{
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("edit", map[string]string{"path": "main.go", "oldString": "// darman: greet the world", "newString": "// Greets the world, with accents."}),
			{Text: "Commented."},
		}},
	}, Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "fmt.Println(undefinedGreeting)", "newString": helixFixed}),
		{Text: "main.go greets the world."},
	}}, map[string]string{"main.go": helixMain}, "")
	currentEmacs(t, s)
	r := emacs30(s, "MODE=edit", "FIXED="+helixFixed)
	expect(t, r, map[string]string{
		"mode": "go-ts-mode", "connected": "true", "buffer_changed": "true", "modified": "true",
		"disk_unchanged": "true", "undo_restores": "true", "saved": "true", "stopped": "true",
	})
	if v := r["version"]; len(v) != 1 || !strings.HasPrefix(v[0], "30.") {
		t.Errorf("Emacs %v, want 30", v)
	}
	if e := r["eglot"]; len(e) != 1 || !strings.HasPrefix(e[0], "/usr/share/emacs/30") {
		t.Errorf("eglot from %v, want Emacs's own", e)
	}
	if a := r["actions"]; len(a) != 1 || !strings.Contains(a[0], "darman: do it") {
		t.Errorf("code actions %v, want darman: do it", a)
	}
	if a := r["asked"]; len(a) != 2 {
		t.Errorf("the person was asked %v, want the two edits", a)
	}
	if got := s.read("ws/main.go"); got != strings.Replace(helixMain, "// darman: greet the world", "// Greets the world, with accents.", 1) {
		t.Errorf("saved main.go:\n%s", got)
	}
}

// TestEmacs30CompletionItem: with completion.items, Emacs 30's
// completion-at-point (built-in eglot, the docs' snippet) lists darman's
// suggestion and inserts it after non-ASCII text.
func TestEmacs30CompletionItem(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step { return llmtest.Step{Text: suggestion} }},
		map[string]string{"main.go": completionMain}, `, "completion": {"model": "anthropic/claude-haiku-4-5", "items": true}`)
	currentEmacs(t, s)
	r := emacs30(s, "MODE=complete")
	expect(t, r, map[string]string{
		"mode": "go-ts-mode", "connected": "true", "items": suggestion,
		"line": "\t_ = \"é\"; fmt." + suggestion, "stopped": "true",
	})
}

// TestEmacs30ReadmeLine: the README's one Emacs line as printed, in the
// init file of a stock Emacs 30 after the docs' line that gives .go files
// go-ts-mode (stock Emacs has no go-mode): eglot starts darman for main.go,
// not the gopls of its own defaults, and the edit flow of TestEmacs30
// works through it.
func TestEmacs30ReadmeLine(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "comment main", Steps: []llmtest.Step{
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("edit", map[string]string{"path": "main.go", "oldString": "// darman: greet the world", "newString": "// Greets the world, with accents."}),
			{Text: "Commented."},
		}},
	}, Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "fmt.Println(undefinedGreeting)", "newString": helixFixed}),
		{Text: "main.go greets the world."},
	}}, map[string]string{"main.go": helixMain}, "")
	mode, _, _ := strings.Cut(docSnippet(t, "elisp", "**Emacs** (28 with eglot 1.9, and 29 and later"), "\n")
	if !strings.Contains(mode, "auto-mode-alist") {
		t.Fatalf("the docs' Emacs snippet does not begin with the auto-mode-alist line: %q", mode)
	}
	s.write("home/.emacs.d/init.el", mode+"\n"+readmeCode(t, "- **Emacs** (28+, eglot): ")+"\n")
	copyFile(t, "testdata/emacs/current.el", s.host("current.el"))
	r := emacs30(s, "MODE=edit", "FIXED="+helixFixed)
	expect(t, r, map[string]string{"mode": "go-ts-mode", "connected": "true", "buffer_changed": "true", "saved": "true"})
}

// TestEmacs30PackageVCInstall: the package's install snippet of
// docs/editors.md as printed in a stock Emacs 30 (after the docs' line that
// gives .go files go-ts-mode), its GitHub URL replaced by a local clone of
// this checkout's editors/emacs: package-vc-install clones and installs
// darman into ~/.emacs.d/elpa, (require 'darman) loads it from there, and
// eglot starts darman for main.go and takes its edit.
func TestEmacs30PackageVCInstall(t *testing.T) {
	s := newSid(t)
	s.workspace(llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "comment main", Steps: []llmtest.Step{
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("edit", map[string]string{"path": "main.go", "oldString": "// darman: greet the world", "newString": "// Greets the world, with accents."}),
			{Text: "Commented."},
		}},
	}, Steps: []llmtest.Step{
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "fmt.Println(undefinedGreeting)", "newString": helixFixed}),
		{Text: "main.go greets the world."},
	}}, map[string]string{"main.go": helixMain}, "")
	repo := s.host("home/src/darman")
	copyTree(t, "emacs", filepath.Join(repo, "editors", "emacs"))
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "darman"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	const url = "https://github.com/darman-dev/darman"
	install := docSnippet(t, "elisp", "**Emacs** (29 and later for `package-vc-install`")
	if !strings.Contains(install, url) {
		t.Fatalf("the install snippet does not clone %s:\n%s", url, install)
	}
	mode, _, _ := strings.Cut(docSnippet(t, "elisp", "**Emacs** (28 with eglot 1.9, and 29 and later"), "\n")
	s.write("home/.emacs.d/init.el", mode+"\n"+strings.Replace(install, url, s.in("home/src/darman"), 1))
	copyFile(t, "testdata/emacs/current.el", s.host("current.el"))
	r := emacs30(s, "MODE=edit", "FIXED="+helixFixed)
	// The package saves darman's edits of open buffers (plain eglot
	// leaves them unsaved).
	expect(t, r, map[string]string{"mode": "go-ts-mode", "connected": "true", "buffer_changed": "true", "modified": "false", "saved": "true"})
	if !fileExists(s.host("home/.emacs.d/elpa/darman/editors/emacs/darman.elc")) {
		t.Errorf("package-vc-install did not install and compile darman into ~/.emacs.d/elpa")
	}
}

// readmeCode is the first `inline code` of the README after the text
// after, its line breaks as spaces.
func readmeCode(t *testing.T, after string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, after)
	if i < 0 {
		t.Fatalf("the README has no %q", after)
	}
	m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(text[i+len(after)-1:])
	if m == nil {
		t.Fatalf("no code after %q in the README", after)
	}
	return strings.Join(strings.Fields(m[1]), " ")
}

// TestEmacs30ApplyCodeBlock: the package's darman-apply-block in Emacs 30
// (built-in eglot, the docs' snippet) with point in a fenced block of
// darman's answer in *darman*, the fence naming main.go in one of the
// forms the VS Code panel reads: darman.turn.apply asks the edit
// permission through completing-read; allowed, main.go's buffer and file
// hold the block's code and the turn's revert takes it back; rejected, the
// file is unchanged and the user is told. A fence naming no file applies
// to the file read with read-file-name (its default the file last
// visited); a fence naming .env is refused by darman, nothing asked or
// written. With point outside any block it says so and asks nothing.
func TestEmacs30ApplyCodeBlock(t *testing.T) {
	testApplyCodeBlock(t, "```go:main.go", "```go main.go", "true", "30.",
		func(t *testing.T, s *sid, c applyCase, env []string) map[string][]string {
			s.write("home/.emacs.d/init.el", docSnippet(t, "elisp", "**Emacs** (28 with eglot 1.9, and 29 and later"))
			copyTree(t, "emacs", s.host("darman-el"))
			copyFile(t, "testdata/emacs/apply.el", s.host("apply.el"))
			return s.run(append(env, "DARMAN_EL="+s.in("darman-el")),
				"emacs", "--batch", "-l", s.in("home/.emacs.d/init.el"), "-l", s.in("apply.el"))
		})
}
