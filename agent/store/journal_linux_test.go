package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestReusedSegmentsReplayOnlyTheirRecords writes 12 MB of records into a
// journal bounded at 1 MiB (about 95 segments of 128 KiB, made, in the
// main, from the files of the segments the bound dropped: no unlink,
// create or allocation), and replays it while it is open, as after a
// crash, and after it is closed: each time the records come back in the
// order written, the last one included, with none of the records a reused
// file held before (their checksums still match: only the zeroing before
// a file is named again keeps them out).
func TestReusedSegmentsReplayOnlyTheirRecords(t *testing.T) {
	dir, storeDir := t.TempDir(), t.TempDir()
	j, err := openJournal(dir, storeDir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[uint64]map[string]bool{} // a file (inode) → the segments it was
	val := bytes.Repeat([]byte("v"), 600)
	const n = 20_000
	for i := range n {
		if err := j.write([]mutation{{op: mutSet, key: fmt.Appendf(nil, "k%08d", i), value: val}}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			segs, _ := filepath.Glob(filepath.Join(dir, "*.jnl"))
			for _, p := range segs {
				if info, err := os.Stat(p); err == nil {
					ino := info.Sys().(*syscall.Stat_t).Ino
					if names[ino] == nil {
						names[ino] = map[string]bool{}
					}
					names[ino][filepath.Base(p)] = true
				}
			}
		}
	}
	reused := 0
	for _, segs := range names {
		reused += len(segs) - 1
	}
	t.Logf("%d files were %d segments", len(names), len(names)+reused)
	if reused < 10 {
		t.Errorf("only %d segments were made from a dropped segment's file", reused)
	}
	replay := func(when string) {
		t.Helper()
		var got []int
		rep, err := replayJournal(dir, func(muts []mutation) error {
			i, err := strconv.Atoi(string(muts[0].key[1:]))
			got = append(got, i)
			return err
		})
		if err != nil || len(rep.Torn) > 0 {
			t.Fatalf("replay %s: %v, damage %v", when, err, rep.Torn)
		}
		// The journal holds at least 5/8 of its bound.
		if len(got) < (5<<20/8)/620 || got[len(got)-1] != n-1 {
			t.Fatalf("replay %s: %d records, the last %v", when, len(got), got[len(got)-1:])
		}
		for k := 1; k < len(got); k++ {
			if got[k] != got[k-1]+1 {
				t.Fatalf("replay %s: record %d follows record %d (a reused file's old record?)", when, got[k], got[k-1])
			}
		}
	}
	j.settle()
	replay("while the journal is open")
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	replay("after it is closed")
}
