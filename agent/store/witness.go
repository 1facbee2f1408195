package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
)

// witness is what the owner found on disk when it closed the database
// cleanly: the size of each file badger keeps. The next open compares:
// after a clean close nothing may be shorter, longer, missing or extra (an
// older copy put back, a file cut at a record boundary). It is removed
// when the store opens, so after a crash there is none and only the
// checkStore's other checks apply.
//
// While the store is open, the witness says only which value-log file
// badger writes to (Writing): after a crash, that file or a later one
// must be there, since the tables point into it.
type witness struct {
	Files   map[string]int64 `json:"files,omitempty"`
	Writing *uint32          `json:"writing,omitempty"`
}

const witnessName = "store.witness"

func readWitness(dir string) (witness, bool) {
	var w witness
	raw, err := os.ReadFile(filepath.Join(dir, witnessName))
	if err != nil || json.Unmarshal(raw, &w) != nil || w.Files == nil && w.Writing == nil {
		return w, false
	}
	return w, true
}

// compare lists how the files f differ from the witness. A table in gone
// (MANIFEST records it deleted) may have been removed since: a process
// that stops between the manifest's record and the file's removal leaves
// it for the next open to remove.
func (w witness) compare(f storeFiles, gone map[uint64]struct{}) []string {
	if w.Writing != nil {
		if len(f.vlogs) == 0 || slices.Max(slicesKeys(f.vlogs)) < *w.Writing {
			return []string{fmt.Sprintf("%06d.vlog, the value log darman was writing to, is missing", *w.Writing)}
		}
		return nil
	}
	now := map[string]int64{}
	if f.manifest >= 0 {
		now[badger.ManifestFilename] = f.manifest
	}
	for id, n := range f.tables {
		now[table.IDToFilename(id)] = n
	}
	for id, n := range f.vlogs {
		now[fmt.Sprintf("%06d.vlog", id)] = n
	}
	deleted := map[string]bool{}
	for id := range gone {
		deleted[table.IDToFilename(id)] = true
	}
	var bad []string
	for name, n := range w.Files {
		switch got, ok := now[name]; {
		case !ok && deleted[name]:
		case !ok:
			bad = append(bad, name+" is missing")
		case got < n:
			bad = append(bad, fmt.Sprintf("%s is shorter than darman left it (%d bytes, was %d): cut short or an older copy", name, got, n))
		case got > n:
			bad = append(bad, fmt.Sprintf("%s is longer than darman left it (%d bytes, was %d): written by something else", name, got, n))
		}
	}
	for name := range now {
		if _, ok := w.Files[name]; !ok {
			bad = append(bad, name+" was not there when darman closed the store (put back from elsewhere?)")
		}
	}
	return bad
}

// writeWitness records the database's files after a clean close (see
// markRunning for the witness of an open store).
func writeWitness(dir string) error {
	f, err := listStore(dir)
	if err != nil {
		return err
	}
	w := witness{Files: map[string]int64{}}
	if f.manifest >= 0 {
		w.Files[badger.ManifestFilename] = f.manifest
	}
	for id, n := range f.tables {
		w.Files[table.IDToFilename(id)] = n
	}
	for id, n := range f.vlogs {
		w.Files[fmt.Sprintf("%06d.vlog", id)] = n
	}
	return saveWitness(dir, w)
}

func saveWitness(dir string, w witness) error {
	raw, err := json.Marshal(w)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, witnessName+".tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, witnessName))
}

// closeWitness is writeWitness(dir) at this process's close, which
// stats only the files that may have changed since the open: a table
// file is never written again once made, and a value log only while
// badger writes to it, which is one it made at the open (the newest then
// is stat-ed too); the others' sizes are the witness's of the open, which
// the check found them to have. A listing that stats every file took a
// sixth of what the check and the journal added to a turn, and a store
// keeps a value log for each darman that wrote a big value.
func (l *local) closeWitness() error {
	if l.atOpen == nil {
		return writeWitness(l.dir)
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	newest, last := "", uint64(0)
	for name := range l.atOpen {
		id, err := strconv.ParseUint(strings.TrimSuffix(name, ".vlog"), 10, 32)
		if strings.HasSuffix(name, ".vlog") && err == nil && (newest == "" || id > last) {
			newest, last = name, id
		}
	}
	w := witness{Files: map[string]int64{}}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		switch {
		case name == badger.ManifestFilename:
		case strings.HasSuffix(name, ".sst"):
			id, ok := table.ParseFileID(name)
			if !ok {
				continue
			}
			name = table.IDToFilename(id)
		case strings.HasSuffix(name, ".vlog"):
			id, err := strconv.ParseUint(strings.TrimSuffix(name, ".vlog"), 10, 32)
			if err != nil {
				continue
			}
			name = fmt.Sprintf("%06d.vlog", id)
		default:
			continue
		}
		if n, ok := l.atOpen[name]; ok && name != badger.ManifestFilename && name != newest {
			w.Files[name] = n
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		w.Files[name] = info.Size()
	}
	return saveWitness(l.dir, w)
}

// markRunning writes the witness of a store badger has open for writing
// from the names in dir alone: the value log
// being written is the newest, and no file's size is needed. A listing
// that stats every file took a sixth of what the check and the journal
// added to a turn.
func markRunning(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var last uint32
	found := false
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".vlog")
		if !ok || e.IsDir() {
			continue
		}
		if id, err := strconv.ParseUint(name, 10, 32); err == nil {
			last, found = max(last, uint32(id)), true
		}
	}
	if !found {
		return nil
	}
	return saveWitness(dir, witness{Writing: &last})
}
