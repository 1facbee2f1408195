package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// With git allowed, git -c for who the commit is from runs as the commit
// it is, while git -c of a key that runs a program (core.fsmonitor,
// core.pager, alias.*) still needs the user: without a terminal it is
// refused, and its program never runs.
func TestGitConfigOptionsThatRunNothingPass(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	marker := filepath.Join(e.home, "fsmonitor-ran")
	e.write("evil.sh", "#!/bin/sh\ntouch "+marker+"\n")
	os.Chmod(filepath.Join(e.workspace, "evil.sh"), 0o755)
	srv := e.userModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("bash", `{"command":"git -c user.name=Bot -c user.email=bot@example.com -c commit.gpgsign=false commit -q --allow-empty -m from-the-bot","description":"commit"}`),
			call("bash", `{"command":"git -c core.fsmonitor=./evil.sh status","description":"status"}`),
			call("bash", `{"command":"git -c alias.st='!./evil.sh' st","description":"alias"}`),
		}},
		{Text: "Done."},
	}}, "")
	if out, errs, code := e.run("run", "--allow", "bash:git *", "commit"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if log := gitIn(t, e.workspace, "log", "-1", "--format=%an <%ae> %s"); strings.TrimSpace(log) != "Bot <bot@example.com> from-the-bot" {
		t.Errorf("the commit with -c user.* did not run: last commit %q", log)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a git -c option ran a program (%s exists)", marker)
	}
	results := srv.ModelCalls()[1].Get(`messages.@reverse.0.content`).Raw
	if n := strings.Count(results, "no one can be asked"); n != 2 {
		t.Errorf("%d of the program-running -c calls were refused, want 2:\n%s", n, results)
	}
}
