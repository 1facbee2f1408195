package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// Repaired says what Repair did.
type Repaired struct {
	// Damaged is false when the store was sound and nothing was done.
	Damaged bool `json:"damaged"`
	// Damage is what was found wrong, as the refusal to open said it.
	Damage []string `json:"damage,omitempty"`
	// Aside is where the damaged database's files were moved, untouched.
	Aside string `json:"aside,omitempty"`
	// Lost are the files that could not be read, with why: what was only
	// in them (and not in the journal) is not in the rebuilt store.
	Lost []string `json:"lost,omitempty"`
	// Sessions and Records are what the rebuilt store holds.
	Sessions int `json:"sessions"`
	Records  int `json:"records"`
	// Journal is how many of the journal's transactions were replayed.
	Journal int `json:"journal"`
	// Unrecovered are the records (by key) whose value could not be read
	// from the damaged files nor found in the journal.
	Unrecovered []string `json:"unrecovered,omitempty"`
	// Unreadable says why nothing could be read back from the damaged
	// files, when nothing could (the journal may still have been replayed).
	Unreadable string `json:"unreadable,omitempty"`
}

// Repair checks the store in dir and, when it is damaged, moves the
// database's files aside untouched (into a directory beside dir, named
// after it), starts a new store in dir and fills it with every record
// that can still be read from them, then replays the journal over it. The
// damaged files are read through a view of them (links to them, and a
// manifest naming every table that reads whole), so neither a damaged
// manifest nor a damaged table keeps the rest from being read. It needs
// the store closed in every darman process, and is safe to run again: a
// sound store is left alone.
func Repair(dir string, log *slog.Logger) (Repaired, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Repaired{}, err
	}
	lockPath := filepath.Join(dir, "owner.lock")
	lock, err := tryLock(lockPath)
	if err != nil {
		return Repaired{}, fmt.Errorf("cannot lock the session store in %s: %w", dir, err)
	}
	if lock == nil {
		return Repaired{}, fmt.Errorf("a darman process is using the session store in %s (it holds %s): close the editors and shells running darman, then repair again", dir, lockPath)
	}
	defer unlock(lock)

	db, err := settleLayout(dir)
	if err != nil {
		return Repaired{}, err
	}
	jdir := journalPath(dir)
	problem := verify(db, jdir, log)
	if problem == nil {
		return Repaired{}, nil
	}
	out := Repaired{Damaged: true}
	var de *DamageError
	if errors.As(problem, &de) {
		out.Damage = de.Tables
	} else {
		out.Damage = []string{problem.Error()}
	}
	out.Aside = fmt.Sprintf("%s.damaged-%s", dir, time.Now().UTC().Format("20060102-150405"))
	for i := 2; ; i++ {
		if _, err := os.Lstat(out.Aside); errors.Is(err, os.ErrNotExist) {
			break
		}
		out.Aside = fmt.Sprintf("%s.damaged-%s-%d", dir, time.Now().UTC().Format("20060102-150405"), i)
	}
	// Badger's files move aside as they are: their directory is renamed.
	if err := os.Rename(db, out.Aside); err != nil {
		return out, fmt.Errorf("moving the damaged store aside: %w", err)
	}
	if err := os.Mkdir(db, 0o700); err != nil {
		return out, fmt.Errorf("the damaged store is in %s, but a new one cannot be made in %s: %w", out.Aside, db, diskFull(err))
	}
	// Without the journal: its open would trim it to the new store's
	// bound (an empty store's) and pack its segments, while it is
	// replayed below. The next start opens it.
	fresh, err := openLocal(db, "", log, readWrite)
	if err != nil {
		return out, fmt.Errorf("the damaged store is in %s, but a new one cannot be made in %s: %w", out.Aside, db, err)
	}
	defer fresh.close()

	lostKeys := map[string]bool{}
	view, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".repair-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(view)
	if out.Lost, err = makeView(out.Aside, view); err != nil {
		out.Unreadable = err.Error()
	} else if err := salvage(view, fresh, log, lostKeys); err != nil {
		out.Unreadable = err.Error()
	}
	rep, err := replayInto(jdir, fresh, lostKeys)
	if err != nil {
		return out, fmt.Errorf("replaying the journal: %w", err)
	}
	out.Journal = rep.Records
	if err := fresh.rebuildRecent(); err != nil {
		return out, fmt.Errorf("indexing the repaired sessions: %w", err)
	}
	for _, t := range rep.Torn {
		out.Lost = append(out.Lost, "journal "+t)
	}
	for k, lost := range lostKeys {
		if lost {
			out.Unrecovered = append(out.Unrecovered, k)
		}
	}
	slices.Sort(out.Unrecovered)
	out.Sessions, out.Records, err = fresh.count()
	return out, err
}

