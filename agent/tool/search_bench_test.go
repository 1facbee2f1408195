package tool_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// BenchmarkSearchTree runs grep, glob and list through the tools on big
// trees, with ripgrep and with the Go search, against ripgrep alone on
// the same query (rg-alone: the command a person would type, its output
// read and thrown away), so the three can be compared in one run (goal:
// the tools with rg within 1.2× of rg alone); cpu-ms/op counts rg's
// processor time with this process's, steadier than wall time on a shared
// machine. The trees are the
// directories in DARMAN_BENCH_TREES (colon-separated: scripts/gentree.py
// makes them), else Go's own src.
func BenchmarkSearchTree(b *testing.B) {
	var trees []string
	if env := os.Getenv("DARMAN_BENCH_TREES"); env != "" {
		trees = strings.Split(env, ":")
	} else if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		trees = []string{filepath.Join(strings.TrimSpace(string(out)), "src")}
	} else {
		b.Skip("no tree: set DARMAN_BENCH_TREES")
	}
	rg, rgErr := exec.LookPath("rg")
	type query struct {
		name, tool string
		input      map[string]any
		alone      []string // rg's arguments for the same query
		// sorted, when set, is rg's arguments for the same query in the
		// tool's order (newest first: rg then walks on one thread).
		sorted []string
	}
	queries := []query{
		{"grep-literal", "grep", map[string]any{"pattern": "ScaleNeedle|ErrUnexpectedEOF"}, []string{"--hidden", "-n", "ScaleNeedle|ErrUnexpectedEOF"}, nil},
		{"grep-regex", "grep", map[string]any{"pattern": `func \w+Error\(`}, []string{"--hidden", "-n", `func \w+Error\(`}, nil},
		{"grep-include", "grep", map[string]any{"pattern": "handle", "include": "*.md"}, []string{"--hidden", "-n", "-g", "*.md", "handle"}, nil},
		{"glob", "glob", map[string]any{"pattern": "**/*.go"}, []string{"--hidden", "--files", "-g", "*.go"}, []string{"--hidden", "--files", "-g", "*.go", "--sortr", "modified"}},
		{"list", "list", map[string]any{}, []string{"--hidden", "--files"}, nil},
	}
	for _, tree := range trees {
		name := filepath.Base(tree)
		for _, q := range queries {
			input, _ := json.Marshal(q.input)
			alone := func(variant string, args []string) {
				if rgErr != nil || args == nil {
					return
				}
				b.Run(name+"/"+q.name+"/"+variant, func(b *testing.B) {
					before := cpuTime()
					defer func() { b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
					for b.Loop() {
						cmd := exec.Command(rg, append([]string{"--no-config", "--no-require-git", "--glob", "!.git"}, args...)...)
						cmd.Dir = tree
						cmd.Stdout = io.Discard // a pipe, read to its end
						if err := cmd.Run(); err != nil {
							if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
								b.Fatal(err)
							}
						}
					}
				})
			}
			alone("rg-alone", q.alone)
			alone("rg-alone-sorted", q.sorted)
			engines := map[string]tool.Options{"tool-go": {NoRipgrep: true}}
			if rgErr == nil {
				engines["tool-rg"] = tool.Options{Ripgrep: rg}
			}
			for _, e := range []string{"tool-rg", "tool-go"} {
				opts, ok := engines[e]
				if !ok {
					continue
				}
				b.Run(name+"/"+q.name+"/"+e, func(b *testing.B) {
					var tl tool.Tool
					for _, t := range tool.Builtins(opts) {
						if t.Info().Name == q.tool {
							tl = t
						}
					}
					env := &tool.Env{Workspace: tool.NewDisk(tree), Permit: func(context.Context, permission.Call) error { return nil }}
					before := cpuTime()
					defer func() { b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
					for b.Loop() {
						res, err := tl.Run(context.Background(), env, input)
						if err != nil || res.IsError {
							b.Fatal(res.Output, err)
						}
					}
				})
			}
		}
	}
}
