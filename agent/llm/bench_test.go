package llm_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// benchChunks is the length of the benchmark's answer, in text chunks.
const benchChunks = 5000

func benchScript() llmtest.Script {
	chunks := make([]string, benchChunks)
	for i := range chunks {
		chunks[i] = "tok "
	}
	return llmtest.Script{Steps: []llmtest.Step{{TextChunks: chunks}}}
}

// BenchmarkStream measures the adapters' overhead: text chunks relayed
// from the scripted server, with no delay, through the SDK and the adapter
// to the consumer. The server runs in the same process and its cost is
// included; BenchmarkServerAlone measures that part.
func BenchmarkStream(b *testing.B) {
	for _, api := range apis {
		b.Run(api.name, func(b *testing.B) {
			srv, err := llmtest.NewServer(benchScript(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			c := newClient(b, api.settings(srv), fastRetry)
			req := ask("go")
			ctx := context.Background()
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			start := time.Now()
			b.ResetTimer()
			for b.Loop() {
				s := c.Stream(ctx, req)
				n := 0
				for s.Next() {
					if s.Event().Kind == llm.EventTextDelta {
						n++
					}
				}
				if s.Err() != nil || n != benchChunks {
					b.Fatalf("%d chunks, %v", n, s.Err())
				}
			}
			b.StopTimer()
			elapsed := time.Since(start)
			runtime.ReadMemStats(&ms1)
			chunks := float64(b.N * benchChunks)
			b.ReportMetric(chunks/elapsed.Seconds(), "chunks/s")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/chunks, "allocs/chunk")
		})
	}
}

// BenchmarkServerAlone reads the same streams with a bare HTTP client, to
// tell the server's share of BenchmarkStream from the adapters'.
func BenchmarkServerAlone(b *testing.B) {
	bodies := map[string]struct{ path, body string }{
		"anthropic": {"/v1/messages", `{"model":"m","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"go"}]}`},
		"chat":      {"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`},
		"responses": {"/v1/responses", `{"model":"m","stream":true,"input":"go"}`},
	}
	for _, api := range apis {
		b.Run(api.name, func(b *testing.B) {
			srv, err := llmtest.NewServer(benchScript(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			req := bodies[api.name]
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			start := time.Now()
			b.ResetTimer()
			for b.Loop() {
				res, err := http.Post(srv.URL+req.path, "application/json", strings.NewReader(req.body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			b.StopTimer()
			elapsed := time.Since(start)
			runtime.ReadMemStats(&ms1)
			chunks := float64(b.N * benchChunks)
			b.ReportMetric(chunks/elapsed.Seconds(), "chunks/s")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/chunks, "allocs/chunk")
		})
	}
}
