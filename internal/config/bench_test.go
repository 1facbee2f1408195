package config_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

// BenchmarkLoad loads a typical setup: a user file with providers and a
// project file with permissions and language servers.
func BenchmarkLoad(b *testing.B) {
	f := newFixture(b)
	f.env["ANTHROPIC_API_KEY"] = "sk-ant-bench"
	f.writeUser(`{
		"model": "anthropic/claude-sonnet-4-5", "smallModel": "anthropic/claude-haiku-4-5",
		"provider": {
			"anthropic": {"apiKey": "${env:ANTHROPIC_API_KEY}", "timeout": "45s"},
			"ollama": {"baseURL": "http://localhost:11434/v1", "models": {"qwen3:8b": {"contextWindow": 40960, "tools": true}}},
		},
		"retry": {"maxAttempts": 5, "maxDelay": "30s"},
	}`)
	f.write("darman.json", `{
		"permission": {"edit": "ask", "bash": {"*": "ask", "git status*": "allow", "git diff*": "allow", "rm *": "deny"}},
		"lsp": {"go": {"command": ["gopls", "-remote=auto"]}, "rust": {"disabled": true}},
	}`)
	opts := f.options(config.Flags{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadClaudeUser loads a configuration next to a ~/.claude.json
// of that size, mostly Claude Code's history, as its users have.
func BenchmarkLoadClaudeUser(b *testing.B) {
	for _, size := range []int{2 << 20, 24 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			f := newFixture(b)
			entry := `{"display": "` + strings.Repeat("x", 200) + `", "pastedContents": {}}`
			history := strings.Repeat(entry+",", size/(len(entry)+1))
			f.write(filepath.Join(f.home, ".claude.json"), fmt.Sprintf(
				`{"mcpServers": {"time": {"command": "uvx"}}, "projects": {"/elsewhere": {"history": [%s{}]}, %s: {"mcpServers": {"local": {"command": "local-mcp"}}}}}`,
				history, strconvQuote(f.root)))
			opts := f.options(config.Flags{})
			b.ReportAllocs()
			for b.Loop() {
				l, err := config.Load(opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(l.Config.MCPServers) != 2 {
					b.Fatalf("servers = %v", l.Config.MCPServers)
				}
			}
		})
	}
}
