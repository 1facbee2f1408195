// Command benchmcp asks `darman mcp` and `gopls mcp` the same questions
// about a Go project, as an agent would, and prints a Markdown table of
// the milliseconds and bytes of each answer, cold (a fresh server, the
// question its first) and warm (the median of repeated asks).
//
//	go build -o bin/darman ./cmd/darman
//	go run ./scripts/benchmcp -darman bin/darman -root . -set darman
//	go run ./scripts/benchmcp -darman bin/darman -root "$(go env GOROOT)/src" -set goroot
//
// Bytes are the answer's text (what a client shows the model) and, for
// darman, the text and its structured content together (what crosses the
// wire); gopls mcp answers in text only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// question is one thing an agent asks, as each server's tool takes it.
type question struct {
	name        string
	darmanTool  string
	darmanArgs  map[string]any
	goplsTool   string
	goplsArgs   map[string]any
	coldEnabled bool
}

func questions(set, root string) ([]question, error) {
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	lookup := func(name string) question {
		return question{name: "find `" + name + "` by name", darmanTool: "lookup_symbol", darmanArgs: map[string]any{"query": name},
			goplsTool: "go_search", goplsArgs: map[string]any{"query": name}, coldEnabled: true}
	}
	refs := func(name, file string) question {
		return question{name: "references of `" + name + "`", darmanTool: "find_references", darmanArgs: map[string]any{"symbol": name},
			goplsTool: "go_symbol_references", goplsArgs: map[string]any{"file": abs(file), "symbol": name}}
	}
	diags := func(file string) question {
		return question{name: "diagnostics of `" + file + "`", darmanTool: "diagnostics", darmanArgs: map[string]any{"paths": []string{file}},
			goplsTool: "go_diagnostics", goplsArgs: map[string]any{"files": []string{abs(file)}}, coldEnabled: true}
	}
	switch set {
	case "darman":
		return []question{lookup("ParseInvocation"), lookup("Service"), refs("ParseInvocation", "agent/prompt/invoke.go"), diags("agent/prompt/invoke.go")}, nil
	case "goroot":
		return []question{lookup("ParseInLocation"), lookup("Reader"), refs("ParseInLocation", "time/format.go"), diags("time/format.go")}, nil
	}
	return nil, fmt.Errorf("-set %q: darman (this repository) or goroot (the Go distribution's src)", set)
}

// answer is one call's cost.
type answer struct {
	ms          float64
	text, total int
	err         string
}

// server starts one MCP server as a process in root.
type server struct {
	label string
	argv  []string
	tool  func(q question) (string, map[string]any)
}

func (s server) start(root string) (*mcp.ClientSession, time.Time, error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = root
	if *verbose {
		cmd.Stderr = os.Stderr
	}
	t0 := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "benchmcp"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	return cs, t0, err
}

func ask(cs *mcp.ClientSession, tool string, args map[string]any) answer {
	t := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	a := answer{ms: float64(time.Since(t).Microseconds()) / 1000}
	if err != nil {
		a.err = err.Error()
		return a
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			a.text += len(tc.Text)
		}
	}
	a.total = a.text
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		a.total += len(data)
	}
	if res.IsError {
		a.err = "tool error"
	}
	return a
}

var (
	verbose = flag.Bool("v", false, "show the servers' stderr")
	runs    *int
)

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func main() {
	darman := flag.String("darman", "bin/darman", "the darman binary")
	gopls := flag.String("gopls", "gopls", "the gopls binary")
	root := flag.String("root", ".", "the project")
	set := flag.String("set", "darman", "the questions: darman (this repository) or goroot (the Go distribution's src)")
	warm := flag.Int("warm", 5, "warm asks of each question (the median is shown)")
	cold := flag.Bool("cold", true, "also ask the lookups and diagnostics of a fresh server")
	runs = flag.Int("runs", 3, "fresh servers for each cold question (the median is shown)")
	show := flag.Bool("show", false, "print each warm answer's text")
	flag.Parse()
	dir, err := filepath.Abs(*root)
	if err != nil {
		fail(err)
	}
	qs, err := questions(*set, dir)
	if err != nil {
		fail(err)
	}
	servers := []server{
		{label: "gopls mcp", argv: []string{*gopls, "mcp"}, tool: func(q question) (string, map[string]any) { return q.goplsTool, q.goplsArgs }},
		{label: "darman mcp", argv: []string{*darman, "mcp"}, tool: func(q question) (string, map[string]any) { return q.darmanTool, q.darmanArgs }},
	}
	fmt.Printf("root %s, load average before: %s\n\n", dir, loadavg())
	type row struct{ cells []string }
	initMS := map[string]float64{}
	coldMS := map[string]map[string]answer{}
	warmA := map[string]map[string]answer{}
	for _, s := range servers {
		coldMS[s.label], warmA[s.label] = map[string]answer{}, map[string]answer{}
		if *cold {
			var inits []float64
			for _, q := range qs {
				if !q.coldEnabled {
					continue
				}
				var times []float64
				var a answer
				for range *runs {
					cs, t0, err := s.start(dir)
					if err != nil {
						fail(fmt.Errorf("%s: %v", s.label, err))
					}
					inits = append(inits, float64(time.Since(t0).Microseconds())/1000)
					tool, args := s.tool(q)
					a = ask(cs, tool, args)
					times = append(times, float64(time.Since(t0).Microseconds())/1000)
					cs.Close()
				}
				a.ms = median(times)
				coldMS[s.label][q.name] = a
			}
			initMS[s.label] = median(inits)
		}
		cs, _, err := s.start(dir)
		if err != nil {
			fail(fmt.Errorf("%s: %v", s.label, err))
		}
		for _, q := range qs {
			tool, args := s.tool(q)
			first := ask(cs, tool, args)
			if first.err != "" {
				fmt.Fprintf(os.Stderr, "%s %s: %s\n", s.label, q.name, first.err)
			}
			var times []float64
			var last answer
			for range *warm {
				last = ask(cs, tool, args)
				times = append(times, last.ms)
			}
			last.ms = median(times)
			warmA[s.label][q.name] = last
			if *show {
				res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						fmt.Printf("--- %s %s:\n%s\n", s.label, q.name, tc.Text)
					}
				}
			}
		}
		cs.Close()
	}
	kb := func(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1000) }
	g, d := servers[0].label, servers[1].label
	fmt.Printf("| question | `%s` | `%s` text (wire) |\n|---|---|---|\n", g, d)
	if *cold {
		fmt.Printf("| start → initialize answered | %.0f ms | %.0f ms |\n", initMS[g], initMS[d])
	}
	for _, q := range qs {
		if a, ok := coldMS[g][q.name]; ok {
			b := coldMS[d][q.name]
			fmt.Printf("| %s, cold (start → answer) | %.0f ms%s | %.0f ms%s |\n", q.name, a.ms, errNote(a), b.ms, errNote(b))
		}
		a, b := warmA[g][q.name], warmA[d][q.name]
		fmt.Printf("| %s, warm | %.1f ms, %s%s | %.1f ms, %s (%s)%s |\n", q.name, a.ms, kb(a.text), errNote(a), b.ms, kb(b.text), kb(b.total), errNote(b))
	}
	fmt.Printf("\nload average after: %s\n", loadavg())
}

func errNote(a answer) string {
	if a.err == "" {
		return ""
	}
	return " (" + a.err + ")"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchmcp:", err)
	os.Exit(1)
}
