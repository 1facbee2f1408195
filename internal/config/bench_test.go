package config_test

import (
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