// verify reports what is wrong with the store in dir (badger's
// directory, its journal in jdir): what the open-time check finds, or the
// first record that cannot be read when every record is read. The caller
// holds the owner lock.
func verify(dir, jdir string, log *slog.Logger) error {
	l, err := openLocal(dir, jdir, log, readOnly)
	if err != nil {
		return err
	}
	defer l.close()
	// An iterator stops quietly at a block it cannot read: every table's
	// blocks are checked first.
	m, err := readManifest(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return &DamageError{Dir: dir, Tables: []string{"MANIFEST: " + err.Error()}}
	}
	var bad []string
	for _, id := range m.live() {
		if err := readTable(table.NewFilename(id, dir), options.CompressionType(m.tables[id].compression)); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", table.IDToFilename(id), err))
		}
	}
	if len(bad) > 0 {
		return &DamageError{Dir: dir, Tables: bad}
	}
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err == nil && isJSONKey(it.Item().Key()) && !json.Valid(v) {
				err = errors.New("not the JSON it was written as")
			}
			if err != nil {
				return &DamageError{Dir: dir, Tables: []string{fmt.Sprintf("the record %q is unreadable: %v", it.Item().Key(), err)}}
			}
		}
		// Badger's compaction skips a block it cannot read, and drops its
		// records quietly: what the journal last wrote must be there.
		return l.matchJournal(txn)
	})
}

// isJSONKey reports whether the record at key holds JSON (the others are
// raw: appended text, blobs, the schema version).
func isJSONKey(key []byte) bool {
	k := string(key)
	switch {
	case strings.HasPrefix(k, sessionPrefix), strings.HasPrefix(k, messagePrefix), strings.HasPrefix(k, grantPrefix),
		strings.HasPrefix(k, checkpointPrefix):
		return true
	case strings.HasPrefix(k, partPrefix):
		return strings.Count(k, "/") == 3
	}
	return false
}

