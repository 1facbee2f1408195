package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/y"
	jsonv2 "github.com/go-json-experiment/json"

	"github.com/darman-dev/darman/agent"
)

// schemaVersion is the layout this darman reads and writes. A database with
// a lower version is migrated on open; a higher one is refused.
const schemaVersion = 2

// migrations[i] upgrades a database from schema i to i+1. Schema 0 is a
// database without a version key, i.e. a new one.
//
// The index of sessions by update time (schema 2, see recentKey) is built
// by migrate itself, in batches, before the version is written.
var migrations = []func(txn *badger.Txn) error{
	0: func(*badger.Txn) error { return nil },
	1: func(*badger.Txn) error { return nil },
}

// local runs store calls on a badger database this process owns.
type local struct {
	db *badger.DB
	// dir is badger's directory (DATA/store); journalDir the journal's
	// (DATA/journal), "" for a repair's view and the store a repair
	// fills, which have none.
	dir        string
	journalDir string
	log        *slog.Logger
	// readOnly is set when the database was opened read-only (see
	// Options.ReadOnly): nothing is written, no journal is kept.
	readOnly bool
	// fold are the value-log files this process folds at its close (see
	// foldValueLogsAt), nil for none.
	fold []uint32
	// indexed is set when the store has the index of sessions by update
	// time (schema 2; a read-only open of an older store has not).
	indexed bool
	// journal is the way back when the database's files are damaged (see
	// journal.go); jmu keeps its records in commit order.
	journal *journal
	jmu     sync.Mutex
	// sinceRoom counts the bytes written since room last asked the
	// filesystem; it starts full, so the first write asks.
	sinceRoom atomic.Int64
	// atOpen is what the witness of the last clean close said of the
	// files (nil when there was none): see closeWitness.
	atOpen map[string]int64
	// sums is the saving of the tables' sums the open-time check found
	// (see openLocal), which close waits for.
	sums sync.WaitGroup
	// written counts the bytes of keys and values this process has put
	// into badger since it opened it (a deletion counts its key): what
	// Stats reports, and what the streaming benchmarks measure.
	written atomic.Int64
}

// openMode is how openLocal opens a database.
type openMode int

const (
	readWrite openMode = iota
	readOnly
	// salvageMode opens a repair's rebuilt view of a damaged database:
	// without the consistency check (the view is made to pass it) and
	// without a journal. Badger opens it read-only, or for writing when a
	// crash left memtable logs (which can only be read so); nothing goes
	// through it, and what badger may write there is in copies (see
	// makeView).
	salvageMode
)

func badgerOptions(dir string, log *slog.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(badgerLogger{log}).
		// darman shares the machine with an editor and language servers:
		// keep badger's memory small. Sessions are small; big tool outputs
		// go to the value log, whose garbage collection can reclaim them.
		WithMemTableSize(memTableSize).
		WithNumMemtables(2).
		WithBlockCacheSize(8 << 20).
		WithIndexCacheSize(8 << 20).
		WithNumCompactors(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(8).
		WithValueThreshold(4 << 10).
		WithValueLogFileSize(64 << 20).
		// A bit flipped in a table or the value log is an error when it
		// is read, not a different record.
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true)
}

// memTableSize is the size of badger's memtables, and of the tables it
// flushes them to. It bounds a transaction to 15 % of it (see foldBatch);
// values of 4 KiB or more (big tool outputs, files, images) go to the
// value log and count only their key there. A smaller one does not make
// a darman start faster: a new process's memtable is fresh zeroed pages,
// touched only as they fill (1 MiB and 8 MiB measured the same from the
// process's start to the open store, docs/benchmarks.md, issue 36).
const memTableSize = 8 << 20

// mergeTables bounds the tables in badger's level 0, which every open
// pays for (each is checked, opened and consulted by reads). Each
// process that wrote flushes its memtable to a new level-0 table when it
// closes, and badger's compactors, which merge level 0 into the level
// below, start up to a second after the open: a darman run or a sessions
// command is gone long before, so without this the tables grow by one a
// process (63 after the 1,000 runs of scripts/bench-history.sh). A
// process that opens a store with this many level-0 tables or more
// merges them, its own new one with them, when it closes it: after its
// answer, not on the way to it, once every mergeTables processes. A
// process killed during the merge leaves the merge's new tables unnamed
// by the manifest, which the next open tells apart from damage (see
// checkStore) and badger removes; the old ones are still whole.
const mergeTables = 8

