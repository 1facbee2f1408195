package acp_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// BenchmarkPromptToFirstChunk measures what the user waits for between
// sending a prompt and seeing the answer start, with a scripted model that
// answers at once: darman's own overhead (storing the prompt, building the
// request, the first delta through the bus to the client).
func BenchmarkPromptToFirstChunk(b *testing.B) {
	e := start(b, options{script: llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step { return llmtest.Step{Text: "fine"} }}})
	var times []time.Duration
	for b.Loop() {
		id := e.newSession() // a fresh session: the history does not grow
		from := e.client.Count()
		t0 := time.Now()
		done := make(chan error, 1)
		go func() {
			done <- e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "hi"}}}, nil)
		}()
		e.client.Await(from, "the first chunk", func(n note) bool {
			return n.Method == "session/update" && strings.Contains(string(n.Params), "agent_message_chunk")
		})
		times = append(times, time.Since(t0))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(times[min(len(times)*99/100, len(times)-1)])/1e6, "p99-ms")
}
