package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// gitRepo makes the workspace a real git repository with a commit, a
// stash and a local config, as a user's is.
func gitRepo(t *testing.T, e *env, files map[string]string) {
	t.Helper()
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	for name, content := range files {
		e.write(name, content)
	}
	e.write(".gitignore", "*.log\n")
	gitIn(t, e.workspace, "init", "-q")
	gitIn(t, e.workspace, "config", "user.email", "u@example.com")
	gitIn(t, e.workspace, "config", "user.name", "U")
	gitIn(t, e.workspace, "add", "-A")
	gitIn(t, e.workspace, "commit", "-q", "-m", "start")
	e.write("a.txt", files["a.txt"]+"stashed\n")
	gitIn(t, e.workspace, "stash", "-q")
	e.write("build.log", "ignored\n")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// hashTree hashes every file under dir (its path, mode and content).
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel] = "dir " + fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = fi.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readWS(t *testing.T, e *env, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.workspace, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// threeEditsAndABash is a turn that edits a.txt, b.txt and c.txt and makes
// d.txt with a shell command, then a second turn that answers only.
func threeEditsAndABash() llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("edit", `{"path":"a.txt","oldString":"alpha","newString":"ALPHA"}`),
			call("edit", `{"path":"b.txt","oldString":"beta","newString":"BETA"}`),
			call("edit", `{"path":"sub/c.txt","oldString":"gamma","newString":"GAMMA"}`),
			call("bash", `{"command":"mkdir -p gen && echo delta > gen/d.txt","description":"generate"}`),
		}},
		{Text: "Changed four files."},
		{Text: "Nothing more to do."},
	}}
}

var startFiles = map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "sub/c.txt": "gamma\n"}

