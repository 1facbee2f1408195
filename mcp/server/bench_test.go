package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/testenv"
)

// midModule writes a module of 20 packages of 10 files each (200 files),
// each package calling into the previous one.
func midModule(b *testing.B) string {
	root := goModule(b)
	for p := range 20 {
		for f := range 10 {
			var src strings.Builder
			fmt.Fprintf(&src, "package p%d\n\n", p)
			if p > 0 && f == 0 {
				fmt.Fprintf(&src, "import \"example.com/m/p%d\"\n\nvar _ = p%d.Func0_0\n\n", p-1, p-1)
			}
			for fn := range 5 {
				fmt.Fprintf(&src, "// Func%d_%d does a small thing.\nfunc Func%d_%d(x int) int {\n\treturn x*%d + %d\n}\n\n", f, fn, f, fn, fn+1, f)
			}
			writeFile(b, filepath.Join(root, fmt.Sprintf("p%d", p), fmt.Sprintf("f%d.go", f)), src.String())
		}
	}
	return root
}

// measure runs op once to warm it, then once per iteration, and reports
// the median and the 99th percentile of the iterations' times besides
// the mean (run with -benchtime Nx, N ≥ 100, for a P99 that means
// something).
func measure(b *testing.B, op func() error) {
	b.Helper()
	if err := op(); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	ms := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// toolCall is one call of a tool that must succeed.
func toolCall(cs *mcp.ClientSession, name string, args map[string]any) func() error {
	return func() error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s: %s", name, toolText(res))
		}
		return nil
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// goplsMCP starts `gopls mcp` (headless, stdio) in root, for comparison;
// nil when this gopls has no mcp command.
func goplsMCP(b *testing.B, root string) *mcp.ClientSession {
	env, gopls := testenv.GoplsEnv(b)
	cmd := exec.Command(gopls, "mcp")
	cmd.Dir, cmd.Env = root, env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Logf("gopls mcp did not start (%v): no comparison", err)
		return nil
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// overPipes connects a second client to srv through OS pipes, framed as
// on stdio: the transport a real client uses, minus the process.
func overPipes(b *testing.B, srv *Server) *mcp.ClientSession {
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return cs
}

// BenchmarkTools measures, in one run over a warm gopls, each tool
// through an MCP client over an in-memory transport; the same tool over
// OS pipes framed as on stdio ("pipes", the way gopls mcp is reached);
// the tool's Go function without MCP ("handler"); the same query on the
// pool directly ("raw"), so darman's overhead is the difference; and the
// nearest tool of `gopls mcp` on the same module ("gopls-mcp", its own
// gopls, over stdio):
//
//	go test ./mcp/server -run '^$' -bench BenchmarkTools -benchtime 300x
func BenchmarkTools(b *testing.B) {
	root := midModule(b)
	srv, cs := connect(b, root)
	gm := goplsMCP(b, root)
	ctx := context.Background()
	file := filepath.Join(root, "p3", "f2.go")
	user := filepath.Join(root, "p3", "f0.go")
	pipes := overPipes(b, srv)
	// compare measures darman's tool over pipes, then gopls mcp's.
	compare := func(name string, args map[string]any, tool string, goplsArgs map[string]any) {
		b.Run(name+"/pipes", func(b *testing.B) { measure(b, toolCall(pipes, name, args)) })
		if gm != nil {
			b.Run(name+"/gopls-mcp", func(b *testing.B) { measure(b, toolCall(gm, tool, goplsArgs)) })
		}
	}

	b.Run("lookup_symbol", func(b *testing.B) {
		measure(b, toolCall(cs, "lookup_symbol", map[string]any{"query": "Func2_3", "limit": 20}))
	})
	b.Run("lookup_symbol/raw", func(b *testing.B) {
		measure(b, func() error {
			_, err := srv.pool.Symbols(ctx, "Func2_3", diagnostics.SymbolQuery{Limit: 21})
			return err
		})
	})
	b.Run("lookup_symbol/handler", func(b *testing.B) {
		measure(b, func() error {
			_, _, err := srv.lookupSymbol(ctx, LookupSymbolInput{Query: "Func2_3", Limit: 20})
			return err
		})
	})
	compare("lookup_symbol", map[string]any{"query": "Func2_3", "limit": 20}, "go_search", map[string]any{"query": "Func2_3"})

	b.Run("find_references", func(b *testing.B) {
		measure(b, toolCall(cs, "find_references", map[string]any{"symbol": "Func0_0", "path": "p3/f0.go"}))
	})
	b.Run("find_references/raw", func(b *testing.B) {
		measure(b, func() error {
			decls, err := srv.pool.Resolve(ctx, "Func0_0", user, "")
			if err != nil {
				return err
			}
			_, err = srv.pool.References(ctx, user, decls[0].Location.Start, false)
			return err
		})
	})
	compare("find_references", map[string]any{"symbol": "Func0_0", "path": "p3/f0.go"}, "go_symbol_references", map[string]any{"file": user, "symbol": "Func0_0"})

	b.Run("diagnostics", func(b *testing.B) {
		measure(b, toolCall(cs, "diagnostics", map[string]any{"paths": []string{"p3/f2.go"}}))
	})
	b.Run("diagnostics/raw", func(b *testing.B) {
		measure(b, func() error {
			if err := srv.pool.Touch(ctx, file); err != nil {
				return err
			}
			_, err := srv.pool.Diagnostics(ctx, file, 0)
			return err
		})
	})
	compare("diagnostics", map[string]any{"paths": []string{"p3/f2.go"}}, "go_diagnostics", map[string]any{"files": []string{file}})

	// gopls mcp has no tool for unsaved text: no comparison.
	broken := "package p3\n\nfunc Broken() int {\n\treturn undefinedThing\n}\n"
	b.Run("check_source", func(b *testing.B) {
		measure(b, toolCall(cs, "check_source", map[string]any{"path": "p3/new.go", "source": broken}))
	})
	b.Run("check_source/handler", func(b *testing.B) {
		measure(b, func() error {
			_, _, err := srv.checkSource(ctx, CheckSourceInput{Path: "p3/new.go", Source: broken})
			return err
		})
	})
	b.Run("check_source/raw", func(b *testing.B) {
		measure(b, func() error {
			_, err := srv.pool.DiagnoseText(ctx, filepath.Join(root, "p3", "new.go"), broken, 0)
			return err
		})
	})
	// The common case: an edit inside a function of an existing file, which
	// leaves the package's API alone, so gopls need not re-check the
	// packages that import it.
	body := strings.Replace(readFile(b, file), "return x*1 + 2", "return x*1 + undefinedThing", 1)
	b.Run("check_source/body-edit", func(b *testing.B) {
		measure(b, toolCall(cs, "check_source", map[string]any{"path": "p3/f2.go", "source": body}))
	})
	b.Run("check_source/body-edit/raw", func(b *testing.B) {
		measure(b, func() error {
			_, err := srv.pool.DiagnoseText(ctx, file, body, 0)
			return err
		})
	})
}

func readFile(b *testing.B, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}
