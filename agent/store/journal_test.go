package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// The journal stays within its bound however many times darman starts:
// each start writes a segment of its own, smaller than the rotation's
// size, and those used to pile up (one per `darman run`, a journal ten
// times the store after 1,000 runs, listed at every start).
func TestJournalStaysBoundedAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	big := strings.Repeat("x", 32<<10)
	starts := 50
	for range starts {
		s, err := store.Open(ctx, dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: big, Created: t0, Updated: t0}
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	entries, err := os.ReadDir(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
	}
	// 50 starts wrote 1.6 MB; the bound for a store this small is 1 MiB,
	// give or take the segment being written (a quarter of it at most).
	if total > 1<<20+1<<18 || len(entries) >= starts {
		t.Fatalf("after %d starts the journal holds %d segments, %d bytes; want at most 1.25 MiB", starts, len(entries), total)
	}
	s := open(t, dir)
	list, err := s.ListSessions(ctx, store.ListOptions{})
	if err != nil || len(list) != starts {
		t.Fatalf("sessions after the starts: %d, %v", len(list), err)
	}
}