// openLocal opens the database in dir (badger's directory), with the
// journal in journalDir.
func openLocal(dir, journalDir string, log *slog.Logger, mode openMode) (l *local, err error) {
	ro := mode == readOnly
	if mode == salvageMode {
		files, err := listStore(dir)
		ro = err == nil && files.mems == 0
	}
	opts := badgerOptions(dir, log).WithReadOnly(ro)
	// Before badger touches the files, check that they agree with each
	// other (see checkStore): badger would "fix" what does not, which
	// destroys data, and panics on some damage in goroutines of its own.
	var shape storeShape
	var fold []uint32
	if mode != salvageMode {
		if bare {
			shape, err = bareShape(dir)
		} else {
			shape, err = checkStore(dir)
		}
		if err != nil {
			return nil, err
		}
		// A store that short-lived processes left many tables in level 0
		// is merged when this process closes it (see mergeTables).
		// One that many processes left many value-log files is folded
		// at its close, which merges level 0 too (see foldValueLogsAt).
		if mode == readWrite {
			fold = foldAtClose(shape.vlogs)
		}
		opts = opts.WithCompactL0OnClose(mode == readWrite && (shape.level0 >= mergeTables || fold != nil))
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
		if err != nil && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrDiskFull) {
			err = fmt.Errorf("cannot open the session store in %s: %w\n"+
				"The data may be damaged: %s; or set dataDir to another directory", dir, err, repairHint)
		}
	}()
	l = &local{dir: dir, journalDir: journalDir, log: log, readOnly: mode != readWrite, fold: fold}
	l.sinceRoom.Store(roomSlack)
	// The next open reads whole only the tables made since (see
	// readTableFile). A read-only open keeps them too (the caller holds
	// the owner lock, and the sums are no part of the store's data): a
	// data directory read by `darman sessions list` after a darman
	// merged its tables would otherwise decompress them at every list.
	if mode != salvageMode && shape.newSums && !bare {
		save := func() {
			if err := saveSums(dir, shape.sums); err != nil {
				log.Debug("store: could not keep the tables' sums; the next open reads their blocks again", "dir", dir, "err", err)
			}
		}
		if mode == readWrite {
			// While badger opens: nothing waits for them but the close
			// (or a failed open, below).
			sums := &l.sums
			sums.Go(save)
			defer func() {
				if err != nil {
					sums.Wait()
				}
			}()
		} else {
			save()
		}
	}
	if mode == readWrite && !bare && journalDir != "" {
		if l.journal, err = openJournal(journalDir, dir); err != nil {
			return nil, err
		}
		// Its first segment is being made: an open that fails below
		// removes it.
		j := l.journal
		defer func() {
			if err != nil {
				j.close()
			}
		}()
	}
	if mode == readWrite && !bare {
		// The witness describes the files as they were closed; from now
		// on badger changes them. What it says of the files badger does
		// not change serves the witness of this process's close.
		if w, ok := readWitness(dir); ok {
			l.atOpen = w.Files
		}
		if err := os.Remove(filepath.Join(dir, witnessName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if mode == readWrite {
		// A manifest that is mostly history is read whole at every open
		// (see manifestRewriteAt).
		if shape.wantsRewrite() {
			if err := rewriteManifest(dir, shape.manifest); err != nil {
				log.Warn("store: could not rewrite the manifest; it serves as it is", "dir", dir, "err", err)
			}
		}
	}
	if mode == readOnly {
		// A memtable's log is left only by a darman that stopped without
		// closing the store (the caller holds the owner lock), and ends
		// in space it never wrote, which only a writer may cut off (badger
		// refuses it read-only): the check above found the files in
		// agreement, so the store is opened as any darman starting would.
		// A new store (no manifest; the check found no other files
		// either) is made, as before there was a read-only open. Table
		// files the manifest does not name (left by a process that
		// stopped in a merge or a compaction; the check found them
		// harmless) are removed by badger's open, read-only too: that is
		// a writer's open, and one it is.
		if files, err := listStore(dir); err == nil && (files.mems > 0 || files.manifest < 0 || shape.leftovers) {
			return openLocal(dir, journalDir, log, readWrite)
		}
	}
	db, err := badger.Open(opts)
	if err != nil {
		if db != nil {
			// Some of badger's failures come with the half-opened
			// database, whose goroutines run until it is closed (which
			// may itself fail on what was not opened).
			func() {
				defer func() { recover() }()
				db.Close()
			}()
		}
		return nil, err
	}
	l.db = db
	if mode != readWrite {
		l.indexed = l.schema() >= 2
		return l, nil
	}
	if err := l.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	l.indexed = true
	if bare {
		return l, nil
	}
	if err := markRunning(dir); err != nil {
		db.Close()
		return nil, diskFull(err)
	}
	return l, nil
}

// bare, set only by BenchmarkTurn, opens stores as a darman without the
// open-time check and the journal would: no checkStore (the directory
// is listed and MANIFEST read for what the merge of level 0 and the
// manifest's rewrite need, see bareShape), no tables' sums, no witness,
// no journal. It is there to measure what they cost a turn; no option,
// setting or flag reaches it.
var bare bool

// bareShape is what an open without the check learns of a store: the
// tables in level 0 and the manifest, from MANIFEST read without
// judging it (see bare).
func bareShape(dir string) (storeShape, error) {
	var shape storeShape
	files, err := listStore(dir)
	shape.vlogs = files.vlogs
	if err != nil || files.manifest < 0 {
		return shape, err
	}
	m, err := readManifest(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return shape, nil
	}
	shape.manifest, shape.manifestBytes = m, files.manifest
	shape.leftovers = len(files.tables) > len(m.tables)
	for _, t := range m.tables {
		if t.level == 0 {
			shape.level0++
		}
	}
	return shape, nil
}

// schema is the store's schema version, 0 when it has none (or it cannot
// be read: migrate says why).
func (l *local) schema() int {
	have := 0
	l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(schemaKey)
		if err != nil {
			return err
		}
		v, _ := item.ValueCopy(nil)
		have, _ = strconv.Atoi(string(v))
		return nil
	})
	return have
}

