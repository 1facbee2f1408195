package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/mcp/client"
)

// benchServer builds the tiny server of internal/benchserver once.
func benchServer(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "benchserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/benchserver").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// benchStart measures the time from Start until every server is ready.
// Server i spends 100+10i ms loading (as npx or a JVM would), so the
// slowest of ten takes 190 ms: compare BenchmarkStartTenServers with
// BenchmarkStartSlowestServer alone. The goal: ten ≤ slowest + 50 ms,
// since they start concurrently.
func benchStart(b *testing.B, delays ...time.Duration) {
	bin := benchServer(b)
	defs := make([]client.Definition, len(delays))
	for i, d := range delays {
		defs[i] = client.Definition{Name: fmt.Sprintf("s%d", i), Command: bin, Env: map[string]string{"BENCH_DELAY": d.String()}}
	}
	for b.Loop() {
		reg := &child.Registry{}
		m := client.New(defs, client.Options{Children: reg})
		m.Start()
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

func BenchmarkStartSlowestServer(b *testing.B) { benchStart(b, 190*time.Millisecond) }

func BenchmarkStartTenServers(b *testing.B) {
	var delays []time.Duration
	for i := range 10 {
		delays = append(delays, time.Duration(100+10*i)*time.Millisecond)
	}
	benchStart(b, delays...)
}

// reportMedian adds the median of the per-call durations as median-ns/op.
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "median-ns/op")
}

// BenchmarkCallThroughDarman is one echo call through the tool darman
// gives the model (permission check hook, progress routing, conversion);
// BenchmarkCallBareSDK is the same call with a bare go-sdk session on the
// same kind of server. The goal: darman adds ≤ 1 ms to the median.
func BenchmarkCallThroughDarman(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	m := client.New([]client.Definition{{Name: "s", Command: exe, Env: map[string]string{"DARMAN_FAKE_MCP": "ok"}}}, client.Options{Children: &child.Registry{}})
	defer m.Close()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var t tool.Tool
	for _, tl := range tools {
		if tl.Info().Name == "s_echo" {
			t = tl
		}
	}
	if t == nil {
		b.Fatal("no s_echo")
	}
	env := (&recorder{}).env()
	input := json.RawMessage(`{"text":"hi"}`)
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := t.Run(context.Background(), env, input)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
	}
	reportMedian(b, d)
}

func BenchmarkCallBareSDK(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DARMAN_FAKE_MCP=ok")
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), params)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatal(err)
		}
	}
	reportMedian(b, d)
}

// BenchmarkSourceTools is what a turn pays, at its start and before each
// model call, to ask the manager for a session's tools: here three ready
// servers (one required) with the fake server's eight tools each.
func BenchmarkSourceTools(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var defs []client.Definition
	for _, name := range []string{"a", "b", "c"} {
		defs = append(defs, client.Definition{Name: name, Command: exe, Env: map[string]string{"DARMAN_FAKE_MCP": "ok"}, Required: name == "a"})
	}
	m := client.New(defs, client.Options{Children: &child.Registry{}})
	defer m.Close()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	src := m.Source(client.Audience{Session: "ses_bench"})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tools, err := src.Tools(context.Background())
		if err != nil || len(tools) == 0 {
			b.Fatalf("%d tools, %v", len(tools), err)
		}
	}
}
