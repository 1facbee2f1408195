package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
)

// BenchmarkCheckStore is the open-time check (checkStore) of a store of
// 10,000 sessions, beside the open it comes before (openLocal, without
// the check's share: badger's own open, the journal, the witness);
// check-blocks is the check where the tables' sums are not kept (the
// first open after a table was made), which decompresses every block.
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
	// The first open after the writes reads the new table's blocks and
	// keeps its sum (see readTableFile).
	if l, err = openLocal(dir, jdir, slog.New(slog.DiscardHandler), readWrite); err != nil {
		b.Fatal(err)
	}
	l.close()
	b.Run("check", func(b *testing.B) {
		for range b.N {
			if _, err := checkStore(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	sums := readSums(dir)
	b.Run("check-blocks", func(b *testing.B) {
		for range b.N {
			// As the first open after a table was made.
			os.Remove(filepath.Join(dir, sumsName))
			if _, err := checkStore(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	saveSums(dir, sums)
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
