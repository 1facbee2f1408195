package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// reportLatency adds the median and 99th percentile of the samples to the
// benchmark's output.
func reportLatency(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	at := func(q float64) float64 { return float64(samples[int(q*float64(len(samples)-1))].Nanoseconds()) / 1000 }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// benchmarkPutPart appends streamed-text-sized parts to one message, the
// write an agent makes most.
func benchmarkPutPart(b *testing.B, s *store.Store) {
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	s.PutMessage(ctx, m)
	text := strings.Repeat("streamed answer text ", 20)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: text}
		start := time.Now()
		if err := s.PutPart(ctx, p); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, samples)
}

func BenchmarkPutPart(b *testing.B) {
	benchmarkPutPart(b, open(b, b.TempDir()))
}

// BenchmarkPutPartClient is the same write from a process that does not own
// the store (here: a second handle, which talks over the socket).
func BenchmarkPutPartClient(b *testing.B) {
	dir := b.TempDir()
	open(b, dir)
	client := open(b, dir)
	if client.Owner() {
		b.Fatal("the second handle owns the store")
	}
	benchmarkPutPart(b, client)
}

// BenchmarkLoadSession reads a session of 10,000 messages and 30,000
// parts: all of it (all: what a turn reads to build its request, and
// `darman sessions export`), and what a front needs to open it, show it
// and continue it (open: the session and the last page of its history).
func BenchmarkLoadSession(b *testing.B) {
	s := open(b, b.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	text := strings.Repeat("x", 200)
	for i := range 10_000 {
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0.Add(time.Duration(i))}
		if err := s.PutMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
		for range 3 {
			s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: text})
		}
	}
	b.Run("all", func(b *testing.B) {
		for range b.N {
			msgs, err := s.Messages(ctx, sess.ID)
			if err != nil || len(msgs) != 10_000 {
				b.Fatalf("%d messages, %v", len(msgs), err)
			}
		}
	})
	b.Run("window", func(b *testing.B) { // never compacted: all of it, page by page
		for range b.N {
			msgs, err := s.Window(ctx, sess.ID)
			if err != nil || len(msgs) != 10_000 {
				b.Fatalf("%d messages, %v", len(msgs), err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for range b.N {
			if _, err := s.Session(ctx, sess.ID); err != nil {
				b.Fatal(err)
			}
			pg, err := s.Page(ctx, sess.ID, store.PageOptions{})
			if err != nil || len(pg.Messages) != 100 || !pg.More || len(pg.Messages[99].Parts) != 3 {
				b.Fatalf("%d messages, %v", len(pg.Messages), err)
			}
		}
	})
	// Last, since it changes the session: compacted 200 messages before
	// its end, what a turn reads is those 200.
	var last []agent.ID
	if pg, err := s.Page(ctx, sess.ID, store.PageOptions{Limit: 200}); err == nil {
		for _, m := range pg.Messages {
			last = append(last, m.Message.ID)
		}
	}
	s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: last[0], SessionID: sess.ID, Kind: agent.PartCompaction, Text: "summary"})
	b.Run("window-compacted", func(b *testing.B) {
		for range b.N {
			msgs, err := s.Window(ctx, sess.ID)
			if err != nil || len(msgs) != 200 {
				b.Fatalf("%d messages, %v", len(msgs), err)
			}
		}
	})
}

// BenchmarkListSessions lists 1,000 sessions of one workspace among 2,000.
func BenchmarkListSessions(b *testing.B) {
	s := open(b, b.TempDir())
	ctx := context.Background()
	for i := range 2000 {
		sess := newSession(fmt.Sprintf("/w%d", i%2), t0.Add(time.Duration(i)*time.Second))
		sess.Title = "a session title of ordinary length"
		if err := s.PutSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		list, err := s.ListSessions(ctx, store.ListOptions{Workspace: "/w1"})
		if err != nil || len(list) != 1000 {
			b.Fatalf("%d sessions, %v", len(list), err)
		}
	}
}

// BenchmarkListSessions10k lists a store of 10,000 sessions: all of them
// (darman sessions list) and the first page of 50 (the panel's picker,
// darman.session.list with a limit).
func BenchmarkListSessions10k(b *testing.B) {
	s := open(b, b.TempDir())
	ctx := context.Background()
	for i := range 10_000 {
		sess := newSession(fmt.Sprintf("/w%d", i%2), t0.Add(time.Duration(i)*time.Second))
		sess.Title = "a session title of ordinary length"
		if err := s.PutSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
	}
	for _, limit := range []int{0, 50} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for range b.N {
				list, err := s.ListSessions(ctx, store.ListOptions{Limit: limit})
				if err != nil || limit > 0 && len(list) != limit || limit == 0 && len(list) != 10_000 {
					b.Fatalf("%d sessions, %v", len(list), err)
				}
			}
		})
	}
}

// BenchmarkOpen opens a store of 50 sessions the way a darman run does
// (read-write, as its owner), writes a new session and closes it: open is
// what a turn waits for before its first model request, close what it
// waits for after the answer (badger flushes its memtable). In one
// process the loop reuses the heap, which Go zeroes again for each
// memtable, so a bigger memtable costs more here than in a darman that
// starts afresh (docs/benchmarks.md, issue 36).
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := store.Open(ctx, dir, store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	for range 50 {
		conversation(b, s, "/w", 3)
	}
	s.Close()
	var open, write, closing []time.Duration
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		s, err := store.Open(ctx, dir, store.Options{GCInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		open = append(open, time.Since(t))
		t = time.Now()
		if err := s.PutSession(ctx, newSession("/w", t0)); err != nil {
			b.Fatal(err)
		}
		write = append(write, time.Since(t))
		t = time.Now()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		closing = append(closing, time.Since(t))
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(open), "open-ms")
	b.ReportMetric(median(write), "write-ms")
	b.ReportMetric(median(closing), "close-ms")
}
