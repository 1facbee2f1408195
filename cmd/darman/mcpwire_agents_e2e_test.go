package main_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestMCPServerAgentsShown: a server's agents key, read from the user's
// config file, is shown by darman doctor and darman.status; a name that
// matches no agent is a config error naming the key. The server is darman
// mcp itself.
func TestMCPServerAgentsShown(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Hello."}}})
	e.configure(fmt.Sprintf(`"mcpServers": {"self": {"command": %q, "args": ["mcp"], "agents": ["task"]}}`, darmanBin))
	out := e.ok("doctor")
	if !strings.Contains(out, "agents task") {
		t.Errorf("doctor does not show the server's agents:\n%s", out)
	}

	_, c, _, stderr := startLSP(t, e, "--stdio")
	c.initialize(e.workspace, nil)
	var tr struct{ SessionID, TurnID string }
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "hello"}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
	}
	c.await("the end of the turn", isIdle)
	var st struct {
		Agent struct {
			MCPServers []struct {
				Name    string
				Visible []string
			} `json:"mcpServers"`
		}
	}
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Agent.MCPServers) != 1 || st.Agent.MCPServers[0].Name != "self" || !slices.Equal(st.Agent.MCPServers[0].Visible, []string{"task"}) {
		t.Errorf("darman.status's mcpServers = %+v; want self, visible to task", st.Agent.MCPServers)
	}

	bad := newEnv(t)
	bad.write("darman.json", `{"mcpServers": {"self": {"command": "x", "agents": ["tasks"]}}}`)
	out, _, code := bad.run("doctor")
	if want := `mcpServers.self.agents[0]: "tasks" names no agent (did you mean "task"?)`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("doctor with a misspelt agent: exit %d, output:\n%s\nwant it to contain %s", code, out, want)
	}
}
