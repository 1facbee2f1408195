package agents_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/darman-dev/darman/agent/agents"
)

// BenchmarkLoad20 is what initialize pays for agent discovery: 20 agent
// files, half darman's and half Claude Code's (goal: at most 2 ms).
func BenchmarkLoad20(b *testing.B) {
	d := dirs(b)
	src, err := os.ReadFile("testdata/reviewer.md")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		dir := filepath.Join(d.Root, ".darman", "agent")
		if i%2 == 1 {
			dir = filepath.Join(d.Root, ".claude", "agents")
		}
		write(b, filepath.Join(dir, fmt.Sprintf("a%d.md", i)), fmt.Sprintf("---\nname: agent-%d\n%s", i, src[len("---\nname: code-reviewer\n"):]))
	}
	for b.Loop() {
		c := agents.Load(agents.Options{Dirs: d})
		if n := len(c.List()); n != 22 {
			b.Fatalf("%d agents, want 22", n)
		}
	}
}

// BenchmarkRefreshUnchanged is what each prompt pays to notice changed
// agent files when none changed.
func BenchmarkRefreshUnchanged(b *testing.B) {
	d := dirs(b)
	c := agents.Load(agents.Options{Dirs: d})
	for b.Loop() {
		c.Refresh()
	}
}
