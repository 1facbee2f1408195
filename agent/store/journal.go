package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4/y"
)

// The journal is the way back when the database's own files are damaged:
// an append-only log, beside the database and independent of badger's
// files, of every write the owner committed. Repair rebuilds the store
// from what its files still hold plus the journal.
//
// It is a directory of segments (DIR/journal/NNNNNNNNNNNN.jnl). Each
// record is one committed transaction: its length and CRC-32C (4 bytes
// each, big-endian), then its mutations, each an op byte (set, delete,
// drop prefix), the key's length as a varint and the key, and for a set
// the value's length and the value. A record is written after badger
// committed the transaction and before the call returns, in commit order
// (one lock covers both). A record cut short or not matching its CRC
// ends its segment's replay; each open starts a new segment, so a torn
// end is never appended to.
//
// It is bounded: when the segments together exceed a tenth of the
// database's size (at least journalFloor), the oldest are removed. The
// journal therefore holds the most recent writes, at least the last
// journalFloor − journalFloor/4 bytes of them; older history lives only
// in the database's files (see docs/sessions.md for what that promises).
type journal struct {
	dir string

	mu    sync.Mutex
	f     *os.File // the segment being written; nil until the first record
	w     int64    // bytes in f
	segs  []segment
	limit int64
	buf   []byte
}

type segment struct {
	n    uint64
	size int64
}

const (
	journalDir   = "journal"
	journalFloor = 1 << 20
)

// Mutation kinds in a journal record.
const (
	mutSet byte = 1 + iota
	mutDelete
	mutDropPrefix
)

type mutation struct {
	op         byte
	key, value []byte
}

func openJournal(dir string, dbBytes int64) (*journal, error) {
	j := &journal{dir: dir}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the session journal: %w", diskFull(err))
	}
	segs, err := listSegments(j.dir)
	if err != nil {
		return nil, err
	}
	j.segs = segs
	j.limit = max(journalFloor, dbBytes/10)
	// Each start writes a segment of its own, which the rotation's trim
	// (below) never sees when a start writes less than a segment: the
	// bound is kept here too, or the journal grows with every start.
	j.trim()
	return j, nil
}

func listSegments(dir string) ([]segment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var segs []segment
	for _, e := range entries {
		n, err := strconv.ParseUint(strings.TrimSuffix(e.Name(), ".jnl"), 10, 64)
		if err != nil || !strings.HasSuffix(e.Name(), ".jnl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		segs = append(segs, segment{n, info.Size()})
	}
	slices.SortFunc(segs, func(a, b segment) int { return int(a.n - b.n) })
	return segs, nil
}

func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%012d.jnl", n))
}

// write appends one committed transaction.
func (j *journal) write(muts []mutation) error {
	if len(muts) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		n := uint64(1)
		if len(j.segs) > 0 {
			n = j.segs[len(j.segs)-1].n + 1
		}
		f, err := os.OpenFile(segmentPath(j.dir, n), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("cannot write the session journal: %w", diskFull(err))
		}
		j.f, j.w = f, 0
		j.segs = append(j.segs, segment{n: n})
	}
	b := append(j.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0)
	for _, m := range muts {
		b = append(b, m.op)
		b = binary.AppendUvarint(b, uint64(len(m.key)))
		b = append(b, m.key...)
		if m.op == mutSet {
			b = binary.AppendUvarint(b, uint64(len(m.value)))
			b = append(b, m.value...)
		}
	}
	binary.BigEndian.PutUint32(b[0:], uint32(len(b)-8))
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(b[8:], y.CastagnoliCrcTable))
	j.buf = b
	if _, err := j.f.Write(b); err != nil {
		// A record cut short by a full disk would end the segment's
		// replay: the next record goes to a new segment.
		j.f.Close()
		j.f = nil
		return fmt.Errorf("cannot write the session journal: %w", diskFull(err))
	}
	j.w += int64(len(b))
	j.segs[len(j.segs)-1].size = j.w
	if j.w >= j.limit/4 {
		j.f.Close()
		j.f = nil
		j.trim()
	}
	return nil
}

// trim removes the oldest segments while the journal is over its limit.
func (j *journal) trim() {
	total := int64(0)
	for _, s := range j.segs {
		total += s.size
	}
	for len(j.segs) > 1 && total > j.limit {
		if err := os.Remove(segmentPath(j.dir, j.segs[0].n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return
		}
		total -= j.segs[0].size
		j.segs = j.segs[1:]
	}
}

// resize sets the journal's bound from the database's current size.
func (j *journal) resize(dbBytes int64) {
	j.mu.Lock()
	j.limit = max(journalFloor, dbBytes/10)
	j.mu.Unlock()
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// journalReplay says what replayJournal read.
type journalReplay struct {
	Segments int
	Records  int
	// Torn are the segments whose replay stopped at a damaged record
	// before their end, with where.
	Torn []string
}

// replayJournal calls fn with each transaction of the journal in dir,
// oldest first.
func replayJournal(dir string, fn func([]mutation) error) (journalReplay, error) {
	var out journalReplay
	segs, err := listSegments(dir)
	if err != nil {
		return out, err
	}
	for _, s := range segs {
		f, err := os.Open(segmentPath(dir, s.n))
		if err != nil {
			return out, err
		}
		out.Segments++
		r := bufio.NewReaderSize(f, 256<<10)
		off := int64(0)
		for {
			muts, n, err := readRecord(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				out.Torn = append(out.Torn, fmt.Sprintf("%s at byte %d: %v", filepath.Base(f.Name()), off, err))
				break
			}
			off += n
			if err := fn(muts); err != nil {
				f.Close()
				return out, err
			}
			out.Records++
		}
		f.Close()
	}
	return out, nil
}

func readRecord(r io.Reader) ([]mutation, int64, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		return nil, 0, errors.New("cut short")
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<31 {
		return nil, 0, errors.New("unreadable length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, errors.New("cut short")
	}
	if crc32.Checksum(body, y.CastagnoliCrcTable) != binary.BigEndian.Uint32(hdr[4:]) {
		return nil, 0, errors.New("does not match its checksum")
	}
	var muts []mutation
	for len(body) > 0 {
		var m mutation
		m.op = body[0]
		body = body[1:]
		var ok bool
		if m.key, body, ok = field(body); !ok {
			return nil, 0, errors.New("unreadable mutation")
		}
		if m.op == mutSet {
			if m.value, body, ok = field(body); !ok {
				return nil, 0, errors.New("unreadable mutation")
			}
		}
		muts = append(muts, m)
	}
	return muts, int64(8 + n), nil
}

func field(b []byte) ([]byte, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
