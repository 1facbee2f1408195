package lsp_test

import (
	"testing"
)

// BenchmarkSessionLoad opens a session of 10,000 messages and 30,000
// parts with darman.session.load over the LSP pipe, as an editor does:
// the last page of its history, what a front needs to show the session
// and continue it (the time includes encoding the answer and the test
// client's decoding of it). older is the next page back.
func BenchmarkSessionLoad(b *testing.B) {
	e := start(b, options{})
	id := string(longSession(b, e.store, e.root, 10_000, 3))
	var first loaded
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			first = loaded{}
			e.client.mustCommand("darman.session.load", map[string]any{"sessionId": id}, &first)
		}
		if len(first.Updates) != 300 || !first.More {
			b.Fatalf("%d updates, more %v", len(first.Updates), first.More)
		}
	})
	b.Run("older", func(b *testing.B) {
		var l loaded
		for b.Loop() {
			l = loaded{}
			e.client.mustCommand("darman.session.load", map[string]any{"sessionId": id, "before": first.FirstMessageID}, &l)
		}
		if len(l.Updates) != 300 || !l.More {
			b.Fatalf("%d updates, more %v", len(l.Updates), l.More)
		}
	})
}
