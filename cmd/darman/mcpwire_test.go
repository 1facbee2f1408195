package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/darman-dev/darman/cmd/darman/internal/doctor"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

func TestDiagnoseMCPServers(t *testing.T) {
	off := false
	cfg := config.Config{MCPServers: map[string]config.MCPServer{
		"gone":  {Command: "darman-no-such-mcp-server", Required: true, Origin: "/w/.mcp.json"},
		"typed": {URL: "https://example.com/mcp", Problem: "uses ${input:token}, which darman cannot prompt for", Origin: "/w/.vscode/mcp.json"},
		"off":   {Command: "x", Enabled: &off},
	}}
	r := &doctor.Report{}
	doctor.MCPServers(r, mcpStatus(context.Background(), cfg, t.TempDir(), testChildren(t), slog.New(slog.DiscardHandler)))
	got := map[string]doctor.Check{}
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

func TestStartMCPReportsStateChanges(t *testing.T) {
	cfg := config.Config{MCPServers: map[string]config.MCPServer{"gone": {Command: "darman-no-such-mcp-server"}}}
	got := make(chan string, 10)
	m, err := startMCP(context.Background(), cfg, t.TempDir(), mcpRuntime{children: testChildren(t),
		notify: func(level, text string) { got <- level + " " + text }}, false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s := <-got; s != "info mcp server gone is starting" {
		t.Errorf("first notice %q; want starting", s)
	}
	if s := <-got; !strings.HasPrefix(s, "warning mcp server gone failed: not found") {
		t.Errorf("second notice %q; want the failure", s)
	}
}

// testChildren is a registry of child processes for one test. At the end
// of the test every child must have been stopped by its owner, as when
// darman's one registry closes: what is left is reported, then stopped.
func testChildren(t *testing.T) *child.Registry {
	t.Helper()
	reg := &child.Registry{}
	t.Cleanup(func() {
		if live := reg.Live(); len(live) > 0 {
			t.Errorf("child processes left running by their owners: %+v", live)
		}
		reg.Close(0)
	})
	return reg
}