// TestRevertATurnOnDisk runs a turn that edits three files and makes one
// with bash, then reverts it with the CLI (a preview first), redoes it,
// and reverts it again while the user changed one of the files: that one
// is a conflict, left alone. The user's .git is the same, byte for byte,
// at the end.
func TestRevertATurnOnDisk(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	gitBefore := hashTree(t, filepath.Join(e.workspace, ".git"))
	e.withModel(t, threeEditsAndABash())
	if out, errs, code := e.run("run", "--allow", "edit", "--allow", "bash", "change the files"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	changed := map[string]string{"a.txt": "ALPHA\n", "b.txt": "BETA\n", "sub/c.txt": "GAMMA\n", "gen/d.txt": "delta\n"}
	for name, want := range changed {
		if got := readWS(t, e, name); got != want {
			t.Fatalf("after the turn %s = %q, want %q", name, got, want)
		}
	}
	id := firstSession(t, e)

	preview := e.ok("sessions", "revert", id, "--preview")
	for _, want := range []string{"would revert turn msg_", "restore  a.txt", "delete   gen/d.txt", "-ALPHA", "+alpha", "-delta"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	if got := readWS(t, e, "a.txt"); got != "ALPHA\n" {
		t.Fatalf("the preview changed a.txt: %q", got)
	}

	out := e.ok("sessions", "revert", id)
	if !strings.Contains(out, "reverted turn msg_") || !strings.Contains(out, "4 file(s)") {
		t.Errorf("revert said:\n%s", out)
	}
	for name, want := range startFiles {
		if got := readWS(t, e, name); got != want {
			t.Errorf("after revert %s = %q, want %q", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "gen")); !os.IsNotExist(err) {
		t.Errorf("gen/ (made by the turn's command) is still there after the revert: %v", err)
	}
	if got := readWS(t, e, "build.log"); got != "ignored\n" {
		t.Errorf("an ignored file changed: %q", got)
	}

	e.ok("sessions", "redo", id)
	for name, want := range changed {
		if got := readWS(t, e, name); got != want {
			t.Errorf("after redo %s = %q, want %q", name, got, want)
		}
	}

	// The user changes b.txt; reverting leaves it alone and says so.
	e.write("b.txt", "BETA and mine\n")
	out, errs, code := e.run("sessions", "revert", id)
	if code != 1 || !strings.Contains(out, "conflict b.txt: changed since the turn") || !strings.Contains(out, "+beta") ||
		!strings.Contains(out, "-BETA and mine") || !strings.Contains(errs, "1 file(s) left alone") {
		t.Errorf("revert with a conflict: exit %d\n%s\n%s", code, out, errs)
	}
	if got := readWS(t, e, "b.txt"); got != "BETA and mine\n" {
		t.Errorf("the user's b.txt was overwritten: %q", got)
	}
	if got := readWS(t, e, "a.txt"); got != "alpha\n" {
		t.Errorf("a.txt not reverted beside the conflict: %q", got)
	}

	if gitAfter := hashTree(t, filepath.Join(e.workspace, ".git")); !sameHashes(gitBefore, gitAfter) {
		var diff []string
		for k := range gitAfter {
			if gitBefore[k] != gitAfter[k] {
				diff = append(diff, k)
			}
		}
		for k := range gitBefore {
			if _, ok := gitAfter[k]; !ok {
				diff = append(diff, k)
			}
		}
		slices.Sort(diff)
		t.Errorf("the user's .git changed: %v", diff)
	}
	if st := gitIn(t, e.workspace, "stash", "list"); !strings.Contains(st, "stash@{0}") {
		t.Errorf("the stash is gone: %q", st)
	}
}

// TestForkTruncatesTheConversation forks a two-turn session at its second
// prompt: the new session holds the first turn alone, and --files takes
// the files back to before the forked prompt's turn.
func TestForkTruncatesTheConversation(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	e.withModel(t, threeEditsAndABash())
	e.ok("run", "--allow", "edit", "--allow", "bash", "first prompt")
	id := firstSession(t, e)
	e.ok("run", "--session", id, "second prompt")

	var exp struct {
		Messages []struct {
			Message struct{ ID, Role string }
		}
	}
	if err := json.Unmarshal([]byte(e.ok("sessions", "export", id)), &exp); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range exp.Messages {
		if m.Message.Role == "user" {
			users = append(users, m.Message.ID)
		}
	}
	if len(users) != 2 {
		t.Fatalf("%d user messages in the session", len(users))
	}
	var forked struct {
		SessionID string `json:"sessionId"`
		Prompt    string `json:"prompt"`
	}
	if err := json.Unmarshal([]byte(e.ok("sessions", "fork", id, users[1], "--json")), &forked); err != nil {
		t.Fatal(err)
	}
	if forked.Prompt != "second prompt" {
		t.Errorf("the fork's prompt is %q", forked.Prompt)
	}
	show := e.ok("sessions", "show", forked.SessionID)
	if !strings.Contains(show, "first prompt") || strings.Contains(show, "second prompt") || strings.Contains(show, "Nothing more to do") {
		t.Errorf("the fork holds:\n%s", show)
	}
	if orig := e.ok("sessions", "show", id); !strings.Contains(orig, "second prompt") {
		t.Errorf("the original lost its second turn:\n%s", orig)
	}

	// Forking at the first prompt with --files rewinds the files too.
	e.ok("sessions", "fork", id, users[0], "--files")
	for name, want := range startFiles {
		if got := readWS(t, e, name); got != want {
			t.Errorf("after fork --files %s = %q, want %q", name, got, want)
		}
	}
}

func sameHashes(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRevertForceFinishesARevert reverts a turn while the user changed one
// of its files (left alone), then asks again with --force, as the first
// answer says: the file left alone goes back too, and a redo puts back
// the user's text. The turn is named by the id sessions show prints.
func TestRevertForceFinishesARevert(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	e.withModel(t, threeEditsAndABash())
	if out, errs, code := e.run("run", "--allow", "edit", "--allow", "bash", "change the files"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	id := firstSession(t, e)
	var shown struct {
		Messages []struct {
			Message struct {
				Role string `json:"role"`
				ID   string `json:"id"`
			} `json:"message"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(e.ok("sessions", "show", id, "--json")), &shown); err != nil || len(shown.Messages) == 0 {
		t.Fatalf("sessions show --json: %v %+v", err, shown)
	}
	first := shown.Messages[0].Message
	turn := first.ID
	if first.Role != "user" || !strings.HasPrefix(turn, "msg_") {
		t.Fatalf("the first message is %+v, want the user's prompt with its msg_ id", first)
	}
	if text := e.ok("sessions", "show", id); !strings.Contains(text, "── You · ") || !strings.Contains(text, turn) {
		t.Errorf("sessions show does not print the prompt's id %s:\n%s", turn, text)
	}

	e.write("b.txt", "BETA and mine\n")
	out, errs, code := e.run("sessions", "revert", id, "--turn", turn)
	if code != 1 || !strings.Contains(errs, "--force restores them too") {
		t.Fatalf("revert with a conflict: exit %d\n%s\n%s", code, out, errs)
	}
	out = e.ok("sessions", "revert", id, "--force")
	if !strings.Contains(out, "restore  b.txt") {
		t.Errorf("revert --force after the conflict said:\n%s", out)
	}
	for name, want := range startFiles {
		if got := readWS(t, e, name); got != want {
			t.Errorf("after revert --force %s = %q, want %q", name, got, want)
		}
	}
	// A second --force has nothing left to finish: it is the usual answer.
	if _, errs, code := e.run("sessions", "revert", id, "--force"); code == 0 || !strings.Contains(errs, "nothing to do") {
		t.Errorf("a second revert --force: exit %d\n%s", code, errs)
	}
	e.ok("sessions", "redo", id)
	for name, want := range map[string]string{"a.txt": "ALPHA\n", "b.txt": "BETA and mine\n", "gen/d.txt": "delta\n"} {
		if got := readWS(t, e, name); got != want {
			t.Errorf("after redo %s = %q, want %q", name, got, want)
		}
	}
}
