// Command benchmcp asks `darman mcp` and `gopls mcp` the same questions
// about a Go project, as an agent would, and prints a Markdown table of
// the milliseconds and bytes of each answer, cold (a fresh server, the
// question its first) and warm (the median of repeated asks, the servers
// running side by side and asked in turn), each with the fastest run
// beside it.
//
//	go build -o bin/darman ./cmd/darman
//	go run ./mcp/benchmcp -darman bin/darman -root . -set darman
//	go run ./mcp/benchmcp -darman bin/darman -root "$(go env GOROOT)/src" -set goroot
//
// Bytes are, for darman, the answer's text and its structured content
// apart: a client gives its model one of them (Claude Code and VS Code the
// structured content when there is one, others the text), and both cross
// the wire; gopls mcp answers in text only.
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
	// api asks for a package's API: gopls mcp's go_package_api against
	// darman's package_api with a limit that lists it all (the same
	// information, docs cut to their first sentence).
	api := func(dir, pkgPath string) question {
		return question{name: "API of package `" + dir + "`", darmanTool: "package_api", darmanArgs: map[string]any{"path": dir, "limit": 60000},
			goplsTool: "go_package_api", goplsArgs: map[string]any{"packagePaths": []string{pkgPath}}}
	}
	darmanOnly := func(name, tool string, args map[string]any, cold bool) question {
		return question{name: name, darmanTool: tool, darmanArgs: args, coldEnabled: cold}
	}
	switch set {
	case "typescript":
		return []question{
			darmanOnly("find `withTax` by name", "lookup_symbol", map[string]any{"query": "withTax"}, true),
			darmanOnly("find `withta` (a prefix)", "lookup_symbol", map[string]any{"query": "withta"}, false),
			darmanOnly("references of `withTax`", "find_references", map[string]any{"symbol": "withTax", "path": "src/price.ts"}, false),
			darmanOnly("diagnostics of `src/cart.ts`", "diagnostics", map[string]any{"paths": []string{"src/cart.ts"}}, true),
			darmanOnly("API of `src`", "package_api", map[string]any{"path": "src"}, false),
		}, nil
	case "python":
		return []question{
			darmanOnly("find `with_tax` by name", "lookup_symbol", map[string]any{"query": "with_tax"}, true),
			darmanOnly("find `with_ta` (a prefix)", "lookup_symbol", map[string]any{"query": "with_ta"}, false),
			darmanOnly("references of `with_tax`", "find_references", map[string]any{"symbol": "with_tax", "path": "shop/price.py"}, false),
			darmanOnly("diagnostics of `shop/cart.py`", "diagnostics", map[string]any{"paths": []string{"shop/cart.py"}}, true),
			darmanOnly("API of `shop`", "package_api", map[string]any{"path": "shop"}, false),
		}, nil
	case "darman":
		return []question{lookup("ParseInvocation"), lookup("Service"), refs("ParseInvocation", "agent/prompt/invoke.go"), diags("agent/prompt/invoke.go"),
			api("agent/prompt", "github.com/darman-dev/darman/agent/prompt")}, nil
	case "goroot":
		return []question{lookup("ParseInLocation"), lookup("Reader"), refs("ParseInLocation", "time/format.go"), diags("time/format.go"), api("time", "time")}, nil
	}
	return nil, fmt.Errorf("-set %q: darman (this repository), goroot (the Go distribution's src), typescript or python (small projects written to -root, as the end-to-end tests write them)", set)
}

// answer is one call's cost.
type answer struct {
	ms               float64
	text, structured int
	err              string
	// min is the fastest of the runs whose median is ms.
	min float64
}

// server starts one MCP server as a process in root.
type server struct {
	label string
	argv  []string
	tool  func(q question) (string, map[string]any)
}

