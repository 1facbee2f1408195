package complete

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// goSource is n lines of varied Go code.
func goSource(seed, n int) string {
	var b strings.Builder
	b.WriteString("package p\n\n")
	for i := 0; b.Len() < n*40 && strings.Count(b.String(), "\n") < n; i++ {
		k := seed*1000 + i
		fmt.Fprintf(&b, "// handle%d processes the request of kind %d.\nfunc handle%d(req *Request%d, limit int) (*Response, error) {\n", k, k%7, k, k%13)
		fmt.Fprintf(&b, "\tif req.Size%d > limit {\n\t\treturn nil, errTooLarge%d\n\t}\n", k%5, k%3)
		fmt.Fprintf(&b, "\tvalue := compute%d(req.Field%d, limit)\n\treturn &Response{Value: value, Kind: %d}, nil\n}\n\n", k%11, k%17, k%7)
	}
	return b.String()
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkContextAssembly: the prompt for a cursor in the middle of a
// 5,000-line file with 20 other open buffers of 500 lines: the windows,
// the snippets chosen by similarity, the stop rules (the definitions are
// measured with the language server, in cmd/darman). The buffers are
// indexed by the first request (reported as cold-µs); the timed requests
// are at successive cursors of a file being typed in, as while typing.
func BenchmarkContextAssembly(b *testing.B) {
	var bufs []Buffer
	for i := range 20 {
		bufs = append(bufs, Buffer{URI: fmt.Sprintf("file:///ws/b%d.go", i), Path: fmt.Sprintf("/ws/b%d.go", i), Language: "go", Version: 1, Text: goSource(i+1, 500)})
	}
	e, _ := engine(b, llmtest.Script{}, Options{Buffers: func() []Buffer { return bufs }, NoDefinitions: true})
	text := goSource(0, 5000)
	mid := strings.Index(text[len(text)/2:], "\tvalue := ") + len(text)/2 + len("\tvalue := ")
	req := Request{URI: "file:///ws/main.go", Path: "/ws/main.go", Language: "go", Text: text}
	assemble := func(off int) *Prompt {
		req.Offset = off
		prefixText := text[:off]
		end := off
		pre := prefixWindow(prefixText, off, e.o.PrefixTokens*bytesPerToken)
		suf := suffixWindow(text, end, e.o.SuffixTokens*bytesPerToken)
		return e.prompt(req, prefixText, pre, end, suf, text[end:lineEnd(text, end)])
	}
	t0 := time.Now()
	p := assemble(mid)
	cold := time.Since(t0)
	if len(p.Files) == 0 {
		b.Fatal("no snippet was chosen")
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		assemble(mid - i%200)
		d = append(d, time.Since(t))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(d, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(d, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(cold.Microseconds()), "cold-µs")
}

// BenchmarkDocumentMemory reports what the engine keeps per open document:
// the snippet index of a 500-line buffer (measured) and the prefix cache
// (its bound: cacheEntries suggestions of at most maxSuggestion bytes and
// a fixed key each).
func BenchmarkDocumentMemory(b *testing.B) {
	text := goSource(1, 500)
	var before, after runtime.MemStats
	keep := make([]*bufIndex, 0, 64)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 64 {
		keep = append(keep, indexBuffer(text, 1))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perIndex := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(keep))
	runtime.KeepAlive(keep)
	b.ReportMetric(perIndex, "index-B/500-lines")
	b.ReportMetric(float64(len(text)), "text-B/500-lines")
	b.ReportMetric(float64(cacheEntries*(maxSuggestion+40)), "cache-max-B")
	for i := 0; i < b.N; i++ {
		indexBuffer(text, 1)
	}
}

// BenchmarkDebounce replays one typing trace (fixed seed) in real time
// against the engine and the scripted model, for several debounces: each
// keystroke is a didChange and an automatic request, as an editor sends
// them. The trace is synthetic: bursts of 8 keys 60-180 ms apart (a fast
// typist writing an identifier) separated by 600 ms pauses. It reports
// the model calls per 100 keystrokes and the time from a burst's last key
// to its suggestion (the debounce plus the scripted model's 20 ms). Run
// with -benchtime 1x; it takes about ten seconds per debounce.
func BenchmarkDebounce(b *testing.B) {
	for _, d := range []time.Duration{-1, 25 * time.Millisecond, 50 * time.Millisecond, 75 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond} {
		name := d.String()
		if d < 0 {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				e, srv := engine(b, llmtest.Script{Steps: []llmtest.Step{{Text: "zzz", Delay: llmtest.Duration(10 * time.Millisecond)}}}, Options{Debounce: d, NoDefinitions: true})
				seed := uint64(42)
				next := func(lo, hi int) time.Duration { // xorshift: the same trace for every debounce
					seed ^= seed << 13
					seed ^= seed >> 7
					seed ^= seed << 17
					return time.Duration(lo+int(seed%uint64(hi-lo))) * time.Millisecond
				}
				text := "package p\n\nvar x = "
				var wg sync.WaitGroup
				var mu sync.Mutex
				var shown []time.Duration
				keys := 0
				for burst := range 5 {
					for k := range 8 {
						text += string(rune('a' + (burst+k)%26))
						keys++
						e.Changed("u")
						t := time.Now()
						last := k == 7
						wg.Add(1)
						go func(text string) {
							defer wg.Done()
							r, _ := e.Complete(context.Background(), Request{URI: "u", Path: "/ws/p.go", Language: "go", Text: text, Offset: len(text)})
							if last && r.Text != "" {
								mu.Lock()
								shown = append(shown, time.Since(t))
								mu.Unlock()
							}
						}(text)
						if !last {
							time.Sleep(next(60, 180))
						}
					}
					time.Sleep(600 * time.Millisecond)
				}
				wg.Wait()
				b.ReportMetric(float64(len(srv.ModelCalls()))*100/float64(keys), "calls/100keys")
				if len(shown) > 0 {
					b.ReportMetric(float64(percentile(shown, 0.5).Milliseconds()), "shown-p50-ms")
				}
			}
		})
	}
}
