package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// BenchmarkLSPManyDocuments is darman lsp holding what a big editor
// session opens: 2,000 documents of about 4 KB, then one of 20 MB. It
// reports darman's anonymous memory per open document (KiB-per-doc) and
// for the big one (MiB-big-doc), the round trip of a one-character
// didChange in the middle of the big document followed by a request
// (didChange-p50-ms: the edit and the answer behind it), and the time from
// an inline-completion request in the big document to the model's
// request (context-p50-ms: the context assembled from it and the 2,000
// others). The figures are the medians of the b.N edits and completions.
func BenchmarkLSPManyDocuments(b *testing.B) {
	var mu sync.Mutex
	var arrived time.Time
	srv := llmtest.Start(b, llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step {
		mu.Lock()
		arrived = time.Now()
		mu.Unlock()
		return llmtest.Step{Text: "value"}
	}})
	c, ws, pid := benchLSP(b, srv, `"model": "local/coder", "api": "completions", "debounce": "0s", "context": {"definitions": false}`)
	status := func() {
		if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, nil); err != nil {
			b.Fatal(err)
		}
	}
	status()
	_, anon0 := residentMiB(b, pid)
	const docs = 2000
	var small strings.Builder
	for i := range 100 {
		fmt.Fprintf(&small, "func handle%d(request string) (result string, err error) { return }\n", i)
	}
	for i := range docs {
		uri := "file://" + filepath.Join(ws, "docs", fmt.Sprintf("d%04d.go", i))
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1,
			"text": fmt.Sprintf("package docs\n\n// file %d\n%s", i, small.String())}})
	}
	status()
	_, anon1 := residentMiB(b, pid)
	var big strings.Builder
	for big.Len() < 20<<20 {
		fmt.Fprintf(&big, "\tvalue%d := compute(value, %d) // the big file's line\n", big.Len(), big.Len())
	}
	lines := strings.Count(big.String(), "\n")
	bigURI := "file://" + filepath.Join(ws, "big", "big.go")
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": bigURI, "languageId": "go", "version": 1,
		"text": "package big\n\nfunc f() {\n" + big.String() + "}\n"}})
	status()
	_, anon2 := residentMiB(b, pid)
	line := 3 + lines/2
	version := 1
	var changes, contexts []time.Duration
	col := 1
	for b.Loop() {
		version++
		t0 := time.Now()
		c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": bigURI, "version": version},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]int{"line": line, "character": col},
				"end": map[string]int{"line": line, "character": col}}, "text": "x"}}})
		status()
		changes = append(changes, time.Since(t0))
		col++
		t1 := time.Now()
		var res any
		if err := c.Call("textDocument/inlineCompletion", map[string]any{"textDocument": map[string]any{"uri": bigURI},
			"position": map[string]int{"line": line, "character": col}, "context": map[string]any{"triggerKind": 1}}, &res); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		at := arrived
		mu.Unlock()
		if at.Before(t1) {
			b.Fatalf("the completion reached no model: %v", res)
		}
		contexts = append(contexts, at.Sub(t1))
	}
	b.ReportMetric((anon1-anon0)*1024/docs, "KiB-per-doc")
	b.ReportMetric(anon2-anon1, "MiB-big-doc")
	b.ReportMetric(anon2, "MiB-anon")
	b.ReportMetric(pct(changes, 0.5)/1000, "didChange-p50-ms")
	b.ReportMetric(pct(contexts, 0.5)/1000, "context-p50-ms")
	b.ReportMetric(pct(contexts, 0.99)/1000, "context-p99-ms")
}
