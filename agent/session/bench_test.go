package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// noop is the trivial tool of the benchmark.
type noop struct{}

func (noop) Info() tool.Info {
	return tool.Info{Name: "noop", Description: "Does nothing.", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		Kind: agent.ToolKindOther}
}

func (noop) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{Output: "ok", Title: "noop"}, nil
}

// timing is an http.RoundTripper that records, for each request, when the
// client sent it and when the last bytes of its response arrived.
type timing struct {
	base http.RoundTripper
	mu   sync.Mutex
	sent []time.Time
	last []time.Time
}

func (t *timing) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	i := len(t.sent)
	t.sent = append(t.sent, time.Now())
	t.last = append(t.last, time.Time{})
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		resp.Body = &timedBody{ReadCloser: resp.Body, t: t, i: i}
	}
	return resp, err
}

type timedBody struct {
	io.ReadCloser
	t *timing
	i int
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		now := time.Now()
		b.t.mu.Lock()
		b.t.last[b.i] = now
		b.t.mu.Unlock()
	}
	return n, err
}

// BenchmarkStepOverhead measures the agent's own time in a step: from the
// last bytes of the model's answer reaching the HTTP client to the next
// model request leaving it — parsing the end of the stream, storing the
// answer, running a trivial tool, storing its result, reading the history
// back and building the next request. The scripted model answers every
// call at once with one call to the trivial tool; turns of 20 steps run in
// fresh sessions of one store, and the 19 gaps inside each turn are
// measured. It reports the median and the 99th percentile gap.
func BenchmarkStepOverhead(b *testing.B) {
	const stepsPerTurn = 20
	clock := &timing{base: http.DefaultTransport.(*http.Transport).Clone()}
	f := newFixture(b, fixtureOptions{
		script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
			return llmtest.Step{Text: "Next.", ToolCalls: []llmtest.ToolCall{{Name: "noop", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, c.Step))}}}
		}},
		tools: []tool.Tool{noop{}},
		http:  &http.Client{Transport: clock},
		service: func(o *session.Options) {
			o.MaxSteps = stepsPerTurn
			o.Rules = []permission.Rule{{Permission: "*", Pattern: "*", Action: permission.Allow}}
		},
	})
	ctx := context.Background()
	var gaps []time.Duration
	b.ResetTimer()
	for len(gaps) < b.N {
		sess, err := f.svc.Create(ctx, session.CreateOptions{Model: "anthropic/claude-sonnet-4-5"})
		if err != nil {
			b.Fatal(err)
		}
		clock.mu.Lock()
		from := len(clock.sent)
		clock.mu.Unlock()
		msg, err := f.svc.Run(ctx, session.Turn{Session: sess.ID, Prompt: session.Text("step on")})
		if err != nil || msg.Finish != agent.FinishStepLimit {
			b.Fatalf("turn: %+v, %v", msg, err)
		}
		clock.mu.Lock()
		if n := len(clock.sent) - from; n != stepsPerTurn {
			b.Fatalf("%d model calls in a turn of %d steps", n, stepsPerTurn)
		}
		for i := from + 1; i < len(clock.sent); i++ {
			gaps = append(gaps, clock.sent[i].Sub(clock.last[i-1]))
		}
		clock.mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(gaps)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(gaps[len(gaps)/2]), "ms-median/step")
	b.ReportMetric(ms(gaps[(len(gaps)-1)*99/100]), "ms-p99/step")
}

// BenchmarkStreamedAnswer streams answers of 3,000 and 100,000 chunks of 6
// bytes from the scripted model (no delay) through a turn, with the store
// and a subscriber, and reports chunks/s, the store's bytes written per
// byte of answer, and what those bytes are beyond twice the answer per
// turn.
func BenchmarkStreamedAnswer(b *testing.B) {
	for _, n := range []int{3000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkStreamedAnswer(b, n) })
	}
}

func benchmarkStreamedAnswer(b *testing.B, n int) {
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("%05d ", i%100_000)
	}
	f := newFixture(b, fixtureOptions{script: llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step {
		return llmtest.Step{TextChunks: chunks}
	}}})
	ctx := context.Background()
	before, _ := f.store.Stats(ctx)
	var shown int
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		// A session each: three such answers would not fit the context
		// window.
		sess, err := f.svc.Create(ctx, session.CreateOptions{Model: "anthropic/claude-sonnet-4-5"})
		if err != nil {
			b.Fatal(err)
		}
		sub, err := f.svc.Subscribe(ctx, sess.ID)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan int)
		go func() {
			got := 0
			for d := range sub.C() {
				if d.Event.Kind == agent.EventMessageChunk {
					got += len(d.Event.Text)
				}
				if d.Event.Kind == agent.EventState && (d.Event.State == agent.StateIdle || d.Event.State == agent.StateFailed) {
					break
				}
			}
			done <- got
		}()
		if msg, err := f.svc.Run(ctx, session.Turn{Session: sess.ID, Prompt: session.Text("stream")}); err != nil || msg.Finish != agent.FinishStop {
			b.Fatalf("the turn ended %q (%s), %v", msg.Finish, msg.Error, err)
		}
		shown += <-done
		sub.Unsubscribe()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if shown != 6*n*b.N {
		b.Fatalf("shown %d bytes of %d", shown, 6*n*b.N)
	}
	after, _ := f.store.Stats(ctx)
	written := float64(after.Written - before.Written)
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(written/float64(shown), "bytes-written/text-byte")
	b.ReportMetric((written-2*float64(shown))/float64(b.N), "bytes-over-2x/turn")
}