// ask asks q as s's tool takes it.
func (s server) ask(cs *mcp.ClientSession, q question) answer {
	tool, args := s.tool(q)
	return ask(cs, tool, args)
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
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		a.structured = len(data)
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
	settle := flag.Duration("settle", 0, "how long a warm server is left to finish its own work (gopls diagnoses the whole workspace after loading it) before the warm asks")
	show := flag.Bool("show", false, "print each warm answer's text and structured content")
	flag.Parse()
	dir, err := filepath.Abs(*root)
	if err != nil {
		fail(err)
	}
	if strings.ContainsRune(*darman, filepath.Separator) {
		if *darman, err = filepath.Abs(*darman); err != nil { // the servers run in root
			fail(err)
		}
	}
	if files, ok := fixtures[*set]; ok {
		for name, text := range files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				fail(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				fail(err)
			}
		}
	}
	qs, err := questions(*set, dir)
	if err != nil {
		fail(err)
	}
	servers := []server{
		{label: "gopls mcp", argv: []string{*gopls, "mcp"}, tool: func(q question) (string, map[string]any) { return q.goplsTool, q.goplsArgs }},
		{label: "darman mcp", argv: []string{*darman, "mcp"}, tool: func(q question) (string, map[string]any) { return q.darmanTool, q.darmanArgs }},
	}
	if qs[0].goplsTool == "" {
		servers[0].label = "" // no peer for this language
		servers = servers[1:]
	}
	fmt.Printf("root %s, load average before: %s\n\n", dir, loadavg())
	initMS := map[string][2]float64{}
	coldMS := map[string]map[string]answer{}
	warmA := map[string]map[string]answer{}
	// coldAsk starts s fresh and asks q first: the time from the start to
	// the answer, and to initialize's answer.
	coldAsk := func(s server, q question) (answer, float64) {
		cs, t0, err := s.start(dir)
		if err != nil {
			fail(fmt.Errorf("%s: %v", s.label, err))
		}
		init := float64(time.Since(t0).Microseconds()) / 1000
		a := s.ask(cs, q)
		a.ms = float64(time.Since(t0).Microseconds()) / 1000
		cs.Close()
		return a, init
	}
	for _, s := range servers {
		coldMS[s.label], warmA[s.label] = map[string]answer{}, map[string]answer{}
	}
	if *cold {
		// One unmeasured start of each fills the caches both share (the
		// OS's, gopls's file cache); then each cold run starts both, in
		// turn, each first every other run, so both see the same load.
		for _, s := range servers {
			coldAsk(s, qs[0])
		}
		inits := map[string][]float64{}
		for _, q := range qs {
			if !q.coldEnabled {
				continue
			}
			times := map[string][]float64{}
			for run := range *runs {
				for i := range servers {
					s := servers[(i+run)%len(servers)]
					a, init := coldAsk(s, q)
					times[s.label] = append(times[s.label], a.ms)
					inits[s.label] = append(inits[s.label], init)
					a.ms = 0
					coldMS[s.label][q.name] = a
				}
			}
			for label, ts := range times {
				a := coldMS[label][q.name]
				a.ms, a.min = median(ts), slices.Min(ts)
				coldMS[label][q.name] = a
			}
		}
		for label, v := range inits {
			initMS[label] = [2]float64{median(v), slices.Min(v)}
		}
	}
	// Warm: every server runs at once, and each question's asks go to
	// them in turn, each first every other round, so both answer under
	// the same load (two shared cores whose load moves by the minute).
	sessions := make([]*mcp.ClientSession, len(servers))
	for i, s := range servers {
		cs, _, err := s.start(dir)
		if err != nil {
			fail(fmt.Errorf("%s: %v", s.label, err))
		}
		sessions[i] = cs
		for _, q := range qs {
			s.ask(cs, q) // loads what the question needs
		}
	}
	time.Sleep(*settle)
	for _, q := range qs {
		times := make([][]float64, len(servers))
		last := make([]answer, len(servers))
		for i, s := range servers {
			if first := s.ask(sessions[i], q); first.err != "" {
				fmt.Fprintf(os.Stderr, "%s %s: %s\n", s.label, q.name, first.err)
			}
		}
		for round := range *warm {
			for j := range servers {
				i := (j + round) % len(servers)
				last[i] = servers[i].ask(sessions[i], q)
				times[i] = append(times[i], last[i].ms)
			}
		}
		for i, s := range servers {
			a := last[i]
			a.ms, a.min = median(times[i]), slices.Min(times[i])
			warmA[s.label][q.name] = a
			if *show {
				tool, args := s.tool(q)
				res, _ := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						fmt.Printf("--- %s %s:\n%s\n", s.label, q.name, tc.Text)
					}
				}
				if res.StructuredContent != nil {
					data, _ := json.Marshal(res.StructuredContent)
					fmt.Printf("--- %s %s, structured:\n%s\n", s.label, q.name, data)
				}
			}
		}
	}
	for _, cs := range sessions {
		cs.Close()
	}
	kb := func(n int) string {
		if n < 1000 {
			return fmt.Sprintf("%d B", n)
		}
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	g, d := "gopls mcp", servers[len(servers)-1].label
	if len(servers) == 1 {
		g = "(no peer)"
	}
	fmt.Printf("| question | `%s` | `%s` text, structured |\n|---|---|---|\n", g, d)
	if *cold {
		peer := "—"
		if len(servers) > 1 {
			peer = fmt.Sprintf("%.0f ms (min %.0f)", initMS[g][0], initMS[g][1])
		}
		fmt.Printf("| start → initialize answered | %s | %.0f ms (min %.0f) |\n", peer, initMS[d][0], initMS[d][1])
	}
	for _, q := range qs {
		if b, ok := coldMS[d][q.name]; ok {
			peer := "—"
			if a, ok := coldMS[g][q.name]; ok {
				peer = fmt.Sprintf("%.0f ms (min %.0f)%s", a.ms, a.min, errNote(a))
			}
			fmt.Printf("| %s, cold (start → answer) | %s | %.0f ms (min %.0f)%s |\n", q.name, peer, b.ms, b.min, errNote(b))
		}
		a, b := warmA[g][q.name], warmA[d][q.name]
		peer := "—"
		if len(servers) > 1 {
			peer = fmt.Sprintf("%.1f ms (min %.1f), %s%s", a.ms, a.min, kb(a.text), errNote(a))
		}
		fmt.Printf("| %s, warm | %s | %.1f ms (min %.1f), %s, %s%s |\n", q.name, peer, b.ms, b.min, kb(b.text), kb(b.structured), errNote(b))
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

// fixtures are the TypeScript and Python projects of the end-to-end tests
// (cmd/darman's TestMCPTypeScript and TestMCPPython), for -set typescript
// and python.
var fixtures = map[string]map[string]string{
	"typescript": {
		"package.json":      `{"name": "shop", "private": true}` + "\n",
		"tsconfig.json":     `{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}` + "\n",
		"src/price.ts":      "/** The price with tax. */\nexport function withTax(cents: number): number {\n  return Math.round(cents * 1.2);\n}\n\nexport function withTaxRounded(cents: number): number {\n  return withTax(cents);\n}\n",
		"src/cart.ts":       "import { withTax } from \"./price\";\n\nexport function total(items: number[]): number {\n  return items.map(withTax).reduce((a, b) => a + b, 0);\n}\n\nexport function priceWithTax(cents: number): number {\n  return withTax(cents);\n}\n",
		"src/price.test.ts": "export function withTax() {}\n",
	},
	"python": {
		"pyproject.toml":   "[project]\nname = \"shop\"\nversion = \"0.1\"\n",
		"shop/__init__.py": "",
		"shop/price.py":    "def with_tax(cents: int) -> int:\n    return round(cents * 1.2)\n\n\ndef with_tax_rounded(cents: int) -> int:\n    return with_tax(cents)\n",
		"shop/cart.py":     "from shop.price import with_tax\n\n\ndef price_with_tax(items: list[int]) -> int:\n    return sum(with_tax(i) for i in items)\n",
		"tests/helpers.py": "def with_tax(cents):\n    return cents\n",
	},
}
