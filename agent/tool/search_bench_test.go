package tool_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// BenchmarkSearchTree runs grep, glob and list through the tools on big
// trees, with ripgrep and with the Go search, against ripgrep alone on
// the same query (rg-alone: the command a person would type, its output
// read and thrown away), so the three can be compared in one run (goal:
// the tools with rg within 1.2× of rg alone; glob and list walk in Go
// with either, so tool-rg and tool-go differ in grep only); cpu-ms/op
// counts rg's processor time with this process's, steadier than wall time
// on a shared machine. The trees are the directories in
// DARMAN_BENCH_TREES (colon-separated: scripts/gentree.py makes them),
// else Go's own src.
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
						rgAlone(b, rg, tree, args)
					}
				})
			}
			alone("rg-alone", q.alone)
			alone("rg-alone-sorted", q.sorted)
			engines := map[string]tool.Options{"tool-go": {NoRipgrep: true}}
			if rgErr == nil {
				engines["tool-rg"] = tool.Options{Ripgrep: rg}
			}
			runTool := func(b *testing.B, opts tool.Options) func() {
				var tl tool.Tool
				for _, t := range tool.Builtins(opts) {
					if t.Info().Name == q.tool {
						tl = t
					}
				}
				env := &tool.Env{Workspace: tool.NewDisk(tree), Permit: func(context.Context, permission.Call) error { return nil }}
				return func() {
					res, err := tl.Run(context.Background(), env, input)
					if err != nil || res.IsError {
						b.Fatal(res.Output, err)
					}
				}
			}
			for _, e := range []string{"tool-rg", "tool-go"} {
				opts, ok := engines[e]
				if !ok {
					continue
				}
				b.Run(name+"/"+q.name+"/"+e, func(b *testing.B) {
					run := runTool(b, opts)
					before := cpuTime()
					defer func() { b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
					for b.Loop() {
						run()
					}
				})
			}
			if rgErr == nil {
				// The goal's ratio, paired: each iteration runs rg alone
				// and the tool through rg one after the other (in turn
				// first), so a change in the machine's load meets both;
				// the medians of the pairs' ratios are reported.
				b.Run(name+"/"+q.name+"/paired", func(b *testing.B) {
					run := runTool(b, tool.Options{Ripgrep: rg})
					var wall, cpu []float64
					i := 0
					for b.Loop() {
						var took [2]time.Duration
						var used [2]time.Duration
						for k := range 2 {
							which := (i + k) % 2
							start, before := time.Now(), cpuTime()
							if which == 0 {
								rgAlone(b, rg, tree, q.alone)
							} else {
								run()
							}
							took[which], used[which] = time.Since(start), cpuTime()-before
						}
						wall = append(wall, float64(took[1])/float64(took[0]))
						cpu = append(cpu, float64(used[1])/max(float64(used[0]), 1))
						i++
					}
					b.ReportMetric(median(wall), "tool/rg-wall")
					b.ReportMetric(median(cpu), "tool/rg-cpu")
				})
			}
		}
	}
}

// rgAlone runs rg on tree with args, its output read and thrown away.
func rgAlone(b *testing.B, rg, tree string, args []string) {
	cmd := exec.Command(rg, append([]string{"--no-config", "--no-require-git", "--glob", "!.git"}, args...)...)
	cmd.Dir = tree
	cmd.Stdout = io.Discard // a pipe, read to its end
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			b.Fatal(err)
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