func (l *local) migrate() error {
	if l.schema() < 2 {
		if err := l.rebuildRecent(); err != nil {
			return fmt.Errorf("indexing the sessions by update time: %w", err)
		}
	}
	return l.db.Update(func(txn *badger.Txn) error {
		have, found := 0, false
		item, err := txn.Get(schemaKey)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			v, _ := item.ValueCopy(nil)
			have, err = strconv.Atoi(string(v))
			if err != nil {
				return fmt.Errorf("the schema version %q is unreadable", v)
			}
			found = true
		}
		if have > schemaVersion {
			return fmt.Errorf("the session store was written by a newer darman (schema %d; this darman reads up to %d): upgrade darman", have, schemaVersion)
		}
		if found && have == schemaVersion {
			// Nothing to write: a start that writes nothing leaves no
			// table for its close to flush and no journal segment.
			return nil
		}
		for v := have; v < schemaVersion; v++ {
			if err := migrations[v](txn); err != nil {
				return fmt.Errorf("migrating the session store from schema %d: %w", v, err)
			}
		}
		return txn.Set(schemaKey, []byte(strconv.Itoa(schemaVersion)))
	})
}

// closeWait bounds how long close waits for badger. Its Close flushes the
// memtable to a table file, and a flush that fails is retried every
// second for ever: a store whose directory was removed under it, or whose
// disk is gone, would keep darman from ever exiting (an editor's darman,
// its editor closed, running on).
var closeWait = 10 * time.Second

// errCloseGaveUp is in close's error when badger was still closing.
var errCloseGaveUp = errors.New("badger still has the directory")

// close closes badger, or gives up after closeWait and says so. What was
// not flushed is in badger's write-ahead log (the .mem files), which the
// next open reads back, so giving up loses nothing that still has a
// directory to be in.
func (l *local) close() error {
	l.sums.Wait()
	done := make(chan error, 1)
	go func() {
		if l.fold != nil {
			l.foldValueLogs(l.fold)
		}
		done <- l.db.Close()
	}()
	select {
	case err := <-done:
		if l.journal != nil {
			if jerr := l.journal.close(); err == nil {
				err = jerr
			}
		}
		if err == nil && !l.readOnly && !bare {
			// What the files are now, for the next open to compare.
			err = l.closeWitness()
		}
		return err
	case <-time.After(closeWait):
		return fmt.Errorf("the session store in %s did not close within %s: badger cannot write its files there (was the directory removed, or is the disk full?); darman stops without it, and what it had not written is read back from its log at the next start if the directory is still there: %w", l.dir, closeWait, errCloseGaveUp)
	}
}

