// Package archtest holds the test that keeps the import graph the shape
// docs/architecture.md draws, row by row, and the doc's package table true to
// the packages that exist.
package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/darman-dev/darman/"

// pkg is what go list says of one of darman's packages.
type pkg struct {
	path    string   // relative to the module: "agent/tool"
	imports []string // direct imports, darman's relative, others as they are
	deps    []string // every package it reaches, likewise
}

// packages lists darman's packages with their imports.
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	rel := func(list string) []string {
		var r []string
		for _, p := range strings.Split(list, ",") {
			if p != "" {
				r = append(r, strings.TrimPrefix(p, mod))
			}
		}
		return r
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		pkgs = append(pkgs, pkg{strings.TrimPrefix(f[0], mod), rel(f[1]), rel(f[2])})
	}
	return pkgs
}

// under reports whether path is prefix or inside it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func anyUnder(path string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return under(path, p) })
}

// TestLayers enforces each row of docs/architecture.md's "Which way imports
// go": who may import the wire libraries, and which layers may not reach up.
func TestLayers(t *testing.T) {
	pkgs := packages(t)

	// Libraries only one part of darman may import, directly.
	owners := []struct {
		lib     string
		allowed []string
	}{
		// One LSP vocabulary: the front and darman's client of real
		// language servers speak glsp's types.
		{"github.com/tliron/glsp", []string{"server/lsp", "diagnostics/lsp"}},
		{"github.com/modelcontextprotocol/go-sdk", []string{"mcp"}},
		{"github.com/sourcegraph/jsonrpc2", []string{"server/rpc", "diagnostics/lsp"}},
		{"internal/logging", []string{"cmd/darman"}},
		{"github.com/dgraph-io/badger/v4", []string{"agent/store"}},
		// The model providers: only the constructor knows the wire
		// families and the cloud credentials; everyone else holds an
		// llm.Client.
		{"agent/llm/anthropic", []string{"agent/llm/provider"}},
		{"agent/llm/openai", []string{"agent/llm/provider"}},
		{"agent/llm/cloudcreds", []string{"agent/llm/provider"}},
		{"agent/llm/internal/wire", []string{"agent/llm/anthropic", "agent/llm/openai", "agent/llm/provider"}},
		// Test scaffolding: _test.go files alone (go list's Imports leaves
		// them out, so no package may).
		{"internal/testenv", nil},
		{"server/rpc/rpctest", nil},
		{"server/internal/fronttest", nil},
	}
	// Layers that must not reach (directly or not) the packages named.
	below := []struct {
		layer     string
		forbidden []string
	}{
		{"agent", []string{"github.com/tliron/glsp", "github.com/modelcontextprotocol/go-sdk",
			"github.com/sourcegraph/jsonrpc2", "server", "mcp", "cmd", "diagnostics"}},
		{"agent/store", []string{"agent/tool", "agent/permission", "agent/session", "agent/prompt", "agent/llm"}},
		{"agent/bus", []string{"agent/tool", "agent/permission", "agent/session", "agent/prompt", "agent/store"}},
		{"agent/llm", []string{"agent/tool", "agent/permission", "agent/session", "agent/prompt", "agent/store"}},
		// The wire families are siblings below the constructor.
		{"agent/llm/anthropic", []string{"agent/llm/openai", "agent/llm/provider", "agent/llm/cloudcreds"}},
		{"agent/llm/openai", []string{"agent/llm/anthropic", "agent/llm/provider", "agent/llm/cloudcreds"}},
		{"agent/llm/cloudcreds", []string{"agent/llm/anthropic", "agent/llm/openai", "agent/llm/provider"}},
		{"agent/complete", []string{"agent/tool", "agent/permission", "agent/session", "agent/prompt", "agent/store"}},
		{"agent/permission", []string{"agent/tool", "agent/session", "agent/prompt", "agent/store"}},
		{"agent/tool", []string{"agent/session", "agent/store", "agent/prompt"}},
		{"agent/hook", []string{"agent/tool", "agent/session", "agent/store", "agent/prompt", "agent/permission", "agent/llm"}},
		{"agent/agents", []string{"agent/tool", "agent/session", "agent/store", "agent/llm"}},
		{"internal", []string{"agent", "server", "mcp", "cmd", "diagnostics"}},
		{"diagnostics", []string{"agent", "server", "mcp", "cmd"}},
		{"mcp", []string{"server", "cmd"}},
		{"server", []string{"mcp", "diagnostics", "cmd", "github.com/modelcontextprotocol/go-sdk"}},
	}
	// The fronts are siblings: none reaches another. What two of them share
	// lives below them (server/rpc, server/internal/...).
	fronts := []string{"server/lsp", "server/acp", "mcp/server", "cmd/darman/internal/terminal"}

	for _, p := range pkgs {
		for _, imp := range p.imports {
			for _, o := range owners {
				if under(imp, o.lib) && !anyUnder(p.path, o.allowed...) {
					t.Errorf("%s imports %s; only %v may", p.path, imp, o.allowed)
				}
			}
			// A command's own internal packages are its alone.
			if under(imp, "cmd") && !(strings.Contains(imp, "/internal/") && under(p.path, imp[:strings.Index(imp, "/internal/")])) {
				t.Errorf("%s imports %s: nothing imports a command", p.path, imp)
			}
		}
		for _, f := range fronts {
			if !under(p.path, f) {
				continue
			}
			for _, dep := range p.deps {
				for _, other := range fronts {
					if other != f && under(dep, other) {
						t.Errorf("%s reaches %s: no front imports another", p.path, dep)
					}
				}
			}
		}
		for _, b := range below {
			if !under(p.path, b.layer) {
				continue
			}
			for _, dep := range p.deps {
				for _, bad := range b.forbidden {
					if under(dep, bad) && !under(dep, b.layer) {
						t.Errorf("%s reaches %s (%s must not)", p.path, dep, b.layer)
					}
				}
			}
		}
	}
}

// TestArchitectureDocNamesEveryPackage keeps docs/architecture.md's package
// table and the tree in step: every package of darman is named in the doc
// (its own row or its parent's text), and every row names a real directory.
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, p := range packages(t) {
		if strings.Contains(p.path, "/testdata/") {
			continue
		}
		if !strings.Contains(text, "`"+p.path+"`") {
			t.Errorf("docs/architecture.md does not name `%s`", p.path)
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(text, -1) {
		if st, err := os.Stat(filepath.Join("../..", m[1])); err != nil || !st.IsDir() {
			t.Errorf("docs/architecture.md has a row for %s, which is not a directory", m[1])
		}
	}
}
