package tool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/tool"
)

// The rg that grep runs leads a session of its own, the group
// internal/child stops as one and, on Linux, kills with darman, so a long
// search does not go on after darman has died. The rg is the real one,
// behind a script that records its process and session IDs first.
func TestRipgrepLeadsASessionOfItsOwn(t *testing.T) {
	rg := needRipgrep(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "sessions")
	wrapper := filepath.Join(dir, "rg")
	script := "#!/bin/sh\necho \"$$ $(cut -d' ' -f6 /proc/$$/stat)\" >> '" + log + "'\nexec '" + rg + "' \"$@\"\n"
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
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, sid, _ := strings.Cut(l, " ")
		if pid != sid {
			t.Errorf("rg %s ran in session %s, not one of its own", pid, sid)
		}
	}
}
