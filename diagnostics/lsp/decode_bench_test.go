package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// publishPayload is a textDocument/publishDiagnostics of n diagnostics in
// the shapes real servers send: numeric and string codes, a code
// description, related information, and the tags and data darman does not
// read.
func publishPayload(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"uri":"file:///w/node_modules/%40types/a.ts","version":7,"diagnostics":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"range":{"start":{"line":%d,"character":4},"end":{"line":%d,"character":19}},"severity":%d,`, i, i, 1+i%4)
		if i%2 == 0 {
			fmt.Fprintf(&b, `"code":%d,"source":"ts",`, 2322+i)
		} else {
			b.WriteString(`"code":"UnusedVar","codeDescription":{"href":"https://pkg.go.dev/golang.org/x/tools/gopls/internal/analysis/unusedvariable"},"source":"compiler","tags":[1],"data":{"fixes":[{"title":"remove","edits":[1,2,3]}]},`)
		}
		fmt.Fprintf(&b, `"message":"Type 'string' is not assignable to type 'number' (%d).",`, i)
		fmt.Fprintf(&b, `"relatedInformation":[{"location":{"uri":"file:///w/src/b%%20c.ts","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":9}}},"message":"'x' is declared here."}]}`)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// symbolPayload is a workspace/symbol answer of n symbols, half in the
// SymbolInformation shape (gopls, pyright) and half in 3.17's
// WorkspaceSymbol shape, a quarter of those without a range.
func symbolPayload(n int) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		rng := fmt.Sprintf(`,"range":{"start":{"line":%d,"character":5},"end":{"line":%d,"character":17}}`, i, i)
		if i%2 == 1 && i%4 == 3 {
			rng = ""
		}
		fmt.Fprintf(&b, `{"name":"Handler%d","kind":%d,"containerName":"example.com/m/pkg%d","location":{"uri":"file:///w/pkg%d/file.go"%s}}`, i, 5+i%20, i%10, i%10, rng)
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

// BenchmarkDecodePublishDiagnostics is the read goroutine's work for one
// publish of 200 diagnostics: decode and record.
func BenchmarkDecodePublishDiagnostics(b *testing.B) {
	payload := publishPayload(200)
	c := bareClient()
	h := handler{c}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		h.notification("textDocument/publishDiagnostics", payload)
	}
	if got := c.Published(); len(got) != 1 || len(got[0].Items) != 200 || got[0].Items[1].Code != "UnusedVar" {
		b.Fatalf("published %+v", got)
	}
}

// BenchmarkDecodeWorkspaceSymbols is the decode of a workspace/symbol
// answer of 500 symbols.
func BenchmarkDecodeWorkspaceSymbols(b *testing.B) {
	payload := symbolPayload(500)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	var out []WorkspaceSymbol
	for b.Loop() {
		out = nil
		if err := json.Unmarshal(payload, &out); err != nil {
			b.Fatal(err)
		}
	}
	if len(out) != 500 || out[3].HasRange || !out[1].HasRange {
		b.Fatalf("decoded %d symbols: %+v", len(out), out[:4])
	}
}
