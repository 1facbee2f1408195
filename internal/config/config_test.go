package config_test

import (
	"slices"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestRedacted(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"provider": {
		"anthropic": {"apiKey": "sk-ant-secret", "headers": {"x-team": "team-secret", "x-empty": ""}},
		"ollama": {"baseURL": "http://localhost:11434/v1"},
	}}`)
	c := f.mustLoad().Config
	r := c.Redacted()
	if got := r.Provider["anthropic"]; got.APIKey != "[redacted]" || got.Headers["x-team"] != "[redacted]" || got.Headers["x-empty"] != "" {
		t.Errorf("redacted anthropic = %+v; want key and set header values redacted, empty ones left empty", got)
	}
	if got := r.Provider["ollama"]; got.APIKey != "" || got.BaseURL != "http://localhost:11434/v1" {
		t.Errorf("redacted ollama = %+v; want an unset key left unset", got)
	}
	if c.Provider["anthropic"].APIKey != "sk-ant-secret" || c.Provider["anthropic"].Headers["x-team"] != "team-secret" {
		t.Error("Redacted modified the original configuration")
	}
	if got, want := c.Secrets(), []string{"sk-ant-secret", "team-secret"}; !slices.Equal(got, want) {
		t.Errorf("Secrets = %q; want %q", got, want)
	}
	if got := r.Secrets(); !slices.Equal(got, []string{"[redacted]"}) {
		t.Errorf("Secrets of the redacted config = %q", got)
	}
}

func TestDefaultIsFreshEachCall(t *testing.T) {
	a := config.Default()
	a.LSP["go"] = config.LSP{Disabled: true}
	a.Permission = append(a.Permission, config.Rule{Permission: "bash", Pattern: "*", Action: config.Allow})
	b := config.Default()
	if b.LSP["go"].Disabled || len(b.Permission) != 0 {
		t.Error("changing one Default() changed the next")
	}
}
