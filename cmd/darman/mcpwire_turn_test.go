package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/mcp/client"
)

// The test binary doubles as an MCP server over stdio when
// DARMAN_TEST_MCP_SERVER is set (init runs before the tests' TestMain
// builds darman). With DARMAN_TEST_MCP_GATE naming a FIFO, it answers
// nothing until the test opens that FIFO: a server that becomes ready when
// the test says so.
func init() {
	if os.Getenv("DARMAN_TEST_MCP_SERVER") == "" {
		return
	}
	if gate := os.Getenv("DARMAN_TEST_MCP_GATE"); gate != "" {
		f, err := os.Open(gate) // blocks until the test opens it for writing
		if err != nil {
			os.Exit(2)
		}
		f.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	object := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "ping", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("pong"), nil
	})
	s.AddTool(&mcp.Tool{Name: "grow", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// A new tool: the client gets tools/list_changed.
		s.AddTool(&mcp.Tool{Name: "grown", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("grown ok"), nil
		})
		return text("growing"), nil
	})
	if os.Getenv("DARMAN_TEST_MCP_ELICIT") != "" {
		// ask asks the user for a colour (an elicitation within the
		// call) and answers with what the user said.
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["colour"].(*mcp.ElicitResult); ok {
				data, _ := json.Marshal(r.Content)
				return text("the user said " + r.Action + " " + string(data)), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"colour": &mcp.ElicitParams{Message: "Which colour?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"colour": map[string]any{"type": "string", "enum": []any{"red", "blue"}}}, "required": []any{"colour"},
			}}}}, nil
		})
	}
	s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

// mcpAgent starts the agent as the editor fronts do (not waiting for the
// MCP servers) with one server, "late", run by this test binary behind a
// FIFO the caller opens to let it answer, and the model srv.
func mcpAgent(t *testing.T, srv *llmtest.Server, late config.MCPServer) (*workspace, agent.ID, string) {
	t.Helper()
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := mkfifo(gate); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	late.Command = os.Args[0]
	late.Env = map[string]string{"DARMAN_TEST_MCP_SERVER": "1", "DARMAN_TEST_MCP_GATE": gate}
	cfg := config.Config{
		Model:      "anthropic/claude-sonnet-4-5",
		Provider:   map[string]config.Provider{"anthropic": {BaseURL: srv.URL, APIKey: "sk-ant-test-0123456789"}},
		DataDir:    filepath.Join(dir, "data"),
		MCPServers: map[string]config.MCPServer{"late": late},
	}
	st, err := store.Open(context.Background(), cfg.DataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := filepath.Join(dir, "ws")
	os.MkdirAll(root, 0o755)
	rt, err := openWorkspace(context.Background(), cfg, st, workspaceOptions{root: root, workspace: tool.NewDisk(root), children: testChildren(t),
		rules: []permission.Rule{{Permission: "mcp", Pattern: "*", Action: permission.Allow}}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	sess, err := rt.sessions.Create(context.Background(), session.CreateOptions{Model: cfg.Model})
	if err != nil {
		t.Fatal(err)
	}
	return rt, sess.ID, gate
}

// openGate lets the server behind gate answer.
func openGate(t *testing.T, gate string) {
	t.Helper()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// waitStatus waits until the manager reports a status of server that ok
// accepts.
func waitStatus(t *testing.T, m *client.Manager, server string, ok func(client.Status) bool) client.Status {
	t.Helper()
	changed := make(chan struct{}, 1)
	stop := m.Subscribe(func(client.Status) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	deadline := time.After(20 * time.Second)
	for {
		for _, s := range m.Status() {
			if s.Name == server && ok(s) {
				return s
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("mcp server %s never reached the awaited state: %+v", server, m.Status())
		}
	}
}

func offered(c *llmtest.Call) []string {
	var req struct{ Tools []struct{ Name string } }
	json.Unmarshal(c.Body, &req)
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestEditorAgentSeesMCPServersAsTheyChange: the editor fronts' agent
// starts while an MCP server is not ready; its first turn runs without the
// server's tools; once the server is ready the next turn calls them; and a
// tool the server adds (tools/list_changed) is offered, and runs, in the
// turn after.
func TestEditorAgentSeesMCPServersAsTheyChange(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "nothing to call yet"},
		{ToolCalls: []llmtest.ToolCall{{Name: "late_ping", Arguments: json.RawMessage(`{}`)}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "late_grow", Arguments: json.RawMessage(`{}`)}}},
		{Text: "grew"},
		{ToolCalls: []llmtest.ToolCall{{Name: "late_grown", Arguments: json.RawMessage(`{}`)}}},
		{Text: "done"},
	}})
	rt, id, gate := mcpAgent(t, srv, config.MCPServer{Timeout: 20 * time.Second})
	if s := rt.mcp.Status()[0]; s.State == client.StateReady {
		t.Fatalf("the server is %s before the test let it answer", s.State)
	}

	turn := func(text string) {
		t.Helper()
		msg, err := rt.sessions.Run(context.Background(), session.Turn{Session: id, Prompt: session.Text(text)})
		if err != nil || msg.Finish != agent.FinishStop {
			t.Fatalf("turn %q: %+v, %v", text, msg, err)
		}
	}
	turn("first")
	if got := offered(srv.ModelCalls()[0]); slices.Contains(got, "late_ping") {
		t.Errorf("a server not ready yet had its tools offered: %v", got)
	}

	openGate(t, gate)
	before := waitStatus(t, rt.mcp, "late", func(s client.Status) bool { return s.State == client.StateReady })
	turn("second")
	calls := srv.ModelCalls()
	if got := offered(calls[1]); !slices.Contains(got, "late_ping") || !slices.Contains(got, "late_grow") || slices.Contains(got, "late_grown") {
		t.Errorf("the turn after the server became ready offered %v", got)
	}
	if !strings.Contains(string(calls[2].Body), "pong") {
		t.Errorf("late_ping's answer did not reach the model:\n%.2000s", calls[2].Body)
	}

	waitStatus(t, rt.mcp, "late", func(s client.Status) bool { return s.Generation > before.Generation && s.Tools == 3 })
	turn("third")
	calls = srv.ModelCalls()
	if got := offered(calls[4]); !slices.Contains(got, "late_grown") {
		t.Errorf("the turn after tools/list_changed offered %v; want late_grown", got)
	}
	if !strings.Contains(string(calls[5].Body), "grown ok") {
		t.Errorf("late_grown's answer did not reach the model:\n%.2000s", calls[5].Body)
	}
}

// TestEditorAgentFailsTheTurnWhileARequiredServerIsNotReady: the agent
// starts although a required server never answers; a turn then fails,
// naming the server and why, without calling the model.
func TestEditorAgentFailsTheTurnWhileARequiredServerIsNotReady(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "unreachable"}}})
	rt, id, _ := mcpAgent(t, srv, config.MCPServer{Required: true, Timeout: 300 * time.Millisecond})
	msg, err := rt.sessions.Run(context.Background(), session.Turn{Session: id, Prompt: session.Text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "late (required): handshake timeout") {
		t.Errorf("the turn: finish %s, error %q; want a failure naming late and the handshake timeout", msg.Finish, msg.Error)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls; want none", n)
	}
}
