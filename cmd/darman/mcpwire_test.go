package main

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/mcp/client"
	"github.com/darman-dev/darman/server"
)

func TestDiagnoseMCPServers(t *testing.T) {
	off := false
	cfg := config.Config{MCPServers: map[string]config.MCPServer{
		"gone":  {Command: "darman-no-such-mcp-server", Required: true, Origin: "/w/.mcp.json"},
		"typed": {URL: "https://example.com/mcp", Problem: "uses ${input:token}, which darman cannot prompt for", Origin: "/w/.vscode/mcp.json"},
		"off":   {Command: "x", Enabled: &off},
	}}
	r := &report{}
	diagnoseMCPServers(context.Background(), r, cfg, t.TempDir(), testChildren(t), slog.New(slog.DiscardHandler))
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

// The LSP front's elicitor sees the MCP request as server types, and its
// "nobody can answer" becomes the MCP client's.
func TestEditorGateTranslates(t *testing.T) {
	one, nine := 1.0, 9.0
	var seen server.Elicitation
	g := editorGate(func(_ context.Context, e server.Elicitation) (server.ElicitAnswer, error) {
		seen = e
		if e.Mode == "url" {
			return server.ElicitAnswer{}, server.ErrNoHuman
		}
		return server.ElicitAnswer{Action: "accept", Content: map[string]any{"colour": "red"}}, nil
	})
	ans, err := g.Elicit(context.Background(), client.Elicitation{Server: "paint", Mode: "form", Message: "Colour?",
		Fields: []client.ElicitField{{Name: "colour", Type: "string", Enum: []string{"red"}, Required: true},
			{Name: "count", Type: "integer", Default: 2.0, Minimum: &one, Maximum: &nine},
			{Name: "email", Type: "string", Format: "email"}}})
	if err != nil || ans.Action != "accept" || ans.Content["colour"] != "red" {
		t.Errorf("form: %+v, %v", ans, err)
	}
	if seen.Server != "paint" || len(seen.Fields) != 3 || seen.Fields[0].Enum[0] != "red" || !seen.Fields[0].Required {
		t.Errorf("the editor saw %+v", seen)
	} else if c, m := seen.Fields[1], seen.Fields[2]; c.Default != 2.0 || *c.Minimum != 1 || *c.Maximum != 9 || m.Format != "email" {
		t.Errorf("the editor saw count %+v, email %+v; want the default, the bounds and the format", c, m)
	}
	if _, err := g.Elicit(context.Background(), client.Elicitation{Mode: "url", URL: "https://x.example.com"}); !errors.Is(err, client.ErrNoHuman) {
		t.Errorf("url: %v; want client.ErrNoHuman", err)
	}
}

// The terminal gate asks field by field, says what to type when an answer
// does not fit, and leaves optional fields empty for the server's default.
func TestTerminalGate(t *testing.T) {
	one, nine := 1.0, 9.0
	ask := func(input string, e client.Elicitation) (client.ElicitAnswer, string) {
		var out strings.Builder
		g := terminalGate{&terminalAsker{in: bufio.NewReader(strings.NewReader(input)), out: &out}}
		ans, err := g.Elicit(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return ans, out.String()
	}
	form := client.Elicitation{Server: "paint", Mode: "form", Message: "Details?", Fields: []client.ElicitField{
		{Name: "colour", Type: "string", Enum: []string{"red", "blue"}, Required: true},
		{Name: "count", Type: "integer", Required: true, Minimum: &one, Maximum: &nine},
		{Name: "glossy", Type: "boolean"},
		{Name: "note", Type: "string", Default: "none"},
	}}
	ans, out := ask("a\ngreen\nblue\nmany\n12\n3\nyes\n\n", form)
	if ans.Action != "accept" || ans.Content["colour"] != "blue" || ans.Content["count"] != 3 || ans.Content["glossy"] != true || len(ans.Content) != 3 {
		t.Errorf("answer %+v", ans)
	}
	for _, want := range []string{"the MCP server paint asks: Details?", "choose one of red, blue", `"many" is not a whole number`, "12 is more than 9", "[default none]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal shows %q; want %q", out, want)
		}
	}
	tags := client.Elicitation{Server: "paint", Mode: "form", Fields: []client.ElicitField{
		{Name: "tags", Type: "array", Enum: []string{"matte", "gloss"}, Required: true}}}
	ans, out = ask("y\nmatte, shiny\nmatte, gloss\n", tags)
	if got, _ := ans.Content["tags"].([]any); ans.Action != "accept" || len(got) != 2 || !strings.Contains(out, `"shiny" is not a choice`) {
		t.Errorf("tags: %+v, %q; want shiny refused, then both choices", ans, out)
	}
	if ans, _ := ask("n\n", form); ans.Action != "decline" {
		t.Errorf("n: %+v; want decline", ans)
	}
	ans, out = ask("y\n", client.Elicitation{Server: "auth", Mode: "url", Message: "Sign in", URL: "https://auth.example.com/x"})
	if ans.Action != "accept" || !strings.Contains(out, "https://auth.example.com/x") {
		t.Errorf("url: %+v, %q", ans, out)
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
