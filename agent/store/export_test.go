package store

import (
	"path/filepath"
	"time"
)

// SetCloseWait sets how long Close waits for badger, for a test.
func SetCloseWait(d time.Duration) { closeWait = d }

// DatabaseDir is badger's directory in a data directory.
func DatabaseDir(dataDir string) string { return databaseDir(dataDir) }

// SetMovedHook sets what the layout move calls after each file it renames.
func SetMovedHook(f func(n int)) { movedHook = f }

// MergeTables is how many level-0 tables make a closing process merge
// them.
const MergeTables = mergeTables

// MarkRunning writes the witness an open store leaves in badger's
// directory dir, as a process killed while it ran leaves it.
func MarkRunning(dir string) error { return markRunning(dir) }

// ManifestRewriteAt is the MANIFEST size from which a read-write open
// rewrites one that is mostly history.
const ManifestRewriteAt = manifestRewriteAt

// ReplayJournal reads the journal in a data directory: the transactions
// it holds and the segments whose replay stopped at damage.
func ReplayJournal(dataDir string) (int, []string, error) {
	rep, err := replayJournal(filepath.Join(dataDir, journalDir), func([]mutation) error { return nil })
	return rep.Records, rep.Torn, err
}

// SetBare opens the stores opened from now on without the open-time
// check and the journal (see bare), for BenchmarkTurn; the returned func
// puts them back.
func SetBare(on bool) func() {
	was := bare
	bare = on
	return func() { bare = was }
}

// JournalSets returns the keys the journal in a data directory sets,
// oldest first, and the segments whose replay stopped at damage.
func JournalSets(dataDir string) ([]string, []string, error) {
	var keys []string
	rep, err := replayJournal(filepath.Join(dataDir, journalDir), func(muts []mutation) error {
		for _, m := range muts {
			if m.op == mutSet {
				keys = append(keys, string(m.key))
			}
		}
		return nil
	})
	return keys, rep.Torn, err
}

// MarkClosed writes the witness a clean close leaves in badger's
// directory dir: the files as they are.
func MarkClosed(dir string) error { return writeWitness(dir) }

// SetFoldAt sets how many small value-log files make a closing process
// fold them (see foldValueLogsAt); the returned func puts it back.
func SetFoldAt(n int) func() {
	was := foldValueLogsAt
	foldValueLogsAt = n
	return func() { foldValueLogsAt = was }
}
