package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// bigOutputText is the 8 KiB output bigOutputTurn i stores.
func bigOutputText(i int) string { return fmt.Sprintf("output %d\n", i) + strings.Repeat("x", 8<<10) }

// bigOutputTurn is one short-lived process that stores a command's 8 KiB
// output (a value badger keeps in its value log): open, a session, a
// message, the tool part, close. It returns the session.
func bigOutputTurn(t testing.TB, dataDir string, i int) agent.ID {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, dataDir, store.Options{GCInterval: -1, Wait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sess := newSession("/w", t0)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText,
		Text: bigOutputText(i)}
	for _, err := range []error{s.PutSession(ctx, sess), s.PutMessage(ctx, m), s.PutPart(ctx, p)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return sess.ID
}

// valueLogs counts the value-log files in a data directory's database.
func valueLogs(t testing.TB, dataDir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(store.DatabaseDir(dataDir), "*.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// BenchmarkOpenValueLogs is BenchmarkOpen's open, write and close of a
// store that 10, 100, 1,000 and 3,000 short-lived processes each stored
// an 8 KiB command output in (issue 39: badger starts a value-log file at
// every open for writing). It reports the value-log files the store has
// when measured. DARMAN_BENCH_VLOG_DIR keeps the grown directory between
// runs.
func BenchmarkOpenValueLogs(b *testing.B) {
	dir := os.Getenv("DARMAN_BENCH_VLOG_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	ctx := context.Background()
	made := 0
	if n, err := os.ReadFile(filepath.Join(dir, "made")); err == nil {
		fmt.Sscan(string(n), &made)
	}
	for _, n := range []int{10, 100, 1000, 3000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			for ; made < n; made++ {
				bigOutputTurn(b, dir, made)
			}
			os.WriteFile(filepath.Join(dir, "made"), fmt.Append(nil, made), 0o600)
			b.ResetTimer()
			var open, closing []time.Duration
			files := valueLogs(b, dir)
			for range b.N {
				t := time.Now()
				s, err := store.Open(ctx, dir, store.Options{GCInterval: -1})
				if err != nil {
					b.Fatal(err)
				}
				open = append(open, time.Since(t))
				if err := s.PutSession(ctx, newSession("/w", t0)); err != nil {
					b.Fatal(err)
				}
				t = time.Now()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				closing = append(closing, time.Since(t))
			}
			median := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			b.ReportMetric(median(open), "open-ms")
			b.ReportMetric(median(closing), "close-ms")
			b.ReportMetric(float64(files), "vlogs")
		})
	}
}
