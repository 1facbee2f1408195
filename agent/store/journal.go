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
// It is bounded: the segments on disk, the one being written and its
// spare included, take at most limit bytes: a tenth of the space the
// database's tables and value logs take on disk (measured at the open and
// again as each segment is made, so the bound follows a store that
// grows), but at least journalFloor (see docs/sessions.md for why). Each
// segment is made limit/8 bytes large; when one fills, the oldest are
// removed until the others take at most limit minus two segments. The
// journal therefore holds the most recent writes, at least the last
// 5/8 of limit bytes of them; older history lives only in the database's
// files (see docs/sessions.md for what that promises).
//
// A segment is written through memory: it is given its whole size on disk
// when it is made (fallocate), mapped, and each record is copied into the
// mapping. That costs no system call per record (a write(2) was most of
// what the journal added to a write: the file's times, the filesystem's
// own journal), and loses nothing a write(2) would not: the pages belong
// to the kernel's page cache, which a darman killed leaves to be written
// out, and neither is synced (a power loss takes the last seconds of both).
// The space being taken up front, a full disk is an error when the segment
// is made, before the transaction is committed, never a SIGBUS on a page.
// A clean close cuts the segment to what was written; a segment a crash
// left keeps zeros after its last record, where replay ends. Where the
// filesystem cannot preallocate (or off Linux), records are written with
// write(2), as before.
type journal struct {
	dir string

	mu    sync.Mutex
	f     *os.File // the segment being written; nil until the first record
	m     []byte   // f mapped (its whole size), nil when written with write(2)
	w     int64    // bytes in f
	segs  []segment
	limit int64
	buf   []byte
	// storeDir is badger's directory, whose size sets limit.
	storeDir string
	// spare is the next segment, being made in the background while this
	// one fills (nil when none is); bg counts the background work of
	// making, cutting and removing segments, which close waits for.
	spare chan spareSegment
	bg    sync.WaitGroup
	// last is closed when the background job queued last is done: the
	// jobs run one after the other, in the order they were queued (see
	// later), so that a segment is cut and closed before its file is
	// made into another.
	last chan struct{}
	// free is the file of the oldest segment the bound dropped, kept to
	// be made into the next spare (see makeSegment); "" when none is.
	free string
}

// spareSegment is a segment made ahead of its turn.
type spareSegment struct {
	n   uint64
	f   *os.File
	m   []byte
	err error
	// limit is the journal's bound from the store's size when the spare
	// was made.
	limit int64
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

// journalLimit is the journal's bound beside the database in storeDir.
func journalLimit(storeDir string) int64 {
	files, _ := listStore(storeDir)
	return max(journalFloor, files.used/10)
}

// openLimit is journalLimit at an open, from the witness a clean close
// left in storeDir (the files' sizes, rounded up to the filesystem's
// blocks: after a clean close that is the space they take) rather than a
// listing, which stats every file of badger's directory (see openLocal);
// journalLimit when there is none.
func openLimit(storeDir string) int64 {
	w, ok := readWitness(storeDir)
	if !ok || w.Files == nil {
		return journalLimit(storeDir)
	}
	used := int64(0)
	for name, n := range w.Files {
		if strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".vlog") {
			used += (n + 4095) &^ 4095
		}
	}
	return max(journalFloor, used/10)
}

// segmentSize is the size a segment is made with under the bound limit.
func segmentSize(limit int64) int64 { return limit / 8 }

func openJournal(dir, storeDir string) (*journal, error) {
	j := &journal{dir: dir, storeDir: storeDir}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the session journal: %w", diskFull(err))
	}
	segs, err := listSegments(j.dir)
	if err != nil {
		return nil, err
	}
	j.segs = segs
	j.limit = openLimit(storeDir)
	// Each start writes a segment of its own, which the rotation's trim
	// (below) never sees when a start writes less than a segment: the
	// bound is kept here too, or the journal grows with every start.
	j.trim()
	// The first segment is made now, in the background, while badger
	// opens: the first write finds it ready (see start).
	next := uint64(1)
	if len(j.segs) > 0 {
		next = j.segs[len(j.segs)-1].n + 1
	}
	j.makeSpare(next, segmentSize(j.limit), false)
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

