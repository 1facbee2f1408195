package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
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

func benchCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil { // warm
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
	}
}

// BenchmarkTools measures each tool through the MCP client over an
// in-memory transport, and the same query on the pool directly (the
// "raw" sub-benchmarks), so darman's overhead is their difference.
func BenchmarkTools(b *testing.B) {
	root := midModule(b)
	srv, cs := connect(b, root)
	ctx := context.Background()
	file := filepath.Join(root, "p3", "f2.go")
	b.Run("lookup_symbol", func(b *testing.B) { benchCall(b, cs, "lookup_symbol", map[string]any{"query": "Func2_3", "limit": 20}) })
	b.Run("lookup_symbol/raw", func(b *testing.B) {
		for b.Loop() {
			if _, err := srv.pool.Symbols(ctx, "Func2_3", diagnostics.SymbolQuery{Limit: 21}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("find_references", func(b *testing.B) {
		benchCall(b, cs, "find_references", map[string]any{"symbol": "Func0_0", "path": "p3/f0.go"})
	})
	b.Run("find_references/raw", func(b *testing.B) {
		for b.Loop() {
			if _, err := srv.pool.References(ctx, filepath.Join(root, "p3", "f0.go"), diagnostics.Position{Line: 8, Column: 6}, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("diagnostics", func(b *testing.B) { benchCall(b, cs, "diagnostics", map[string]any{"paths": []string{"p3/f2.go"}}) })
	b.Run("diagnostics/raw", func(b *testing.B) {
		for b.Loop() {
			if err := srv.pool.Touch(ctx, file); err != nil {
				b.Fatal(err)
			}
			if _, err := srv.pool.Diagnostics(ctx, file, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	broken := "package p3\n\nfunc Broken() int {\n\treturn undefinedThing\n}\n"
	b.Run("check_source", func(b *testing.B) {
		benchCall(b, cs, "check_source", map[string]any{"path": "p3/new.go", "source": broken})
	})
	b.Run("check_source/raw", func(b *testing.B) {
		for b.Loop() {
			if _, err := srv.pool.DiagnoseText(ctx, filepath.Join(root, "p3", "new.go"), broken, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
