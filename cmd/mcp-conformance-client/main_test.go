package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceShim lets the suite (which imports fs.globSync, Node 22) run
// on Node 20: scripts/node20-conformance answers its `fs` import with
// node:fs plus a globSync that only its tier-check command calls.
func conformanceShim(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "scripts", "node20-conformance", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConformanceClientScenarios runs the client side of the pinned MCP
// conformance suite (0.1.16) against this binary: every check of every
// scenario darman's client takes part in must succeed.
func TestConformanceClientScenarios(t *testing.T) {
	suite, _ := filepath.Abs("../../.cache/npm/node_modules/.bin/conformance")
	if _, err := os.Stat(suite); err != nil {
		t.Skip("the MCP conformance suite is not installed: run `make deps` (npm install --prefix .cache/npm @modelcontextprotocol/conformance@0.1.16)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	bin := filepath.Join(t.TempDir(), "mcp-conformance-client")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	shim := conformanceShim(t)
	for scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command("node", "--import", shim, suite, "client", "--command", bin, "--scenario", scenario, "-o", out)
			cmd.Dir = out
			report, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance client --scenario %s: %v\n%s", scenario, err, report)
			}
			dirs, _ := os.ReadDir(out)
			var checked int
			for _, d := range dirs {
				data, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
				if err != nil {
					continue
				}
				var checks []struct{ ID, Status, ErrorMessage string }
				if err := json.Unmarshal(data, &checks); err != nil {
					t.Fatalf("%s: %v", d.Name(), err)
				}
				for _, c := range checks {
					if c.Status == "INFO" {
						continue
					}
					checked++
					if c.Status != "SUCCESS" {
						t.Errorf("check %s is %s: %s", c.ID, c.Status, c.ErrorMessage)
					}
				}
			}
			if checked == 0 {
				t.Fatalf("no checks ran:\n%s", report)
			}
		})
	}
}

func TestUnknownScenarioSaysWhatIsSupported(t *testing.T) {
	var stderr strings.Builder
	err := run([]string{"http://127.0.0.1:1/mcp"}, "auth/basic-cimd", &stderr)
	if err == nil || !strings.Contains(err.Error(), "tools_call") || !strings.Contains(err.Error(), "OAuth") {
		t.Errorf("run = %v; want the supported scenarios named", err)
	}
	if err := run(nil, "initialize", &stderr); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("run without a URL = %v; want usage", err)
	}
}
