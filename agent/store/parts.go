package store

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/darman-dev/darman/agent"
)

// putPart writes a part whole: its record replaces what was appended to it
// (see Store.AppendPart), which is folded into the record by its writer.
func (l *local) putPart(txn *wtx, p agent.Part) error {
	if err := l.putJSON(txn, partKey(p), p); err != nil {
		return err
	}
	if !mayGrow(p.Kind) {
		return nil
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: appendsOf(p)})
	var stale [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		stale = append(stale, it.Item().KeyCopy(nil))
	}
	it.Close()
	if len(stale) > l.foldBatch() {
		return errManyAppends
	}
	for _, k := range stale {
		if err := l.delete(txn, k); err != nil {
			return err
		}
	}
	return nil
}

// errManyAppends is putPart's answer when the part has more appends than
// one transaction may delete (see foldBatch): they are merged first.
var errManyAppends = errors.New("more appends than a transaction folds")

// foldBatch is how many appends one transaction folds into a part's record
// or merges with each other. Badger refuses a transaction whose entries
// exceed 15 % of a memtable, counted as their number times a skiplist
// node's 96 bytes (DB.MaxBatchCount) or as their bytes (DB.MaxBatchSize:
// a key and a value below the value threshold, a deletion its key), and a
// part streamed for a few minutes has thousands of appends (one every
// 50 ms): half of what fits, with keys taken as 256 bytes (theirs are
// about 100), keeps every fold inside both.
func (l *local) foldBatch() int {
	return int(min(l.db.MaxBatchCount(), l.db.MaxBatchSize()/256) / 2)
}

// mergeBytes bounds the value mergeAppends makes of one run of appends.
const mergeBytes = 4 << 20

// mergeAppends replaces the first run of part p's appends that can be
// merged (up to foldBatch of them, up to mergeBytes of text) with one
// append holding their text in order, in one transaction: what a read of
// the part joins is the same before and after, and a crash between two
// merges leaves a part that reads whole. putPart folds the appends once
// few enough are left.
func (l *local) mergeAppends(p agent.Part) error {
	return l.update(func(txn *wtx) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: appendsOf(p)})
		defer it.Close()
		var run [][]byte
		var text []byte
		for it.Rewind(); it.Valid() && len(run) < l.foldBatch(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(run) > 0 && len(text)+len(v) > mergeBytes {
				if len(run) > 1 {
					break
				}
				run, text = run[:0], text[:0] // a big one stays as it is
			}
			run = append(run, it.Item().KeyCopy(nil))
			text = append(text, v...)
		}
		if len(run) < 2 {
			return fmt.Errorf("part %s has more appends than a transaction can fold, none small enough to merge", p.ID)
		}
		if err := l.set(txn, run[0], text); err != nil {
			return err
		}
		for _, k := range run[1:] {
			if err := l.delete(txn, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// mayGrow reports whether parts of kind k are written as they stream, and
// so may have appends: text, reasoning and tool calls (a command's output).
func mayGrow(k agent.PartKind) bool {
	return k == agent.PartText || k == agent.PartReasoning || k == agent.PartTool
}
