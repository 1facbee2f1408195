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

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/cmd/darman/internal/doctor"
	"github.com/darman-dev/darman/internal/config"
)

// TestMCPServerAgents: with the task tool on (as darman lsp has it), a
// server whose agents key is ["task"] gives its tools to the sub-agents
// the task tool starts and not to the main agent, and one with ["main"]
// the reverse; the sub-agent's call of its server's tool runs. Status and
// doctor show each server's agents.
func TestMCPServerAgents(t *testing.T) {
	const childPrompt = "Ping the helper server and report what it said."
	srv := llmtest.Start(t, llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "Ping the helper", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{ID: "child_ping", Name: "helper_ping", Arguments: json.RawMessage(`{}`)}}},
			{Text: "The helper said pong."},
		}},
		{Match: "delegate", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{ID: "call_task", Name: "task",
				Arguments: json.RawMessage(`{"description":"ping the helper","prompt":"` + childPrompt + `"}`)}}},
			{Text: "The sub-agent got pong."},
		}},
	}})
	dir := t.TempDir()
	server := func(agents ...string) config.MCPServer {
		return config.MCPServer{Command: os.Args[0], Env: map[string]string{"DARMAN_TEST_MCP_SERVER": "1"},
			Timeout: 20 * time.Second, Agents: agents}
	}
	cfg := config.Config{
		Model:    "anthropic/claude-sonnet-4-5",
		Provider: map[string]config.Provider{"anthropic": {BaseURL: srv.URL, APIKey: "sk-ant-test-0123456789"}},
		DataDir:  filepath.Join(dir, "data"),
		MCPServers: map[string]config.MCPServer{
			"helper": server(config.MCPAgentTask),
			"lead":   server(config.MCPAgentMain),
			"all":    server(),
		},
	}
	st, err := store.Open(context.Background(), cfg.DataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := filepath.Join(dir, "ws")
	os.MkdirAll(root, 0o755)
	rt, err := openWorkspace(context.Background(), cfg, st, workspaceOptions{root: root, workspace: tool.NewDisk(root), tasks: true, waitMCP: true, children: testChildren(t),
		rules: []permission.Rule{{Permission: "mcp", Pattern: "*", Action: permission.Allow}}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	sess, err := rt.sessions.Create(context.Background(), session.CreateOptions{Model: cfg.Model})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := rt.sessions.Run(context.Background(), session.Turn{Session: sess.ID, Prompt: session.Text("delegate the ping")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the turn: %+v, %v", msg, err)
	}

	var parent, child []*llmtest.Call
	for _, c := range srv.ModelCalls() {
		if c.Conversation == childPrompt {
			child = append(child, c)
		} else {
			parent = append(parent, c)
		}
	}
	if len(parent) != 2 || len(child) != 2 {
		t.Fatalf("%d main-agent model calls and %d sub-agent calls; want 2 and 2", len(parent), len(child))
	}
	mainTools, subTools := offered(parent[0]), offered(child[0])
	for _, want := range []string{"lead_ping", "all_ping", "task"} {
		if !slices.Contains(mainTools, want) {
			t.Errorf("the main agent was not offered %s: %v", want, mainTools)
		}
	}
	if slices.Contains(mainTools, "helper_ping") {
		t.Errorf("the main agent was offered helper_ping, whose server is only for sub-agents: %v", mainTools)
	}
	for _, want := range []string{"helper_ping", "all_ping"} {
		if !slices.Contains(subTools, want) {
			t.Errorf("the sub-agent was not offered %s: %v", want, subTools)
		}
	}
	if slices.Contains(subTools, "lead_ping") || slices.Contains(subTools, "task") {
		t.Errorf("the sub-agent was offered lead_ping (main agent only) or task: %v", subTools)
	}
	if !strings.Contains(string(child[1].Body), "pong") {
		t.Errorf("helper_ping's answer did not reach the sub-agent:\n%.2000s", child[1].Body)
	}
	if !strings.Contains(string(parent[1].Body), "The helper said pong.") {
		t.Errorf("the sub-agent's answer did not reach the main agent:\n%.2000s", parent[1].Body)
	}

	// darman.status is the manager's Status, as JSON.
	status, _ := json.Marshal(rt.mcp.Status())
	var servers []struct {
		Name    string
		Visible []string
	}
	json.Unmarshal(status, &servers)
	visible := map[string][]string{}
	for _, s := range servers {
		visible[s.Name] = s.Visible
	}
	if !slices.Equal(visible["helper"], []string{"task"}) || !slices.Equal(visible["lead"], []string{"main"}) || visible["all"] != nil {
		t.Errorf("status shows the agents as %q; want helper [task], lead [main], all none", visible)
	}

	r := &doctor.Report{}
	doctor.MCPServers(r, mcpStatus(context.Background(), cfg, root, testChildren(t), slog.New(slog.DiscardHandler)))
	for _, c := range r.Checks {
		if c.Section != "mcp servers" {
			continue
		}
		want := map[string]string{"helper": "agents task", "lead": "agents main"}[c.Name]
		if c.Status != "ok" || want != "" && !strings.Contains(c.Detail, want) || c.Name == "all" && strings.Contains(c.Detail, "agents") {
			t.Errorf("doctor's %s: %s %q; want ok, showing %q", c.Name, c.Status, c.Detail, want)
		}
	}
}
