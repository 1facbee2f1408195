package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// The segments earlier processes wrote are packed at the next start, in
// the background: the journal of ten darman runs takes a fraction of its
// records' bytes on disk, replays every transaction, and a repair of a
// store whose tables are all deleted brings every session back from it.
func TestJournalSegmentsArePackedAndReplayWhole(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var ids []agent.ID
	for run := range 10 {
		s, err := store.Open(ctx, dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: fmt.Sprintf("run %d session %d: %s", run, i, prose(200)), Created: t0, Updated: t0}
			if err := s.PutSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, sess.ID)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// This start packs the last run's segment (the others were packed
	// by the starts after them), and writes nothing.
	open(t, dir).Close()
	jdir := filepath.Join(dir, "journal")
	entries, err := os.ReadDir(jdir)
	if err != nil {
		t.Fatal(err)
	}
	var packed, disk, raw int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		base, ok := strings.CutSuffix(e.Name(), ".jnz")
		if !ok {
			t.Errorf("%s is in the journal after a start that wrote nothing: every earlier segment is packed", e.Name())
			continue
		}
		var n, size int64
		if _, err := fmt.Sscanf(base, "%d-%d", &n, &size); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		packed++
		disk += info.Size()
		raw += size
	}
	if packed != 10 || disk*3 > raw {
		t.Fatalf("%d packed segments, %d bytes on disk for %d bytes of records: want 10, at most a third", packed, disk, raw)
	}
	records, torn, err := store.ReplayJournal(dir)
	if err != nil || len(torn) > 0 || records != len(ids)+1 { // and the schema's version, at the first start
		t.Fatalf("replay: %d transactions (want %d), damage %v, %v", records, len(ids)+1, torn, err)
	}
	// Every table gone: the sessions are in the journal alone.
	tables, _ := filepath.Glob(filepath.Join(store.DatabaseDir(dir), "*.sst"))
	for _, p := range tables {
		must(os.Remove(p))
	}
	res, err := store.Repair(dir, nil)
	if err != nil || !res.Damaged {
		t.Fatalf("repair: %+v, %v", res, err)
	}
	s := open(t, dir)
	for _, id := range ids {
		if _, err := s.Session(ctx, id); err != nil {
			t.Errorf("after the repair: %v", err)
		}
	}
}

// A darman killed while it packed a segment leaves the packed file not
// yet renamed (.tmp), or renamed beside the segment not yet removed: the
// replay reads each transaction once, and the next start removes what is
// left over.
func TestJournalPackingInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for range 3 {
		s := open(t, dir)
		for range 5 {
			if err := s.PutSession(ctx, agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: prose(100), Created: t0, Updated: t0}); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	jdir := filepath.Join(dir, "journal")
	before, _, err := store.ReplayJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the last segment unpacked, then pack it as a start does.
	raws, _ := filepath.Glob(filepath.Join(jdir, "*.jnl"))
	if len(raws) != 1 {
		t.Fatalf("unpacked segments: %v, want the last run's", raws)
	}
	keep, err := os.ReadFile(raws[0])
	must(err)
	open(t, dir).Close()
	packed, _ := filepath.Glob(filepath.Join(jdir, strings.TrimSuffix(filepath.Base(raws[0]), ".jnl")+"-*.jnz"))
	if len(packed) != 1 {
		t.Fatalf("the last run's segment was not packed: %v", packed)
	}
	// Killed after the rename: both files. Killed before it: a .tmp.
	must(os.WriteFile(raws[0], keep, 0o600))
	must(os.WriteFile(packed[0]+".tmp", []byte("half a packed segment"), 0o600))
	after, torn, err := store.ReplayJournal(dir)
	if err != nil || len(torn) > 0 || after != before {
		t.Fatalf("replay with a packing interrupted: %d transactions (want %d), damage %v, %v", after, before, torn, err)
	}
	open(t, dir).Close()
	for _, p := range []string{raws[0], packed[0] + ".tmp"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the next start", filepath.Base(p))
		}
	}
	if after, _, _ := store.ReplayJournal(dir); after != before {
		t.Fatalf("after the next start the journal holds %d transactions, want %d", after, before)
	}
}

// A repair replays the journal as it was when the repair began: the new
// store's open trims the journal to the new store's bound (1 MiB, the
// store being empty) and packs its segments, and did so while the repair
// read it, losing what the damaged store's bound (a tenth of 40 MiB)
// had kept.
func TestRepairReplaysTheWholeJournal(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	sess := newSession("/w", t0)
	must(s.PutSession(ctx, sess))
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	must(s.PutMessage(ctx, m))
	out := strings.Repeat("tool output line\n", 2<<10)
	for range 1200 { // 40 MiB in the value log; the journal's bound grows to 4 MiB
		must(s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartTool, Text: out}))
	}
	// The session and its message written again, in the journal's window.
	must(s.PutMessage(ctx, m))
	must(s.Close())
	keys, _, err := store.JournalSets(dir)
	must(err)
	var inJournal []agent.ID
	for _, k := range keys {
		if id, ok := strings.CutPrefix(k, fmt.Sprintf("p/%s/%s/", sess.ID, m.ID)); ok && !strings.Contains(id, "/") {
			inJournal = append(inJournal, agent.ID(id))
		}
	}
	if len(inJournal) < 60 {
		t.Fatalf("the journal holds %d of the parts; want the last 4 MiB of them", len(inJournal))
	}
	tables, _ := filepath.Glob(filepath.Join(store.DatabaseDir(dir), "*.sst"))
	for _, p := range tables {
		must(os.Remove(p))
	}
	if res, err := store.Repair(dir, nil); err != nil || !res.Damaged {
		t.Fatalf("repair: %+v, %v", res, err)
	}
	msgs, err := open(t, dir).Messages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	have := map[agent.ID]bool{}
	for _, mp := range msgs {
		for _, p := range mp.Parts {
			have[p.ID] = true
		}
	}
	lost := 0
	for _, id := range inJournal {
		if !have[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of the %d parts the journal held are missing after the repair", lost, len(inJournal))
	}
}
