package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/darman-dev/darman/server/lsp"
)

// BenchmarkLSPModels is what initialize adds to its answer: loading the
// workspace's configuration and listing its providers' models.
func BenchmarkLSPModels(b *testing.B) {
	home := b.TempDir()
	ws := filepath.Join(home, "project")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, "darman.json"), []byte(`{"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"apiKey": "sk-ant-test-0123456789"}, "openai": {"apiKey": "sk-test-0123456789"}}}`), 0o644)
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	a := &app{}
	models := a.lspModels(slog.New(slog.DiscardHandler))
	var n int
	for b.Loop() {
		mc, err := models(context.Background(), lsp.Setup{Root: ws})
		if err != nil {
			b.Fatal(err)
		}
		n = len(mc.Models)
	}
	b.ReportMetric(float64(n), "models")
}
