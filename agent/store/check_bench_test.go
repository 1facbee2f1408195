package store

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
)

// BenchmarkCheckStore is the open-time check (checkStore) of a store of
// 10,000 sessions, beside the open it comes before (openLocal, without
// the check's share: badger's own open, the journal, the witness).
func BenchmarkCheckStore(b *testing.B) {
	dir, jdir := b.TempDir(), b.TempDir()
	l, err := openLocal(dir, jdir, slog.New(slog.DiscardHandler), readWrite)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10_000 {
		s := agent.Session{ID: agent.NewSessionID(), Workspace: fmt.Sprintf("/w%d", i%20), Title: "a title", Created: t0, Updated: t0.Add(time.Duration(i))}
		if resp := l.do(&request{Op: opPutSession, Session: s}); resp.err() != nil {
			b.Fatal(resp.err())
		}
	}
	if err := l.close(); err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		for range b.N {
			if _, err := checkStore(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open+close", func(b *testing.B) {
		for range b.N {
			l, err := openLocal(dir, jdir, slog.New(slog.DiscardHandler), readWrite)
			if err != nil {
				b.Fatal(err)
			}
			l.close()
		}
	})
}
