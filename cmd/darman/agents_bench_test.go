package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

// BenchmarkLSPAgents is what agent discovery adds to initialize
// (Options.Agents): the workspace's agent files read and the
// configuration's agents applied, with no agent files and with 20 (half
// darman's, half Claude Code's). Goal: at most 2 ms with 20.
func BenchmarkLSPAgents(b *testing.B) {
	reviewer, err := os.ReadFile("../../agent/agents/testdata/reviewer.md")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			home := b.TempDir()
			ws := filepath.Join(home, "project")
			os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
			for i := range n {
				dir := filepath.Join(ws, ".darman", "agent")
				if i%2 == 1 {
					dir = filepath.Join(ws, ".claude", "agents")
				}
				os.MkdirAll(dir, 0o755)
				body := fmt.Sprintf("---\nname: agent-%d\n%s", i, reviewer[len("---\nname: code-reviewer\n"):])
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%d.md", i)), []byte(body), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.Setenv("HOME", home)
			b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
			cfg := config.Config{Agents: config.Agents{"plan": {MaxSteps: 10}}}
			log := slog.New(slog.DiscardHandler)
			for b.Loop() {
				if got := len(loadAgents(ws, cfg, log).List()); got != n+2 {
					b.Fatalf("%d agents, want %d", got, n+2)
				}
			}
		})
	}
}
