package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// BenchmarkFirstWrite is a start's first write after the open, on a data
// directory whose previous process wrote a turn's records (~200 KB, which
// this start packs in the background): what a darman run's first record
// waits for once the store is open. Each iteration is one such process:
// open, the first write (timed), a turn's records, close.
func BenchmarkFirstWrite(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	turn := func(s *store.Store) time.Duration {
		start := time.Now()
		sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: "t", Created: t0, Updated: t0}
		if err := s.PutSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
		first := time.Since(start)
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
		if err := s.PutMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
		for range 50 {
			if err := s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: prose(4000)}); err != nil {
				b.Fatal(err)
			}
		}
		return first
	}
	var firsts []float64
	b.ResetTimer()
	for i := 0; i <= b.N; i++ {
		s, err := store.Open(ctx, dir, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		first := turn(s)
		if i > 0 { // the first process has nothing to pack
			firsts = append(firsts, float64(first.Microseconds())/1000)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(firsts[len(firsts)/2], "first-write-ms")
	b.ReportMetric(firsts[len(firsts)*9/10], "first-write-p90-ms")
	b.ReportMetric(firsts[len(firsts)-1], "first-write-max-ms")
}
