package agent_test

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists the packages pkgs import, directly or not.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// TestLayers enforces the one-way import rule of docs/architecture.md.
func TestLayers(t *testing.T) {
	const mod = "github.com/darman-dev/darman/"
	rules := []struct {
		pkgs      []string
		forbidden []string
	}{
		// The agent knows nothing of LSP or MCP, nor of the fronts.
		{[]string{"./..."}, []string{"github.com/tliron/glsp", "github.com/modelcontextprotocol/go-sdk",
			"github.com/sourcegraph/jsonrpc2", mod + "server", mod + "mcp", mod + "cmd", mod + "diagnostics"}},
		// The lower layers do not reach up into the agent.
		{[]string{"./store", "./bus", "./llm/...", "../internal/..."}, []string{mod + "agent/tool", mod + "agent/permission"}},
		{[]string{"../internal/..."}, []string{mod + "agent"}},
	}
	for _, r := range rules {
		for _, dep := range deps(t, r.pkgs...) {
			for _, bad := range r.forbidden {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%v imports %s", r.pkgs, dep)
				}
			}
		}
	}
}
