package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// elicitingServer configures the test binary's MCP server "late" with its
// ask tool, which asks the user for a colour during the call, and allows
// MCP calls without asking.
func elicitingServer(e *env) {
	e.configure(fmt.Sprintf(`"mcpServers": {"late": {"command": %q, "env": {"DARMAN_TEST_MCP_SERVER": "1", "DARMAN_TEST_MCP_ELICIT": "1"}}},
		"permission": {"mcp": "allow"}`, os.Args[0]))
}

// elicitingEnv is a workspace with elicitingServer and a model that calls
// its ask tool, then answers.
func elicitingEnv(t *testing.T) (*env, *llmtest.Server) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("late_ask", `{}`)}},
		{Text: "blue it is"},
	}})
	elicitingServer(e)
	return e, srv
}

// TestLSPElicitationIsAskedInTheTurnsOrder: an MCP server asks the user
// for input during a tool call of a darman lsp turn. The editor's
// darman/elicit comes on the turn's stream: after the call's tool_call and
// the turn's requires_action state, before the running state and the
// call's end; the editor's answer reaches the server, whose result the
// model reads.
func TestLSPElicitationIsAskedInTheTurnsOrder(t *testing.T) {
	e, srv := elicitingEnv(t)
	cmd := startLSPCommand(e)
	c, _, stderr := runLSPAnswering(t, cmd, func(method string, _ json.RawMessage) (any, error) {
		if method == "darman/elicit" {
			return map[string]any{"action": "accept", "content": map[string]any{"colour": "blue"}}, nil
		}
		return nil, nil
	})
	params := map[string]any{
		"processId":        nil,
		"capabilities":     map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true, "elicitation": true}}},
		"workspaceFolders": []map[string]string{{"uri": "file://" + e.workspace, "name": "project"}},
	}
	if err := c.Call("initialize", params, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.Conn.Notify(t.Context(), "initialized", map[string]any{})
	waitMCPReady(t, c, "late")

	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "pick a colour"}}}, nil); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
	}
	c.await("the end of the turn", isIdle)

	// What the editor was sent, in order: the turn's updates by their
	// kind (a state by its state), and the elicitation.
	var seen []string
	for _, m := range c.Since(0) {
		switch m.Method {
		case "darman/elicit":
			seen = append(seen, "elicit")
		case "darman/sessionUpdate":
			var u struct {
				Update struct {
					SessionUpdate, State, Status, Title string
				} `json:"update"`
			}
			json.Unmarshal(m.Params, &u)
			switch u.Update.SessionUpdate {
			case "state_update":
				seen = append(seen, "state "+u.Update.State)
			case "tool_call", "tool_call_update":
				seen = append(seen, u.Update.SessionUpdate+" "+u.Update.Status)
			}
		}
	}
	at := -1
	for i, s := range seen {
		if s == "elicit" {
			if at >= 0 {
				t.Fatalf("darman/elicit sent twice: %v", seen)
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("the editor was never asked: %v\nstderr: %s", seen, stderr)
	}
	before, after := strings.Join(seen[:at], ", "), strings.Join(seen[at+1:], ", ")
	if !strings.Contains(before, "tool_call") || !strings.HasSuffix(before, "state requires_action") {
		t.Errorf("before darman/elicit the editor had %q; want the call's tool_call, then the requires_action state", before)
	}
	if !strings.HasPrefix(after, "state running") || !strings.Contains(after, "tool_call_update completed") {
		t.Errorf("after darman/elicit the editor had %q; want the running state, then the call's end", after)
	}
	calls := srv.ModelCalls()
	if len(calls) < 2 || !strings.Contains(string(calls[1].Body), `the user said accept {\"colour\":\"blue\"}`) {
		t.Errorf("the editor's answer did not reach the server and the model; the model's calls: %d", len(calls))
	}
}

// startLSPCommand is darman lsp --stdio in e's workspace, not started.
func startLSPCommand(e *env) *exec.Cmd {
	cmd := exec.Command(darmanBin, "lsp", "--stdio")
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	return cmd
}

// waitMCPReady waits until darman.status says the MCP server name is
// ready.
func waitMCPReady(t *testing.T, c *lspClient, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Agent struct {
				MCPServers []struct{ Name, State string } `json:"mcpServers"`
			}
		}
		if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st); err != nil {
			t.Fatal(err)
		}
		for _, s := range st.Agent.MCPServers {
			if s.Name == name && s.State == "ready" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server %s is not ready: %+v", name, st.Agent.MCPServers)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestACPElicitationIsDeclinedInTheTurnsOrder: an MCP server asks for
// input during a tool call of a darman acp turn. ACP has no request for
// it, so darman declines it, and says so in the answer at its place: after
// the call's tool_call, before the call's end; the server hears decline.
func TestACPElicitationIsDeclinedInTheTurnsOrder(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		switch body := string(c.Body); {
		case strings.Contains(body, "the user said"):
			return llmtest.Step{Text: "no colour then"}
		case strings.Contains(body, `"late_ask"`):
			return llmtest.Step{ToolCalls: []llmtest.ToolCall{call("late_ask", `{}`)}}
		}
		return llmtest.Step{Text: "the server is not ready yet"}
	}})
	elicitingServer(e)
	c := startACP(t, e, func(method string, _ json.RawMessage) (any, error) { return nil, fmt.Errorf("no %s", method) })
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	id := c.newSession(e.workspace)
	// The workspace's MCP servers start beside the session: prompt until
	// a turn was offered the server's tool.
	from := 0
	for asked := false; !asked; {
		from = c.Count()
		if stop := c.prompt(id, "pick a colour"); stop != "end_turn" {
			t.Fatalf("the turn: %s\nstderr: %s", stop, c.stderr)
		}
		for _, call := range srv.ModelCalls() {
			asked = asked || strings.Contains(string(call.Body), "the user said")
		}
		if !asked {
			time.Sleep(50 * time.Millisecond)
		}
	}
	var seen []string
	for _, m := range c.Since(from) {
		var p struct {
			Update struct {
				SessionUpdate, Status string
				Content               json.RawMessage // a block, or a call's list of them
			} `json:"update"`
		}
		if m.Method != "session/update" || json.Unmarshal(m.Params, &p) != nil {
			continue
		}
		switch u := p.Update; {
		case u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Content), "the MCP server late asked for your input"):
			seen = append(seen, "declined")
		case u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update" && u.Status == "completed":
			seen = append(seen, u.SessionUpdate)
		}
	}
	if got := strings.Join(seen, ", "); !strings.Contains(got, "tool_call, declined, tool_call_update") {
		t.Errorf("the turn's updates were %q; want the call, the line saying darman declined, then the call's end", got)
	}
	calls := srv.ModelCalls()
	if body := string(calls[len(calls)-1].Body); !strings.Contains(body, "the user said decline") {
		t.Errorf("the server was not told decline; the model read:\n%.3000s", body)
	}
}
