package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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
	// the segment being written included.
	if total > 1<<20 || len(entries) >= starts {
		t.Fatalf("after %d starts the journal holds %d segments, %d bytes; want at most 1 MiB", starts, len(entries), total)
	}
	s := open(t, dir)
	list, err := s.ListSessions(ctx, store.ListOptions{})
	if err != nil || len(list) != starts {
		t.Fatalf("sessions after the starts: %d, %v", len(list), err)
	}
}

// A darman killed while it writes leaves its journal segment at the size
// it was given when it was made (the records are copied into a mapping of
// it): the zeros after the last record end its replay, which finds every
// acknowledged write and no damage.
func TestJournalOfAKilledWriterReplaysWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	w := start(t, "w", dir, 0)
	w.until(t, "owner true")
	w.until(t, "ack 300 ")
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for line := range w.lines {
		w.record(line)
	}
	w.cmd.Wait()

	segs, _ := filepath.Glob(filepath.Join(dir, "journal", "*.jnl"))
	preallocated := false
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= 4096 && len(b)%4096 == 0 && b[len(b)-1] == 0 && b[len(b)-8] == 0 {
			preallocated = true
		}
	}
	if runtime.GOOS == "linux" && !preallocated {
		t.Errorf("no journal segment was left at its preallocated size by the killed writer: %v", segs)
	}
	keys, torn, err := store.JournalSets(dir)
	if err != nil || len(torn) > 0 {
		t.Fatalf("replaying the killed writer's journal: %v, damage %v", err, torn)
	}
	// Every acknowledged message in the journal's window is in it: the
	// last ones, up to the last, and at least the 300 this test waited
	// for. (A writer that races ahead of this test's reading of its
	// lines writes past the window: 1 MiB of records, some 800 of its
	// messages; their records are in the store, checked below.)
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	in := 0
	for i := len(w.acked) - 1; i >= 0 && set[fmt.Sprintf("m/%s/%s", w.sess, w.acked[i])]; i-- {
		in++
	}
	if in < min(len(w.acked), 300) {
		t.Fatalf("the journal holds the last %d of the %d messages the writer acknowledged", in, len(w.acked))
	}
	for _, id := range w.acked[:len(w.acked)-in] {
		if set[fmt.Sprintf("m/%s/%s", w.sess, id)] {
			t.Fatalf("the journal holds message %s but not every acknowledged one after it", id)
		}
	}
	s := open(t, dir)
	checkAcked(t, s, w)
}

// journalBound checks the journal's size against its bound: a tenth of
// the store's tables and value logs on disk, at least 1 MiB.
func journalBound(t *testing.T, s *store.Store) (journal, bound int64) {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bound = max(1<<20, (st.LSMBytes+st.ValueLogBytes)/10)
	if st.JournalBytes > bound {
		t.Errorf("the journal takes %d bytes beside a store of %d (tables) + %d (value logs); its bound is %d",
			st.JournalBytes, st.LSMBytes, st.ValueLogBytes, bound)
	}
	return st.JournalBytes, bound
}

// The bound follows a store that grows while darman runs (an editor's
// darman lives for days): past 10 MiB it is a tenth of the store, the
// segment being written and the one made ahead of it included.
func TestJournalBoundFollowsAGrowingStore(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	s.PutMessage(ctx, m)
	// 1,200 parts of 34 KiB (40 MiB), in the value log.
	out := strings.Repeat("tool output line\n", 2<<10)
	for range 1200 {
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartTool, Text: out}
		if err := s.PutPart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	journal, bound := journalBound(t, s)
	// Measured only at the open (an empty store), the bound would have
	// stayed at 1 MiB.
	if bound < 3<<20 || journal < 2<<20 {
		t.Fatalf("the journal (%d bytes, bound %d) did not grow with the store", journal, bound)
	}
}

// A darman killed leaves the value log it wrote at the size badger gave
// it when it made it (128 MiB, nearly all of it a hole): the next open
// bounds the journal by the space the store takes, not by that size (which
// made the bound 12.8 MiB beside a store of kilobytes).
func TestJournalBoundAfterAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	w := start(t, "w", dir, 0)
	w.until(t, "owner true")
	w.until(t, "ack 20 ")
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range w.lines {
	}
	w.cmd.Wait()

	s := open(t, dir)
	ctx := context.Background()
	big := strings.Repeat("x", 32<<10)
	for range 100 { // 3.2 MiB
		sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: big, Created: t0, Updated: t0}
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	journalBound(t, s)
}
