package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/darman-dev/darman/internal/config"
)

func ExampleLoad() {
	root, _ := os.MkdirTemp("", "darman-example")
	defer os.RemoveAll(root)
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, "darman.json"), []byte(`{
		"$schema": "https://example.invalid/darman.schema.json",
		// JSON with comments and trailing commas
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"permission": {"edit": "ask", "bash": {"*": "ask", "git status*": "allow"}},
	}`), 0o644)

	env := map[string]string{"HOME": root, "ANTHROPIC_API_KEY": "sk-ant-example"}
	loaded, err := config.Load(config.Options{
		WorkspaceRoot: root,
		UserConfigDir: filepath.Join(root, "no-user-config"),
		LookupEnv:     func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Flags:         config.Flags{LogLevel: "debug"},
		// The user trusted this workspace (darman trust).
		Trust: func(config.Workspace) bool { return true },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := loaded.Config
	provider, model, _ := config.ParseModelRef(c.Model)
	fmt.Println(provider, model, c.Log.Level, c.Redacted().Provider["anthropic"].APIKey)
	for _, r := range c.Permission {
		fmt.Printf("%s %q → %s\n", r.Permission, r.Pattern, r.Action)
	}
	// Output:
	// anthropic claude-sonnet-4-5 debug [redacted]
	// edit "*" → ask
	// bash "*" → ask
	// bash "git status*" → allow
}

func ExampleError() {
	root, _ := os.MkdirTemp("", "darman-example")
	defer os.RemoveAll(root)
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, "darman.json"), []byte(`{
		"agent": {"maxSteps": "ten"},
		"permission": {"bash": {"git *": "yes"}},
	}`), 0o644)

	_, err := config.Load(config.Options{
		WorkspaceRoot: root,
		UserConfigDir: filepath.Join(root, "no-user-config"),
		LookupEnv: func(k string) (string, bool) {
			if k == "HOME" {
				return root, true
			}
			return "", false
		},
	})
	fmt.Println(err)
	// Output:
	// darman.json: agent.maxSteps: expected an integer, got "ten"
	// darman.json: permission.bash["git *"]: expected "allow", "ask" or "deny", got "yes"
}
