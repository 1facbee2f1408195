package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/checkpoint"
)

// Every git a keeper runs leads a session of its own, the group
// internal/child stops as one and, on Linux, kills with darman: a git
// outliving a darman that died would hold the shadow's index.lock. The
// git is the real one, behind a script that records its process and
// session IDs first.
func TestGitLeadsASessionOfItsOwn(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "sessions")
	wrapper := filepath.Join(dir, "git")
	script := "#!/bin/sh\necho \"$$ $(cut -d' ' -f6 /proc/$$/stat)\" >> '" + log + "'\nexec '" + git + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, root, "a.txt", "one\n")
	k, st := newKeeper(t, func(o *checkpoint.Options) { o.Git = wrapper })
	ses := newSession(t, st, root)
	turn(t, k, ses, root, func() { write(t, root, "a.txt", "two\n") })
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the keeper ran no git: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		pid, sid, _ := strings.Cut(l, " ")
		if pid != sid {
			t.Errorf("git %s ran in session %s, not one of its own", pid, sid)
		}
	}
	t.Logf("%d git runs, each leading its session", len(lines))
}
