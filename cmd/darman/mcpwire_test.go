package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/darman-dev/darman/cmd/darman/internal/doctor"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/mcp/client"
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

func TestMCPNoticeWording(t *testing.T) {
	for _, tc := range []struct {
		s           client.Status
		level, text string
	}{
		{client.Status{Name: "gh", State: client.StateReady, Protocol: "2025-11-25", Tools: 3, Generation: 2}, "info", "mcp server gh is ready: protocol 2025-11-25, 3 tools (catalog 2)"},
		{client.Status{Name: "db", State: client.StateFailed, Required: true, Failure: &client.Failure{Class: client.FailureNotFound, Message: `command "pg-mcp" not found`}}, "error", `mcp server db failed: not found: command "pg-mcp" not found`},
		{client.Status{Name: "web", State: client.StateFailed, Failure: &client.Failure{Class: client.FailureCrashed, Message: "exit status 1"}}, "warning", "mcp server web failed: crashed: exit status 1"},
		{client.Status{Name: "old", State: client.StateRetiring}, "info", "mcp server old is retiring: it finishes the calls in flight, then stops"},
	} {
		if level, text := mcpNotice(tc.s); level != tc.level || text != tc.text {
			t.Errorf("mcpNotice(%s) = %s %q; want %s %q", tc.s.State, level, text, tc.level, tc.text)
		}
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