// do runs one call. It is safe for concurrent use.
func (l *local) do(req *request) response {
	for {
		resp := l.try(req)
		if resp.Code != "blocked" {
			return resp
		}
		// A session is being deleted, which blocks writes for a moment.
		// Every call is safe to run again.
		time.Sleep(2 * time.Millisecond)
	}
}

func (l *local) try(req *request) (resp response) {
	var err error
	switch req.Op {
	case opPutSession:
		err = l.update(func(txn *wtx) error {
			var old agent.Session
			switch err := l.get(txn.Txn, sessionKey(req.Session.ID), &old, "session", req.Session.ID); {
			case errors.Is(err, ErrNotFound):
				return l.putSession(txn, req.Session, nil)
			case err != nil:
				return err
			}
			return l.putSession(txn, req.Session, &old)
		})
	case opGetSession:
		err = l.db.View(func(txn *badger.Txn) error {
			err := l.get(txn, sessionKey(req.ID), &resp.Session, "session", req.ID)
			if errors.Is(err, ErrNotFound) && l.indexed && l.listed(txn, req.ID) {
				// Badger answers "not found" for a key whose table block
				// it cannot read: the index names the session.
				return &DamageError{Dir: l.dir, Tables: []string{fmt.Sprintf("a record cannot be read back: the session %s is in the index by update time, but its record is gone", req.ID)}}
			}
			return err
		})
	case opResolve:
		resp.ID, err = l.resolve(req.Text)
	case opListSessions:
		resp.Sessions, err = l.listSessions(req.List)
	case opDeleteSession:
		err = l.deleteSession(req.ID)
	case opPutMessage:
		err = l.update(func(txn *wtx) error { return l.putMessage(txn, req.Message) })
	case opPutPart:
		for {
			err = l.update(func(txn *wtx) error { return l.putPart(txn, req.Part) })
			if !errors.Is(err, errManyAppends) {
				break
			}
			if err = l.mergeAppends(req.Part); err != nil {
				break
			}
		}
	case opAppendPart:
		err = l.update(func(txn *wtx) error { return l.set(txn, appendKey(req.Part, req.Seq), []byte(req.Text)) })
	case opMessages:
		resp.Messages, err = l.messages(req.ID)
	case opWindow:
		resp.Messages, err = l.window(req.ID)
	case opPage:
		var pg Page
		pg, err = l.page(req.ID, req.Page)
		resp.Messages, resp.More = pg.Messages, pg.More
	case opPutGrant:
		err = l.update(func(txn *wtx) error { return l.putJSON(txn, grantKey(req.Grant), req.Grant) })
	case opGrants:
		resp.Grants, err = l.grants(req.Text)
	case opDeleteGrant:
		err = l.update(func(txn *wtx) error { return l.delete(txn, grantKey(req.Grant)) })
	case opImport:
		err = l.importSession(req.Export)
	case opStats:
		resp.Stats, err = l.stats()
	case opCompact:
		err = l.compact()
	case opPutCheckpoint, opCheckpoints:
		resp.Checkpoints, err = l.checkpoints(req)
	case opPutBlob:
		err = l.putBlob(req.ID, req.Text, req.Data)
	case opBlob:
		resp.Data, err = l.blob(req.ID, req.Text)
	default:
		err = fmt.Errorf("unknown store call %d (a newer darman owns the store? restart the editors that run darman)", req.Op)
	}
	if readDamage(err) {
		err = &DamageError{Dir: l.dir, Tables: []string{"a record cannot be read back: " + err.Error()}}
	}
	resp.setErr(err)
	if errors.Is(err, badger.ErrBlockedWrites) {
		resp.Code = "blocked"
	}
	return resp
}

