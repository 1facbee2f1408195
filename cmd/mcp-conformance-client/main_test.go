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
// on Node 20: its `fs` import is answered by node:fs plus a globSync that
// only its tier-check command calls.
func conformanceShim(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"fs.mjs": `import * as fs from 'node:fs';
export * from 'node:fs';
export default fs.default;
export function globSync(...args) {
  if (fs.globSync) return fs.globSync(...args);
  throw new Error('fs.globSync needs Node 22');
}
`,
		"hooks.mjs": `const shim = new URL('./fs.mjs', import.meta.url).href;
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/conformance/dist/')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
`,
		"register.mjs": `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "register.mjs")
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
