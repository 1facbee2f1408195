package store

import (
	"bufio"
	"cmp"
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
	"github.com/klauspost/compress/zstd"
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
// It is bounded: the segments' records, the one being written and its
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
// On disk it takes less: a start packs the segments earlier processes
// wrote (zstd, NNNNNNNNNNNN-SIZE.jnz, SIZE the bytes of records it holds,
// which the bound counts), in the background (see packSegment). Only the
// segments of the process running stay unpacked.
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
	// free is the oldest segment the bound dropped, whose file is kept
	// to be made into the next spare (see makeSegment); nil when none is.
	free *segment
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
	n uint64
	// size is the bytes of its records (of a packed segment, what it
	// holds unpacked): what the bound counts.
	size int64
	// packed: compressed (see packSegment).
	packed bool
}

// path is the segment's file as it was listed.
func (s segment) path(dir string) string {
	if s.packed {
		return packedPath(dir, s.n, s.size)
	}
	return segmentPath(dir, s.n)
}

// current is the segment's file now: a background job (see openJournal)
// may have packed it since it was listed. Called by background jobs:
// those queued after the packing see it done; the open's first segment,
// queued before it, is made from a segment the packing leaves alone
// (the bound dropped it).
func (s segment) current(dir string) string {
	if p := packedPath(dir, s.n, s.size); fileExists(p) {
		return p
	}
	return segmentPath(dir, s.n)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// remove removes the segment's file, packed or not.
func (s segment) remove(dir string) {
	os.Remove(segmentPath(dir, s.n))
	os.Remove(packedPath(dir, s.n, s.size))
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
	segs, stale, err := listSegments(j.dir)
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
	// opens: the first write finds it ready (see start). Before the
	// packing below, which the first write need not wait for.
	next := uint64(1)
	if len(j.segs) > 0 {
		next = j.segs[len(j.segs)-1].n + 1
	}
	j.makeSpare(next, segmentSize(j.limit), false)
	// The segments earlier processes wrote are packed, in the
	// background (see packSegment).
	var raw []segment
	for _, sg := range j.segs {
		if !sg.packed {
			raw = append(raw, sg)
		}
	}
	if len(raw) > 0 || len(stale) > 0 {
		dir := j.dir
		j.later(func() {
			for _, p := range stale {
				os.Remove(p)
			}
			for _, sg := range raw {
				packSegment(dir, sg)
			}
		})
	}
	return j, nil
}

// listSegments lists the journal's segments, oldest first, and the files
// a packing left that are no longer segments: a segment's unpacked file
// beside its packed one, a packed one not renamed yet (.tmp).
func listSegments(dir string) (segs []segment, stale []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	byN := map[uint64]segment{}
	for _, e := range entries {
		name := e.Name()
		var sg segment
		if base, ok := strings.CutSuffix(name, ".jnz"); ok {
			ns, rs, _ := strings.Cut(base, "-")
			n, err1 := strconv.ParseUint(ns, 10, 64)
			size, err2 := strconv.ParseInt(rs, 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			sg = segment{n: n, size: size, packed: true}
		} else if base, ok := strings.CutSuffix(name, ".jnl"); ok {
			n, err := strconv.ParseUint(base, 10, 64)
			if err != nil {
				continue
			}
			sg = segment{n: n}
		} else {
			if strings.HasSuffix(name, ".jnz.tmp") {
				stale = append(stale, filepath.Join(dir, name))
			}
			continue
		}
		if !sg.packed {
			// A packed segment's size is in its name: only these are
			// stat-ed.
			info, err := e.Info()
			if err != nil {
				continue
			}
			sg.size = info.Size()
		}
		if had, ok := byN[sg.n]; ok {
			// Packed, and its unpacked file not yet removed: the packed
			// one is whole (it was renamed so once written).
			if sg.packed {
				had, sg = sg, had
			}
			stale = append(stale, sg.path(dir))
			sg = had
		}
		byN[sg.n] = sg
	}
	for _, sg := range byN {
		segs = append(segs, sg)
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.n, b.n) })
	return segs, stale, nil
}

func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%012d.jnl", n))
}

// packedPath is the file of segment n packed, size the bytes it holds
// unpacked.
func packedPath(dir string, n uint64, size int64) string {
	return filepath.Join(dir, fmt.Sprintf("%012d-%d.jnz", n, size))
}

// packer compresses segments (see packSegment).
var packer = sync.OnceValue(func() *zstd.Encoder {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	return e
})

// packSegment compresses segment sg, which an earlier process wrote and
// no process writes any more, into a file of its own (zstd, its frame
// checksummed), synced, then renamed to its name, and only then removes
// the unpacked file: a kill or power loss at any point leaves one of the
// two whole. The records inside are the same, checked by their CRCs when
// they are replayed. Records are mostly JSON and streamed text: a turn's
// 43 KB segment packs into 6 to 7 KB (docs/benchmarks.md). When it
// cannot be packed (a full disk), the segment stays as it is.
func packSegment(dir string, sg segment) {
	from := segmentPath(dir, sg.n)
	raw, err := os.ReadFile(from)
	if err != nil || int64(len(raw)) != sg.size {
		return
	}
	to := packedPath(dir, sg.n, sg.size)
	tmp := to + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, err = f.Write(packer().EncodeAll(raw, nil))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, to)
	}
	if err != nil {
		os.Remove(tmp)
		return
	}
	os.Remove(from)
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
	j.free = nil
	j.later(func() {
		from := ""
		if free != nil {
			from = free.current(dir)
		}
		sp := makeSegment(dir, n, size, from)
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
	var old []segment
	for len(j.segs) > 1 && total > keep {
		old = append(old, j.segs[0])
		total -= j.segs[0].size
		j.segs = j.segs[1:]
	}
	if len(old) > 0 {
		// The oldest dropped becomes the next spare (see start): its
		// space is the spare's share of the bound, which no spare
		// takes until then.
		if j.free != nil {
			old = append(old, *j.free)
		}
		j.free, old = &old[0], old[1:]
	}
	if len(old) > 0 {
		dir := j.dir
		j.later(func() {
			for _, sg := range old {
				sg.remove(dir)
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
	if j.free != nil {
		j.free.remove(j.dir)
		j.free = nil
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
	segs, _, err := listSegments(dir)
	if err != nil {
		return out, err
	}
	for _, s := range segs {
		f, err := os.Open(s.path(dir))
		if err != nil {
			return out, err
		}
		out.Segments++
		var seg io.Closer = f
		var r io.Reader = bufio.NewReaderSize(f, 256<<10)
		if s.packed {
			// Read as it unpacks: damage ends the replay where the
			// records stop reading, as in a segment that is not packed.
			dec, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
			if err != nil {
				f.Close()
				return out, err
			}
			r = bufio.NewReaderSize(dec, 64<<10)
			seg = packedFile{f, dec}
		}
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
				seg.Close()
				return out, err
			}
			out.Records++
		}
		seg.Close()
	}
	return out, nil
}

// packedFile is a packed segment being replayed: closing it lets go of
// its decoder too.
type packedFile struct {
	f   *os.File
	dec *zstd.Decoder
}

func (p packedFile) Close() error {
	p.dec.Close()
	return p.f.Close()
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
