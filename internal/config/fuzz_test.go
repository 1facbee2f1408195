package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

// FuzzLoad feeds arbitrary file content through Load: it must never panic,
// and every failure must be an *Error whose problems name their source.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		``,
		`// only a comment`,
		"\ufeff{\"model\": \"anthropic/x\"}",
		`{"model": "anthropic/claude-sonnet-4-5", "permission": {"bash": {"*": "ask", "git *": "allow"}, "edit": "deny"}}`,
		`{"provider": {"p": {"type": "openai-compatible", "baseURL": "http://x", "timeout": "1s", "models": {"m:1": {"cost": {"input": 1e3}}}}}}`,
		`{"lsp": {"go": {"initializationOptions": {"a": [1, {"b": null}]}, "extensions": [".go"]}}}`,
		`{"provider": {"anthropic": {"apiKey": "${env:KEY}$${x}${file:k}"}}}`,
		`{"agent": {"maxSteps": 1e400}, "retry": {"maxAttempts": -0.0}}`,
		`{"model": "a/b",,}`,
		`[1, 2,]`,
		`{"a": "\ud800"}`,
		`{"dataDir": "~"}`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
		`{"a": "\\"[[[", /* {{{ */ "b": [] // [[[
}`,
	} {
		f.Add(seed)
	}
	root := f.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "k"), []byte("secret\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	user := f.TempDir()
	env := map[string]string{"HOME": root, "KEY": "v"}
	opts := config.Options{
		WorkspaceRoot: root,
		UserConfigDir: user,
		LookupEnv:     func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Trust:         func(config.Workspace) bool { return true },
	}
	file := filepath.Join(root, "darman.json")
	f.Fuzz(func(t *testing.T, content string) {
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := config.Load(opts)
		if err == nil {
			if l.Config.DataDir == "" || l.Config.Agent.MaxSteps < 1 || l.Config.Retry.MaxAttempts < 1 {
				t.Fatalf("loaded an invalid config: %+v", l.Config)
			}
			return
		}
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %T is not *config.Error: %v", err, err)
		}
		for _, p := range ce.Problems {
			if p.Source == "" || p.Message == "" || strings.Contains(p.Message, "\n") {
				t.Fatalf("malformed problem %+v", p)
			}
		}
	})
}