// write appends one committed transaction (none to a store opened bare,
// which has no journal: see bare).
func (j *journal) write(muts []mutation) error {
	if j == nil {
		return nil
	}
	return j.commit(muts, nil)
}

// commit appends the transaction muts, which commitTxn (when not nil)
// commits: after the record has its room in the segment, so a record that
// would not fit on the disk refuses the transaction rather than leave it
// out of the journal, and before the record is written, so the journal
// only holds what was committed, in commit order.
func (j *journal) commit(muts []mutation, commitTxn func() error) error {
	if len(muts) == 0 {
		if commitTxn != nil {
			return commitTxn()
		}
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
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
	if j.m != nil && j.w+int64(len(b)) > int64(len(j.m)) {
		// The mapped segment is full: the record starts the next.
		j.finish(false)
		j.trim()
	}
	if j.f == nil {
		if err := j.start(int64(len(b))); err != nil {
			return fmt.Errorf("cannot write the session journal: %w", diskFull(err))
		}
	}
	if commitTxn != nil {
		if err := commitTxn(); err != nil {
			return err
		}
	}
	if j.m != nil {
		copy(j.m[j.w:], b)
	} else if _, err := j.f.Write(b); err != nil {
		// A record cut short by a full disk would end the segment's
		// replay: the next record goes to a new segment.
		j.finish(true)
		return fmt.Errorf("cannot write the session journal: %w", diskFull(err))
	}
	j.w += int64(len(b))
	j.segs[len(j.segs)-1].size = j.w
	if j.w >= segmentSize(j.limit) {
		j.finish(false)
		j.trim()
	} else if j.m != nil && j.spare == nil && j.w >= segmentSize(j.limit)/2 {
		// Half full: the next segment is made while this one fills. Not
		// sooner: most processes (a darman run) write less than a
		// segment, and a spare made for them is only removed again.
		j.makeSpare(j.segs[len(j.segs)-1].n+1, segmentSize(j.limit), true)
	}
	return nil
}

// start makes the next segment, room for a record of n bytes at least:
// the spare made in the background when it is there and large enough.
// The first segment of a process is made in the background at the open,
// and the next one while a mapped segment fills (see commit), so that
// the writes find them ready.
func (j *journal) start(n int64) error {
	next := uint64(1)
	if len(j.segs) > 0 {
		next = j.segs[len(j.segs)-1].n + 1
	}
	size := max(segmentSize(j.limit), n)
	var sp spareSegment
	if j.spare != nil {
		sp = <-j.spare
		j.spare = nil
		if sp.err == nil && (sp.n != next || int64(len(sp.m)) < n) {
			dropSpare(sp)
			sp = spareSegment{err: errors.New("not the one")}
		}
		if sp.err == nil {
			next = sp.n
			j.limit = sp.limit
		}
	}
	if sp.f == nil {
		if sp = makeSegment(j.dir, next, size, ""); sp.err != nil {
			return sp.err
		}
	}
	j.f, j.m, j.w = sp.f, sp.m, 0
	j.segs = append(j.segs, segment{n: next})
	return nil
}

// makeSpare makes segment n, of size bytes, in the background, from the
// free file when there is one; remeasure says to measure the journal's
// bound from the store's size again (see spareSegment.limit). It is
// called with mu held, or before the journal is in use.
func (j *journal) makeSpare(n uint64, size int64, remeasure bool) {
	spare := make(chan spareSegment, 1)
	j.spare = spare
	dir, storeDir, free, limit := j.dir, j.storeDir, j.free, j.limit
	j.free = ""
	j.later(func() {
		sp := makeSegment(dir, n, size, free)
		sp.limit = limit
		if remeasure {
			sp.limit = journalLimit(storeDir)
		}
		spare <- sp
	})
}

// later runs fn in the background after the jobs queued before it. It is
// called with mu held.
func (j *journal) later(fn func()) {
	prev, done := j.last, make(chan struct{})
	j.last = done
	j.bg.Go(func() {
		if prev != nil {
			<-prev
		}
		fn()
		close(done)
	})
}

// makeSegment makes segment n, of size bytes when it is mapped: from the
// file free (a segment the bound dropped) when it is not "" and can be
// zeroed in place, which spares the filesystem an unlink, a create and
// the allocation of the space (most of what the journal cost a write,
// docs/benchmarks.md). free is zeroed, and only then named segment n:
// its records, whose checksums still match, must never be read as the
// new segment's. When it cannot be (another filesystem, or off Linux), it
// is removed and segment n made new.
func makeSegment(dir string, n uint64, size int64, free string) spareSegment {
	path := segmentPath(dir, n)
	if free != "" {
		f, err := reuseSegment(free, path, size)
		if err == nil {
			m, err := mapSegment(f, size)
			if err == nil && m != nil {
				return spareSegment{n: n, f: f, m: m}
			}
			// Its zeros would come before records written with
			// write(2): made new, below.
			f.Close()
		}
		// Whichever name it has now.
		os.Remove(free)
		os.Remove(path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return spareSegment{err: err}
	}
	m, err := mapSegment(f, size)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return spareSegment{err: err}
	}
	return spareSegment{n: n, f: f, m: m}
}

// reuseSegment zeroes the file free to size bytes in place and renames
// it to path; it fails, changing nothing but free's bytes, where the
// filesystem cannot zero a range without writing it.
func reuseSegment(free, path string, size int64) (*os.File, error) {
	f, err := os.OpenFile(free, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	size = (size + 4095) &^ 4095
	if err = zeroSegment(f, size); err == nil {
		// It may have been larger (a segment a killed darman left
		// preallocated, or made under another bound).
		err = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(free, path)
	}
	if err != nil {
		return nil, err
	}
	// Opened again under its new name, which dropSpare and the
	// errors use.
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
}

// dropSpare removes a spare segment that was not used.
func dropSpare(sp spareSegment) {
	if sp.err != nil {
		return
	}
	if sp.m != nil {
		unmapSegment(sp.m)
	}
	sp.f.Close()
	os.Remove(sp.f.Name())
}

// finish closes the segment being written, cut to its records: in the
// background when wait is false (nothing of the records depends on it:
// they are in the page cache already).
func (j *journal) finish(wait bool) error {
	if j.f == nil {
		return nil
	}
	f, m, w := j.f, j.m, j.w
	j.f, j.m = nil, nil
	done := func() error {
		var err error
		if m != nil {
			err = unmapSegment(m)
			if terr := f.Truncate(w); err == nil {
				err = terr
			}
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if wait {
		return done()
	}
	j.later(func() { done() })
	return nil
}

// trim removes the oldest segments while the journal is over its limit.
func (j *journal) trim() {
	total := int64(0)
	for _, s := range j.segs {
		total += s.size
	}
	// Room for the segment to be written and its spare.
	keep := j.limit - 2*segmentSize(j.limit)
	var old []string
	for len(j.segs) > 1 && total > keep {
		old = append(old, segmentPath(j.dir, j.segs[0].n))
		total -= j.segs[0].size
		j.segs = j.segs[1:]
	}
	if len(old) > 0 {
		// The oldest dropped becomes the next spare (see start): its
		// space is the spare's share of the bound, which no spare
		// takes until then.
		if j.free != "" {
			old = append(old, j.free)
		}
		j.free, old = old[0], old[1:]
	}
	if len(old) > 0 {
		j.later(func() {
			for _, p := range old {
				os.Remove(p)
			}
		})
	}
}

// settle waits for the background work on segments (made, cut, removed)
// to be done. None of it takes mu.
func (j *journal) settle() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.bg.Wait()
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.finish(true)
	if j.spare != nil {
		dropSpare(<-j.spare)
		j.spare = nil
	}
	j.bg.Wait()
	if j.free != "" {
		os.Remove(j.free)
		j.free = ""
	}
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
			if errors.Is(err, errUnwritten) {
				// The rest of a segment a crash left at its preallocated
				// size, if only zeros follow.
				if rest, _ := io.ReadAll(r); slices.ContainsFunc(rest, func(c byte) bool { return c != 0 }) {
					out.Torn = append(out.Torn, fmt.Sprintf("%s at byte %d: zeros where a record was due, records after them", filepath.Base(f.Name()), off))
				}
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

// errUnwritten is readRecord's answer at a record's length of zero.
var errUnwritten = errors.New("unwritten")

func readRecord(r io.Reader) ([]mutation, int64, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		return nil, 0, errors.New("cut short")
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 {
		// No record is empty: the segment's unwritten space.
		return nil, 0, errUnwritten
	}
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
