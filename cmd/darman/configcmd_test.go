package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config show prints a configuration file: saved as the user's config it
// reads back to the same settings (durations as "1m30s", rules in their
// object form), and it names the environment variables and flags that set
// something.
func TestConfigShowPastesBack(t *testing.T) {
	e := newEnv(t)
	user := filepath.Join(e.home, ".config", "darman", "config.json")
	e.write(user, `{
		"model": "anthropic/claude-sonnet-4-5",
		"retry": {"maxAttempts": 3, "maxDelay": "90s"},
		"permission": {"bash": {"*": "ask", "go test *": "allow", "rm *": "deny"}, "edit": "allow"},
		"completion": {"debounce": "120ms"},
		"lsp": {"go": {"diagnosticsWait": "2s"}},
		"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"], "timeout": "20s"}}
	}`)
	e.write("darman.json", `{"permission": {"bash": {"rm *": "ask"}}}`)
	e.vars = append(e.vars, "DARMAN_MODEL=anthropic/claude-haiku-4-5")
	first, errs, code := e.run("config", "show", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("config show: exit %d\n%s", code, errs)
	}
	for _, want := range []string{`"maxDelay": "1m30s"`, `"debounce": "120ms"`, `"go test *": "allow"`, `"model": "anthropic/claude-haiku-4-5"`} {
		if !strings.Contains(first, want) {
			t.Errorf("config show lacks %s:\n%s", want, first)
		}
	}
	for _, want := range []string{"# DARMAN_MODEL=anthropic/claude-haiku-4-5 (environment)", "# --log-level=warn (command line)", "(user)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("config show's comments lack %q:\n%s", want, errs)
		}
	}
	// Pasted back as the only configuration, it is the same configuration.
	os.Remove(filepath.Join(e.workspace, "darman.json"))
	e.write(user, first)
	e.vars = e.vars[:len(e.vars)-1]
	second, errs, code := e.run("config", "show")
	if code != 0 {
		t.Fatalf("config show of the pasted configuration: exit %d\n%s", code, errs)
	}
	if second != first {
		t.Errorf("pasted back, config show differs:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
}
