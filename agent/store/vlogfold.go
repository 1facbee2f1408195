package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/y"
)

// Badger starts a new value-log file at every open for writing and never
// writes to an older one again, so each short-lived darman that stores a
// value of 4 KiB or more (a command's output, a file, an image) leaves a
// file of its own, kept as long as one of its values is live: badger's
// value-log collection only takes a file whose dead bytes it has counted,
// and a file of live values has none. Every open, and every close, pays
// for each file (badger opens, maps and, at its close, syncs and unmaps
// them all: at 2,300 files 80 ms an open and 570 ms a close,
// docs/benchmarks.md), so a user of `darman run` alone, whose processes
// never live the 5 minutes to a collection, would pay more with every
// turn.
//
// A process that opens the store for writing with more than
// foldValueLogsAt small value-log files folds them when it closes it, after its
// answer: it writes the live values of the oldest files again (the same
// key and value, now in its own file), which leaves the old copies dead,
// and merges level 0 at its close (as for mergeTables), which drops the
// old versions and counts their bytes dead; the next process that folds
// collects those files first (badger's own collection, which moves
// anything still live before it removes a file). Nothing is removed that
// badger has not first found dead, so a process killed at any point
// leaves every value readable.

// foldValueLogsAt is how many small value-log files (under foldSmall) a
// store may keep before a process folds them. A file of foldSmall or more
// is left as it is: what it holds is worth a file, and folding it again
// and again would rewrite its values at every fold.
var foldValueLogsAt = 16 // a variable for the tests (SetFoldAt)

const foldSmall = 1 << 20

// foldBudget bounds the value-log bytes one close reads to fold, and
// foldCollect the files it collects, so that a close stays short however
// many files an older darman left.
const (
	foldBudget  = 32 << 20
	foldCollect = 4096
)

// foldAtClose reports which value-log files (oldest first) a read-write
// open of a store with the value logs vlogs (ID → size) folds at its
// close, or nil.
func foldAtClose(vlogs map[uint32]int64) []uint32 {
	var small []uint32
	for id, n := range vlogs {
		if n < foldSmall {
			small = append(small, id)
		}
	}
	if len(small) <= foldValueLogsAt {
		return nil
	}
	slices.Sort(small)
	return small
}

// foldValueLogs collects the value-log files an earlier fold left dead,
// then writes the live values of the files ids again, oldest first, up to
// foldBudget bytes of them. It runs before badger's close; a failure only
// leaves the files for a later fold.
func (l *local) foldValueLogs(ids []uint32) {
	for range foldCollect {
		err := l.db.RunValueLogGC(0.5)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			break
		}
		if err != nil {
			l.log.Warn("store: value-log collection failed; the files stay for a later close", "dir", l.dir, "err", err)
			return
		}
	}
	var read int64
	for _, id := range ids {
		if read >= foldBudget {
			return
		}
		keys, n, err := valueLogKeys(filepath.Join(l.dir, fmt.Sprintf("%06d.vlog", id)))
		read += n
		if errors.Is(err, os.ErrNotExist) {
			continue // collected above, or an empty one badger removed at the open
		}
		if err != nil {
			l.log.Warn("store: could not read a value log to fold it; it stays as it is", "dir", l.dir, "file", id, "err", err)
			continue
		}
		if err := l.rewriteLive(keys); err != nil {
			l.log.Warn("store: could not fold the value logs; they stay for a later close", "dir", l.dir, "err", err)
			return
		}
	}
}

// vlogKey is one entry's key in a value-log file, and the version it was
// written at.
type vlogKey struct {
	key     []byte
	version uint64
}

// valueLogKeys returns the keys of the entries in the value-log file at
// path, up to the first that does not read (the zeros after the last, or
// the end badger truncated it to), and the file's size.
func valueLogKeys(path string) ([]vlogKey, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := info.Size()
	if size <= vlogHeader {
		return nil, size, nil
	}
	r := &countReader{r: bufio.NewReaderSize(io.NewSectionReader(f, vlogHeader, size-vlogHeader), 256<<10), n: vlogHeader}
	var keys []vlogKey
	for {
		e, err := readVlogEntry(r)
		if err != nil || e.zero {
			return keys, size, nil
		}
		if len(e.key) < 8 || badgerKey(e.key) {
			continue
		}
		keys = append(keys, vlogKey{key: y.ParseKey(e.key), version: e.version})
	}
}

// badgerKey reports whether a value-log entry's key is one of badger's own.
func badgerKey(k []byte) bool {
	const prefix = "!badger!"
	return len(k) >= len(prefix) && string(k[:len(prefix)]) == prefix
}

// rewriteLive writes again each key whose newest version is the one
// given (the value in the file being folded), with the same value and
// user meta, in transactions of a few keys: a key changed or removed
// since is left alone.
func (l *local) rewriteLive(keys []vlogKey) error {
	const batch = 64
	for len(keys) > 0 {
		some := keys[:min(batch, len(keys))]
		keys = keys[len(some):]
		err := l.db.Update(func(txn *badger.Txn) error {
			for _, k := range some {
				item, err := txn.Get(k.key)
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if item.Version() != k.version || item.IsDeletedOrExpired() {
					continue
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				e := badger.NewEntry(k.key, v).WithMeta(item.UserMeta())
				e.ExpiresAt = item.ExpiresAt()
				if err := txn.SetEntry(e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, badger.ErrConflict) {
			return err
		}
	}
	return nil
}
