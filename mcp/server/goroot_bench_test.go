package server

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/diagnostics"
)

// BenchmarkLookupInGoSource asks for the names the side-by-side
// benchmark (mcp/benchmcp -set goroot) asks for on the Go distribution's
// src, in process: the whole tool call, the handler alone, and the
// pool's search alone, so a profile (-cpuprofile) shows darman's own
// work on a warm lookup apart from gopls's.
func BenchmarkLookupInGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	srv, cs := connect(b, root)
	ctx := context.Background()
	for _, name := range []string{"Reader", "ParseInLocation"} {
		args := map[string]any{"query": name}
		b.Run(name, func(b *testing.B) { measure(b, toolCall(cs, "lookup_symbol", args)) })
		b.Run(name+"/handler", func(b *testing.B) {
			measure(b, func() error {
				_, _, err := srv.lookupSymbol(ctx, LookupSymbolInput{Query: name})
				return err
			})
		})
		b.Run(name+"/search", func(b *testing.B) {
			measure(b, func() error {
				_, err := srv.pool.Symbols(ctx, name, diagnostics.SymbolQuery{Limit: 1000, Unmapped: true})
				return err
			})
		})
	}
}
