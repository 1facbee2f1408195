package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestDiagnoseMCPServers(t *testing.T) {
	off := false
	cfg := config.Config{MCPServers: map[string]config.MCPServer{
		"gone":  {Command: "darman-no-such-mcp-server", Required: true, Origin: "/w/.mcp.json"},
		"typed": {URL: "https://example.com/mcp", Problem: "uses ${input:token}, which darman cannot prompt for", Origin: "/w/.vscode/mcp.json"},
		"off":   {Command: "x", Enabled: &off},
	}}
	r := &report{}
	diagnoseMCPServers(context.Background(), r, cfg, t.TempDir(), slog.New(slog.DiscardHandler))
	got := map[string]check{}
	for _, c := range r.Checks {
		if c.Section == "mcp servers" {
			got[c.Name] = c
		}
	}
	if c := got["gone"]; c.Status != "fail" || !strings.Contains(c.Detail, "not found") {
		t.Errorf("gone: %+v; want a failed required server, not found", c)
	}
	if c := got["gone"]; !strings.Contains(c.Detail, "from /w/.mcp.json") {
		t.Errorf("gone: %+v; want the file it came from", c)
	}
	if c := got["typed"]; c.Status != "warn" || !strings.Contains(c.Detail, "invalid config: uses ${input:token}") || !strings.Contains(c.Detail, "from /w/.vscode/mcp.json") {
		t.Errorf("typed: %+v; want the unsupported placeholder and its file", c)
	}
	if c := got["off"]; c.Status != "missing" {
		t.Errorf("off: %+v; want disabled", c)
	}
}
