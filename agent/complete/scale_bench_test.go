package complete

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// BenchmarkContextAssemblyScale is BenchmarkContextAssembly at the scale
// of a big editor session: the cursor in the middle of a 20 MB file, 2,000
// other open buffers of 100 lines. Each timed request is at a new place of
// the cursor, as typing moves it.
func BenchmarkContextAssemblyScale(b *testing.B) {
	var bufs []Buffer
	for i := range 2000 {
		bufs = append(bufs, Buffer{URI: fmt.Sprintf("file:///ws/b%d.go", i), Path: fmt.Sprintf("/ws/b%d.go", i), Language: "go", Version: 1, Text: goSource(i+1, 100)})
	}
	e, _ := engine(b, llmtest.Script{}, Options{Buffers: func() []Buffer { return bufs }, NoDefinitions: true})
	text := goSource(0, 20<<20/40)
	for len(text) < 20<<20 {
		text += text[:min(len(text), 20<<20-len(text))]
	}
	mid := strings.Index(text[len(text)/2:], "\tvalue := ") + len(text)/2 + len("\tvalue := ")
	req := Request{URI: "file:///ws/main.go", Path: "/ws/main.go", Language: "go", Text: text}
	assemble := func(off int) *Prompt {
		req.Offset = off
		prefixText := text[:off]
		pre := prefixWindow(prefixText, off, e.o.PrefixTokens*bytesPerToken)
		suf := suffixWindow(text, off, e.o.SuffixTokens*bytesPerToken)
		return e.prompt(req, prefixText, pre, off, suf, text[off:lineEnd(text, off)])
	}
	t0 := time.Now()
	assemble(mid)
	cold := time.Since(t0)
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