// readDamage reports whether err is badger failing to read what it wrote:
// a block or a value whose checksum does not match, a value-log file
// missing or shorter than a pointer into it.
func readDamage(err error) bool {
	if err == nil || errors.Is(err, ErrDamaged) {
		return false
	}
	if errors.Is(err, y.ErrChecksumMismatch) || errors.Is(err, y.ErrEOF) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"checksum mismatch", "file with ID", "Invalid value pointer", "Invalid read", "while reading block"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// update runs fn in a read-write transaction, again if it raced another
// writer of the same keys.
//
// The transaction's writes go to the journal once badger committed them;
// a write that would not fit on the disk is refused first (see room).
func (l *local) update(fn func(txn *wtx) error) error {
	if l.readOnly {
		return errReadOnly
	}
	for {
		txn := &wtx{Txn: l.db.NewTransaction(true)}
		txn.muts = txn.few[:0]
		err := fn(txn)
		if err == nil {
			err = l.room(txn.bytes)
		}
		if err == nil {
			err = l.commit(txn)
		}
		txn.Discard()
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
	}
}

// commit commits txn and journals its writes, under jmu so that the
// journal's order is the commit order.
func (l *local) commit(txn *wtx) error {
	l.jmu.Lock()
	defer l.jmu.Unlock()
	if l.journal == nil { // bare, or the store a repair fills
		return diskFull(txn.Commit())
	}
	return l.journal.commit(txn.muts, func() error { return diskFull(txn.Commit()) })
}

// errReadOnly is returned by writes to a store opened read-only.
var errReadOnly = errors.New("the session store was opened read-only")

// wtx is a read-write transaction that remembers its writes for the
// journal.
type wtx struct {
	*badger.Txn
	muts  []mutation
	bytes int
	// few holds muts for most transactions (a part and its appends, a
	// session and its index entry): no allocation of their own.
	few [4]mutation
}

// Values are encoded with the JSON v2 encoder (the future encoding/json/v2):
// the same JSON, decoded about three times faster, which is what loading a
// long session costs.
func (l *local) putJSON(txn *wtx, key []byte, v any) error {
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return err
	}
	return l.set(txn, key, b)
}

func (l *local) set(txn *wtx, key, value []byte) error {
	l.written.Add(int64(len(key) + len(value)))
	if err := txn.Set(key, value); err != nil {
		return err
	}
	// badger keeps key and value until the transaction ends, and so does
	// the journal's record: no copies.
	txn.muts = append(txn.muts, mutation{op: mutSet, key: key, value: value})
	txn.bytes += len(key) + len(value)
	return nil
}

func (l *local) delete(txn *wtx, key []byte) error {
	l.written.Add(int64(len(key)))
	if err := txn.Delete(key); err != nil {
		return err
	}
	txn.muts = append(txn.muts, mutation{op: mutDelete, key: key})
	txn.bytes += len(key)
	return nil
}

// putSession writes a session's record and its entry in the index by
// update time (recentKey), removing the entry of old, what the record
// held before (nil for a new session).
func (l *local) putSession(txn *wtx, s agent.Session, old *agent.Session) error {
	if old != nil {
		if k := recentKey(*old); !bytes.Equal(k, recentKey(s)) {
			if err := l.delete(txn, k); err != nil {
				return err
			}
		}
	}
	if err := l.set(txn, recentKey(s), recentValue(s)); err != nil {
		return err
	}
	return l.putJSON(txn, sessionKey(s.ID), s)
}

// rebuildRecent writes the index of sessions by update time anew from
// the session records: at the migration to schema 2, and after a repair
// (whose records may come from different times).
func (l *local) rebuildRecent() error {
	if err := l.db.DropPrefix([]byte(recentPrefix)); err != nil {
		return diskFull(err)
	}
	wb := l.db.NewWriteBatch()
	defer wb.Cancel()
	var muts []mutation
	err := l.db.View(func(txn *badger.Txn) error {
		return l.scan(txn, []byte(sessionPrefix), func(key, b []byte) error {
			var s agent.Session
			if err := l.decode(key, b, &s); err != nil {
				return err
			}
			k, v := recentKey(s), recentValue(s)
			muts = append(muts, mutation{op: mutSet, key: k, value: v})
			return wb.Set(k, v)
		})
	})
	if err != nil {
		return err
	}
	if err := wb.Flush(); err != nil {
		return diskFull(err)
	}
	if l.journal == nil {
		return nil
	}
	l.jmu.Lock()
	defer l.jmu.Unlock()
	if err := l.journal.write([]mutation{{op: mutDropPrefix, key: []byte(recentPrefix)}}); err != nil {
		return err
	}
	return l.journal.write(muts)
}

