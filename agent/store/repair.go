package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// Repaired says what Repair did.
type Repaired struct {
	// Damaged is false when the store opened and nothing was done.
	Damaged bool `json:"damaged"`
	// Aside is where the damaged database's files were moved.
	Aside string `json:"aside,omitempty"`
	// Lost are the table files that could not be read, with why.
	Lost []string `json:"lost,omitempty"`
	// Sessions and Records are what was read back into the new store.
	Sessions int `json:"sessions"`
	Records  int `json:"records"`
	// Unreadable says why nothing could be read back, when nothing was.
	Unreadable string `json:"unreadable,omitempty"`
}

// Repair checks the store in dir and, when it is damaged, moves the
// database's files aside (into a directory beside dir, named after it),
// starts a new store in dir and copies into it every record that can
// still be read: the damaged tables are left out, the rest is opened. It
// needs the store closed in every darman process.
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

	if l, err := openLocal(dir, log); err == nil {
		return Repaired{}, l.close()
	}
	out := Repaired{Damaged: true, Aside: fmt.Sprintf("%s.damaged-%s", dir, time.Now().UTC().Format("20060102-150405"))}
	if err := moveDatabase(dir, out.Aside); err != nil {
		return out, fmt.Errorf("moving the damaged store aside: %w", err)
	}
	fresh, err := openLocal(dir, log)
	if err != nil {
		return out, fmt.Errorf("the damaged store is in %s, but a new one cannot be made in %s: %w", out.Aside, dir, err)
	}
	defer fresh.close()

	// A copy to read from: the damaged tables are renamed and left out of
	// the manifest, so that badger opens the rest.
	out.Lost, err = dropDamagedTables(out.Aside)
	if err != nil {
		out.Unreadable = err.Error()
		return out, nil
	}
	if err := salvage(out.Aside, fresh, log, &out); err != nil {
		out.Unreadable = err.Error()
	}
	return out, nil
}

// isDatabaseFile reports whether a name in the data directory is badger's
// (the rest — the lock, the MCP records — stays where it is).
func isDatabaseFile(name string) bool {
	switch filepath.Ext(name) {
	case ".sst", ".vlog", ".mem":
		return true
	}
	return strings.HasPrefix(name, badger.ManifestFilename) || strings.HasPrefix(name, "KEYREGISTRY") ||
		name == "DISCARD" || name == "LOCK" || name == "owner.sock" || name == "owner.addr"
}

func moveDatabase(dir, aside string) error {
	if err := os.Mkdir(aside, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !isDatabaseFile(e.Name()) {
			continue
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(aside, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// dropDamagedTables renames the damaged tables of the database in dir to
// NAME.damaged and writes a manifest without them (keeping the old one as
// MANIFEST.damaged). It returns the tables dropped, with why.
func dropDamagedTables(dir string) ([]string, error) {
	path := filepath.Join(dir, badger.ManifestFilename)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("its manifest is unreadable: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir).WithLogger(nil))
	f.Close()
	if err != nil || len(raw) < 8 {
		return nil, fmt.Errorf("its manifest, which lists the database's tables, is damaged (%v)", err)
	}
	var lost []string
	set := pb.ManifestChangeSet{}
	for id, tm := range m.Tables {
		name := table.NewFilename(id, dir)
		if err := checkTable(name); err != nil {
			lost = append(lost, fmt.Sprintf("%s: %v", filepath.Base(name), err))
			if err := os.Rename(name, name+".damaged"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return lost, err
			}
			continue
		}
		set.Changes = append(set.Changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE, Level: uint32(tm.Level),
			KeyId: tm.KeyID, EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: uint32(tm.Compression)})
	}
	if len(lost) == 0 {
		return nil, nil
	}
	body, err := proto.Marshal(&set)
	if err != nil {
		return lost, err
	}
	var b bytes.Buffer
	b.Write(raw[:8]) // magic and versions, as badger wrote them
	binary.Write(&b, binary.BigEndian, uint32(len(body)))
	binary.Write(&b, binary.BigEndian, crc32.Checksum(body, y.CastagnoliCrcTable))
	b.Write(body)
	if err := os.Rename(path, path+".damaged"); err != nil {
		return lost, err
	}
	return lost, os.WriteFile(path, b.Bytes(), 0o600)
}

// salvage copies every record of the database in from into the store to.
func salvage(from string, to *local, log *slog.Logger, out *Repaired) (err error) {
	src, err := openLocal(from, log)
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
			if err != nil {
				continue // a value lost with its value-log file
			}
			if err := wb.Set(key, v); err != nil {
				return err
			}
			out.Records++
			if bytes.HasPrefix(key, []byte(sessionPrefix)) {
				out.Sessions++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return wb.Flush()
}
