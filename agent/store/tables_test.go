package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// tables returns the names of the table files in the data directory's
// database.
func tables(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(store.DatabaseDir(dataDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sst") {
			out = append(out, e.Name())
		}
	}
	return out
}

// shortProcess runs a writer process that opens the store, writes one
// message and closes it, as a `darman run` does.
func shortProcess(t *testing.T, dir string) *proc {
	t.Helper()
	p := start(t, "short", dir, 1)
	p.until(t, "done")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("the writer did not close cleanly: %v", err)
	}
	return p
}

// Each process that writes leaves a table when it closes the store, and
// badger's compactors start too late to merge them in a short-lived one:
// the tables, which every open checks, opens and reads through, grew by
// one a process (issue 39). They stay bounded however many processes
// come and go, and nothing written is lost on the way.
func TestTablesStayBoundedAcrossShortProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	var procs []*proc
	most := 0
	for range 3 * store.MergeTables {
		procs = append(procs, shortProcess(t, dir))
		most = max(most, len(tables(t, dir)))
	}
	// At most mergeTables in level 0 (the last merge's opener added one
	// to mergeTables-1), plus the level below: one table for a store this
	// small.
	if most > store.MergeTables+1 {
		t.Fatalf("after %d processes that each wrote and closed the store, it held up to %d tables (now %v); want at most %d",
			len(procs), most, tables(t, dir), store.MergeTables+1)
	}
	s := open(t, dir)
	for _, p := range procs {
		checkAcked(t, s, p)
	}
}

// A process killed while it merges the tables at its close leaves the
// merge's new tables beside the old ones, which the manifest still names:
// that is not damage (the new ones hold nothing the old ones lack), the
// store opens as it was, and the next close merges again.
func TestKilledDuringTheMergeIsNotDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	var procs []*proc
	for len(tables(t, dir)) < store.MergeTables {
		procs = append(procs, shortProcess(t, dir))
	}
	before := tables(t, dir)
	// The store as it is before the merge, kept aside.
	aside := filepath.Join(t.TempDir(), "data")
	copyDir(t, dir, aside)
	// A process that only reads still merges what it found when it
	// closes.
	s := open(t, dir)
	if _, err := s.ListSessions(context.Background(), store.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := tables(t, dir)
	var merged []string
	for _, name := range after {
		if !slices.Contains(before, name) {
			merged = append(merged, name)
		}
	}
	if len(merged) == 0 || len(after) >= len(before) {
		t.Fatalf("the close did not merge the %d tables: before %v, after %v", len(before), before, after)
	}
	// What a kill after the merge wrote its tables and before it named
	// them in the manifest leaves: the store before the merge, the
	// merge's tables, and the witness of a store that was open.
	for _, name := range merged {
		b, err := os.ReadFile(filepath.Join(store.DatabaseDir(dir), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.DatabaseDir(aside), name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.MarkRunning(store.DatabaseDir(aside)); err != nil {
		t.Fatal(err)
	}
	s = open(t, aside)
	for _, p := range procs {
		checkAcked(t, s, p)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(tables(t, aside)); n > store.MergeTables+1 {
		t.Fatalf("after the killed merge the store holds %d tables: %v", n, tables(t, aside))
	}
}

// A process that stops after a merge named its new tables in the manifest
// and before it removed the old ones leaves them on disk, which its
// clean close may even have recorded (badger's compaction gives up the
// removals at the first table it cannot remove, and the close goes on).
// That is not damage: a read-only open (`darman sessions list`) reads
// everything, the old tables are removed, and the next open finds nothing
// to refuse. (A read-only badger open removes them too, and left the
// witness naming them: the next open refused the store as damaged.)
func TestTablesLeftAfterAMergeAreNotDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	db := store.DatabaseDir(dir)
	var procs []*proc
	for len(tables(t, dir)) < store.MergeTables {
		procs = append(procs, shortProcess(t, dir))
	}
	old := map[string][]byte{}
	for _, name := range tables(t, dir) {
		b, err := os.ReadFile(filepath.Join(db, name))
		if err != nil {
			t.Fatal(err)
		}
		old[name] = b
	}
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // merges the tables
		t.Fatal(err)
	}
	merged := tables(t, dir)
	for name, b := range old {
		if !slices.Contains(merged, name) {
			if err := os.WriteFile(filepath.Join(db, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.MarkClosed(db); err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{true, false} {
		s, err := store.Open(context.Background(), dir, store.Options{ReadOnly: readOnly})
		if err != nil {
			t.Fatalf("open (read-only %v) of a store with the old tables left: %v", readOnly, err)
		}
		for _, p := range procs {
			checkAcked(t, s, p)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := tables(t, dir); !slices.Equal(got, merged) {
		t.Fatalf("tables after the opens: %v, want the merged ones %v", got, merged)
	}
}

// manifestSize is the size of the MANIFEST in the data directory's
// database.
func manifestSize(t *testing.T, dataDir string) int64 {
	t.Helper()
	info, err := os.Stat(filepath.Join(store.DatabaseDir(dataDir), "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// The MANIFEST logs every table each open flushed and merged, and every
// open reads it whole: badger rewrites it only after 10,000 deletions, so
// a history of short opens grew it by some 40 bytes an open, read at
// every start (issue 39). A read-write open rewrites it when it is mostly
// history, and everything written is still there.
func TestManifestStaysBoundedAcrossOpens(t *testing.T) {
	if testing.Short() {
		t.Skip("opens the store a few hundred times")
	}
	dir := t.TempDir()
	ctx := context.Background()
	var ids []agent.ID
	most := int64(0)
	for range 900 {
		s, err := store.Open(ctx, dir, store.Options{GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		sess := newSession("/w", t0)
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		most = max(most, manifestSize(t, dir))
	}
	// Unbounded, 900 opens make it some 22 KiB.
	if bound := int64(store.ManifestRewriteAt + 4<<10); most > bound {
		t.Fatalf("after %d opens that each wrote and closed the store, its MANIFEST grew to %d bytes; want at most %d", len(ids), most, bound)
	}
	s := open(t, dir)
	for _, id := range ids {
		if _, err := s.Session(ctx, id); err != nil {
			t.Fatalf("session %s written before a rewrite: %v", id, err)
		}
	}
}

// A kill during the rewrite leaves its file, half-written, beside the
// MANIFEST it did not replace: the store opens as it was.
func TestKilledDuringTheManifestRewriteIsNotDamage(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir)
	sess := newSession("/w", t0)
	if err := s.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store.DatabaseDir(dir), "MANIFEST-REWRITE"), []byte("Bdgr\x00\x00\x00\x08\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	if _, err := s.Session(ctx, sess.ID); err != nil {
		t.Fatalf("after a killed rewrite: %v", err)
	}
}