// get reads the JSON value at key into v, with errors a human can act on.
func (l *local) get(txn *badger.Txn, key []byte, v any, what string, id agent.ID) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return notFound(what, id)
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return l.decode(item.Key(), b, v) })
}

func (l *local) decode(key, b []byte, v any) error {
	if err := jsonv2.Unmarshal(b, v); err != nil {
		return &DamageError{Dir: l.dir, Tables: []string{fmt.Sprintf("the record %q is unreadable (%v)", key, err)}}
	}
	return nil
}

func (l *local) putMessage(txn *wtx, m agent.Message) error {
	var s agent.Session
	if err := l.get(txn.Txn, sessionKey(m.SessionID), &s, "session", m.SessionID); err != nil {
		return err
	}
	old := s
	key := messageKey(m.SessionID, m.ID)
	_, err := txn.Get(key)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		s.Messages++
	case err != nil:
		return err
	}
	for _, t := range []time.Time{m.Created, m.Completed} {
		if t.After(s.Updated) {
			s.Updated = t
		}
	}
	if err := l.putSession(txn, s, &old); err != nil {
		return err
	}
	return l.putJSON(txn, key, m)
}

// deleteSession removes a session, its messages and parts, and its
// sub-task sessions. Messages and parts go with badger's DropPrefix, which
// also records the value-log space they held so garbage collection can give
// it back; writes of other sessions wait (see update) while it runs.
func (l *local) deleteSession(id agent.ID) error {
	var children []agent.ID
	err := l.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(sessionKey(id)); errors.Is(err, badger.ErrKeyNotFound) {
			return notFound("session", id)
		} else if err != nil {
			return err
		}
		return l.scan(txn, []byte(sessionPrefix), func(key, b []byte) error {
			var s agent.Session
			if jsonv2.Unmarshal(b, &s) == nil && s.ParentID == id {
				children = append(children, s.ID)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, child := range children {
		if err := l.deleteSession(child); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	if err := l.dropPrefix(messagesOf(id), partsOf(id), checkpointsOf(id), blobsOf(id)); err != nil {
		return err
	}
	// The session record goes last: while it exists, a retry finds the rest.
	return l.update(func(txn *wtx) error {
		var s agent.Session
		if err := l.get(txn.Txn, sessionKey(id), &s, "session", id); err != nil {
			return err
		}
		if err := l.delete(txn, recentKey(s)); err != nil {
			return err
		}
		return l.delete(txn, sessionKey(id))
	})
}

// dropPrefix removes every key under the prefixes, and journals that.
func (l *local) dropPrefix(prefixes ...[]byte) error {
	if l.readOnly {
		return errReadOnly
	}
	l.jmu.Lock()
	defer l.jmu.Unlock()
	if err := l.db.DropPrefix(prefixes...); err != nil {
		return diskFull(err)
	}
	muts := make([]mutation, len(prefixes))
	for i, p := range prefixes {
		muts[i] = mutation{op: mutDropPrefix, key: p}
	}
	return l.journal.write(muts)
}

func (l *local) grants(workspace string) ([]Grant, error) {
	var out []Grant
	err := l.db.View(func(txn *badger.Txn) error {
		return l.scan(txn, grantsOf(workspace), func(key, b []byte) error {
			var g Grant
			if err := l.decode(key, b, &g); err != nil {
				return err
			}
			out = append(out, g)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b Grant) int { return a.Created.Compare(b.Created) })
	return out, err
}

func (l *local) importSession(e *Export) error {
	if e == nil {
		return errors.New("nothing to import")
	}
	if e.Version > ExportVersion {
		return fmt.Errorf("the export has format version %d; this darman reads up to %d: upgrade darman", e.Version, ExportVersion)
	}
	s := e.Session
	if err := s.ID.Validate(agent.SessionPrefix); err != nil {
		return fmt.Errorf("the export's session: %w", err)
	}
	err := l.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(sessionKey(s.ID)); err == nil {
			return fmt.Errorf("session %s %w in this store; remove it first with `darman sessions rm %s`", s.ID, ErrExists, s.ID)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if l.readOnly {
		return errReadOnly
	}
	wb := l.db.NewWriteBatch()
	defer wb.Cancel()
	var muts []mutation
	size := 0
	put := func(key, b []byte) error {
		l.written.Add(int64(len(key) + len(b)))
		muts = append(muts, mutation{op: mutSet, key: key, value: b})
		size += len(key) + len(b)
		return wb.Set(key, b)
	}
	set := func(key []byte, v any) error {
		b, err := jsonv2.Marshal(v)
		if err != nil {
			return err
		}
		return put(key, b)
	}
	for _, m := range e.Messages {
		if m.Message.SessionID != s.ID {
			return fmt.Errorf("message %s belongs to session %s, not to the exported session %s", m.Message.ID, m.Message.SessionID, s.ID)
		}
		if err := set(messageKey(s.ID, m.Message.ID), m.Message); err != nil {
			return err
		}
		for _, p := range m.Parts {
			if p.SessionID != s.ID || p.MessageID != m.Message.ID {
				return fmt.Errorf("part %s does not belong to message %s of session %s", p.ID, m.Message.ID, s.ID)
			}
			if err := set(partKey(p), p); err != nil {
				return err
			}
		}
	}
	for key, data := range e.Blobs {
		if BlobKey(data) != key {
			return fmt.Errorf("the export's blob %s is not the SHA-256 of its bytes", key)
		}
		if err := put(blobKey(s.ID, key), data); err != nil {
			return err
		}
	}
	// The session record goes last, so a half-done import is invisible and
	// can simply be run again.
	if err := put(recentKey(s), recentValue(s)); err != nil {
		return err
	}
	if err := set(sessionKey(s.ID), s); err != nil {
		return err
	}
	if err := l.room(size); err != nil {
		return err
	}
	l.jmu.Lock()
	defer l.jmu.Unlock()
	if err := wb.Flush(); err != nil {
		return diskFull(err)
	}
	return l.journal.write(muts)
}

func (l *local) stats() (Stats, error) {
	st := Stats{Dir: l.dir, Schema: schemaVersion, OwnerPID: os.Getpid(), Written: l.written.Load()}
	// Badger's own size figures are refreshed once a minute; the files are
	// the truth.
	files, err := os.ReadDir(l.dir)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		info, err := f.Info()
		if err != nil {
			continue
		}
		switch filepath.Ext(f.Name()) {
		case ".sst":
			st.Tables++
			st.LSMBytes += diskUsage(info)
		case ".vlog":
			st.ValueLogBytes += diskUsage(info)
		}
	}
	if l.journal != nil {
		// Once the segments being cut or removed in the background are.
		l.journal.settle()
	}
	if l.journalDir != "" {
		segs, _, _ := listSegments(l.journalDir)
		for _, sg := range segs {
			if info, err := os.Lstat(sg.path(l.journalDir)); err == nil {
				st.JournalBytes += info.Size()
			}
		}
	}
	err = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sessionPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			st.Sessions++
		}
		return nil
	})
	return st, err
}

// compact gives back the disk space of deleted sessions now rather than at
// the next background collection: it merges the tables into one level
// (short-lived darman processes each leave a small table, which the
// compactors of a process that lives long enough merge by themselves),
// which drops removed records, then collects value-log garbage.
func (l *local) compact() error {
	if l.readOnly {
		return errReadOnly
	}
	if err := l.db.Flatten(1); err != nil {
		return diskFull(err)
	}
	return l.gc()
}

// gc runs value-log garbage collection until a pass finds nothing to do.
func (l *local) gc() error {
	for {
		err := l.db.RunValueLogGC(0.5)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// badgerLogger sends badger's log lines to darman's logger. Badger's info
// lines are chatty, so they become debug lines. Badger logs a debug line
// on every write: it is formatted only when debug lines are kept (the
// formatting was an eighth of a write's CPU time).
type badgerLogger struct{ log *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.log.Error(msg(f, a), "component", "badger") }
func (b badgerLogger) Warningf(f string, a ...any) { b.log.Warn(msg(f, a), "component", "badger") }
func (b badgerLogger) Infof(f string, a ...any)    { b.Debugf(f, a...) }
func (b badgerLogger) Debugf(f string, a ...any) {
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		b.log.Debug(msg(f, a), "component", "badger")
	}
}

func msg(f string, a []any) string {
	return string(bytes.TrimSpace([]byte(fmt.Sprintf(f, a...))))
}
