package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/fb"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// ErrDamaged is returned (wrapped) when the database's files are damaged in
// a way badger would crash on rather than report. Repair moves such a store
// aside and keeps what can be read.
var ErrDamaged = errors.New("the session store is damaged")

// DamageError says which of the database's files are damaged.
type DamageError struct {
	Dir string
	// Tables are the damaged table files, with what is wrong with each.
	Tables []string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("the session store in %s is damaged (%s); run `darman doctor --repair` to move it aside "+
		"and keep what can be read, or move the directory aside yourself to start afresh", e.Dir, strings.Join(e.Tables, "; "))
}

func (e *DamageError) Unwrap() error { return ErrDamaged }

// checkTables looks at each table file the manifest lists before badger
// opens them. Badger opens tables in goroutines of its own, where a table
// shorter than its footer says (a truncated copy, a disk that filled up)
// is a panic no caller can recover, so darman finds that damage first. It
// reads only each table's footer and index, a few kilobytes. A manifest
// it cannot read is left to badger, which reports it as an error.
func checkTables(dir string) error {
	tables, err := manifestTables(dir)
	if err != nil || len(tables) == 0 {
		return nil
	}
	var bad []string
	for _, id := range tables {
		path := table.NewFilename(id, dir)
		if err := checkTable(path); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", filepath.Base(path), err))
		}
	}
	if len(bad) > 0 {
		return &DamageError{Dir: dir, Tables: bad}
	}
	return nil
}

// manifestTables lists the IDs of the tables in dir's manifest.
func manifestTables(dir string) ([]uint64, error) {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// checkTable checks a table file's footer the way badger reads it (from
// the end: the checksum's length, the checksum, the index's length, the
// index), then that every block the index lists lies inside the file. It
// reads the footer only, not the blocks.
func checkTable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("missing")
		}
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	short := fmt.Errorf("truncated (%d bytes)", size)
	end := size
	take := func(n int64) ([]byte, bool) {
		if n < 0 || n > end {
			return nil, false
		}
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, end-n); err != nil {
			return nil, false
		}
		end -= n
		return buf, true
	}
	lenBuf, ok := take(4)
	if !ok {
		return short
	}
	sumBuf, ok := take(int64(y.BytesToU32(lenBuf)))
	if !ok {
		return short
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(sumBuf, &sum); err != nil {
		return short
	}
	if lenBuf, ok = take(4); !ok {
		return short
	}
	index, ok := take(int64(y.BytesToU32(lenBuf)))
	if !ok {
		return short
	}
	if err := y.VerifyChecksum(index, &sum); err != nil {
		return fmt.Errorf("its index does not match its checksum (truncated or overwritten)")
	}
	ti := fb.GetRootAsTableIndex(index, 0)
	var bo fb.BlockOffset
	for i := range ti.OffsetsLength() {
		if !ti.Offsets(&bo, i) || int64(bo.Offset())+int64(bo.Len()) > end {
			return short
		}
	}
	return nil
}