// matchJournal checks that each record the journal wrote last holds what
// it wrote (or is gone, when it deleted it).
func (l *local) matchJournal(txn *badger.Txn) error {
	last := map[string][]byte{} // nil: deleted
	if _, err := replayJournal(l.journalDir, func(muts []mutation) error {
		for _, m := range muts {
			switch m.op {
			case mutSet:
				last[string(m.key)] = m.value
			case mutDelete:
				last[string(m.key)] = nil
			case mutDropPrefix:
				for k := range last {
					if strings.HasPrefix(k, string(m.key)) {
						delete(last, k)
					}
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var missing []string
	for k, want := range last {
		item, err := txn.Get([]byte(k))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			if want != nil {
				missing = append(missing, k)
			}
		case err != nil:
			return err
		case want == nil:
			missing = append(missing, k+" (deleted, and back)")
		default:
			v, err := item.ValueCopy(nil)
			if err != nil || !bytes.Equal(v, want) {
				missing = append(missing, k+" (different)")
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return &DamageError{Dir: l.dir, Tables: []string{fmt.Sprintf("%d records the journal wrote are missing or different (%s)",
		len(missing), strings.Join(missing[:min(len(missing), 3)], ", "))}}
}

// makeView fills view with links to (or, where links are not possible,
// copies of) the readable files of the damaged database in from, and a
// manifest naming every table that reads whole, all at level 0: badger
// reads level 0's tables by version, so tables that overlap (a compaction
// cut short) read right. Nothing in from is written. It returns the
// tables left out, with why.
func makeView(from, view string) ([]string, error) {
	files, err := listStore(from)
	if err != nil {
		return nil, err
	}
	m, merr := readManifest(filepath.Join(from, badger.ManifestFilename))
	var lost []string
	set := pb.ManifestChangeSet{}
	for _, id := range slices.Sorted(mapsKeys(files.tables)) {
		name := table.IDToFilename(id)
		compression := uint32(options.Snappy)
		if info, ok := m.tables[id]; ok && merr == nil {
			compression = info.compression
		}
		if err := readTable(filepath.Join(from, name), options.CompressionType(compression)); err != nil {
			lost = append(lost, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if err := linkOrCopy(filepath.Join(from, name), filepath.Join(view, name)); err != nil {
			return lost, err
		}
		set.Changes = append(set.Changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE, Level: 0,
			EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: compression})
	}
	// A table the manifest names and that is gone held records that only
	// the journal can bring back: the report says so, as for one that
	// cannot be read.
	if merr == nil {
		for _, id := range m.live() {
			if _, ok := files.tables[id]; !ok {
				lost = append(lost, table.IDToFilename(id)+": missing (MANIFEST names it)")
			}
		}
	}
	// Badger opening the view cuts the newest value log and the memtable
	// logs where their records stop: those are copies. The older value
	// logs are only read, and tables only read or unlinked: links.
	var lastVlog uint32
	if len(files.vlogs) > 0 {
		lastVlog = slices.Max(slicesKeys(files.vlogs))
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return lost, err
	}
	for _, e := range entries {
		from, to := filepath.Join(from, e.Name()), filepath.Join(view, e.Name())
		switch ext := filepath.Ext(e.Name()); {
		case ext == ".mem" || e.Name() == fmt.Sprintf("%06d.vlog", lastVlog):
			err = copyWritten(from, to)
		case ext == ".vlog":
			// One no longer than its header holds nothing, and badger
			// would grow it or (through the link) empty it to delete it.
			if info, ierr := e.Info(); ierr == nil && info.Size() > vlogHeader {
				err = linkOrCopy(from, to)
			}
		}
		if err != nil {
			return lost, err
		}
	}
	body, err := proto.Marshal(&set)
	if err != nil {
		return lost, err
	}
	var b bytes.Buffer
	b.WriteString("Bdgr")
	binary.Write(&b, binary.BigEndian, uint16(0))
	binary.Write(&b, binary.BigEndian, uint16(8))
	binary.Write(&b, binary.BigEndian, uint32(len(body)))
	binary.Write(&b, binary.BigEndian, crc32.Checksum(body, y.CastagnoliCrcTable))
	b.Write(body)
	return lost, os.WriteFile(filepath.Join(view, badger.ManifestFilename), b.Bytes(), 0o600)
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readTable checks a table's footer and every block against its checksum.
func readTable(path string, compression options.CompressionType) error {
	if err := checkTable(path); err != nil {
		return err
	}
	return readBlocks(path, compression)
}

func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return diskFull(err)
	}
	return dst.Close()
}

// copyWritten copies a file without the pages of zeros at its end (a log
// badger preallocated and a crash left at full size). The page the last
// byte written is in is copied whole: a record may end in zeros.
func copyWritten(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	end := len(raw)
	for end > 0 && raw[end-1] == 0 {
		end--
	}
	if end <= vlogHeader {
		return nil // nothing was written after the header, if that
	}
	end = min(len(raw), (end+4095)/4096*4096)
	return diskFull(os.WriteFile(to, raw[:end], 0o600))
}

// salvage copies every record of the view in from into the store to.
// lostKeys gets the keys whose value could not be read.
func salvage(from string, to *local, log *slog.Logger, lostKeys map[string]bool) (err error) {
	src, err := openLocal(from, "", log, salvageMode)
	if err != nil {
		return err
	}
	defer src.close()
	wb := to.db.NewWriteBatch()
	defer wb.Cancel()
	err = src.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.KeyCopy(nil)
			if bytes.Equal(key, schemaKey) {
				continue
			}
			v, err := item.ValueCopy(nil)
			if err != nil || isJSONKey(key) && !json.Valid(v) {
				lostKeys[string(key)] = true // its value-log file is damaged
				continue
			}
			if err := wb.Set(key, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return diskFull(wb.Flush())
}

// replayInto replays the journal in dir (a journal's directory) into the
// store to, in order.
func replayInto(dir string, to *local, lostKeys map[string]bool) (journalReplay, error) {
	wb := to.db.NewWriteBatch()
	defer func() { wb.Cancel() }()
	rep, err := replayJournal(dir, func(muts []mutation) error {
		for _, m := range muts {
			var err error
			switch m.op {
			case mutSet:
				delete(lostKeys, string(m.key))
				err = wb.Set(m.key, m.value)
			case mutDelete:
				delete(lostKeys, string(m.key))
				err = wb.Delete(m.key)
			case mutDropPrefix:
				for k := range lostKeys {
					if strings.HasPrefix(k, string(m.key)) {
						delete(lostKeys, k)
					}
				}
				if err = wb.Flush(); err == nil {
					err = to.db.DropPrefix(m.key)
					wb = to.db.NewWriteBatch()
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	return rep, diskFull(wb.Flush())
}

// count returns how many sessions and records the store holds.
func (l *local) count() (sessions, records int, err error) {
	err = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			records++
			if bytes.HasPrefix(it.Item().Key(), []byte(sessionPrefix)) {
				sessions++
			}
		}
		return nil
	})
	return sessions, records, err
}
