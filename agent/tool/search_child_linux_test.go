package tool_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/darman-dev/darman/agent/tool"
)

// The rg that grep runs leads a process group of its own, the group
// internal/child stops as one and, on Linux, kills with darman, so a long
// search does not go on after darman has died. It stays in darman's
// session (child.Options.SameSession): on Linux a session of its own is a
// scheduling autogroup of its own, which made rg 1.4x slower on a loaded
// machine, and rg runs nothing of the workspace and touches no terminal.
// The rg is the real one, behind a script that records its process,
// group and session IDs first.
func TestRipgrepLeadsAGroupOfItsOwn(t *testing.T) {
	rg := needRipgrep(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "ids")
	wrapper := filepath.Join(dir, "rg")
	script := "#!/bin/sh\necho \"$$ $(cut -d' ' -f5,6 /proc/$$/stat)\" >> '" + log + "'\nexec '" + rg + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tool.Options{Ripgrep: wrapper})
	h.write("a.go", "package a // NEEDLE\n")
	if res := h.run("grep", map[string]any{"pattern": "NEEDLE"}); res.IsError || !strings.Contains(res.Output, "a.go") {
		t.Fatalf("grep did not find the needle: %s", res.Output)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("grep did not run rg: %v", err)
	}
	ours, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var pid, pgid, sid int
		if _, err := fmt.Sscan(l, &pid, &pgid, &sid); err != nil {
			t.Fatalf("ids %q: %v", l, err)
		}
		if pgid != pid {
			t.Errorf("rg %d ran in group %d, not one of its own", pid, pgid)
		}
		if sid != ours {
			t.Errorf("rg %d ran in session %d, not darman's %d", pid, sid, ours)
		}
	}
}
