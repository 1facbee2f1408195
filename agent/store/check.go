package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/fb"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// ErrDamaged is returned (wrapped) when the database's files do not agree
// with each other, or a record cannot be read back. darman then refuses
// to open the store for writing, which could destroy what is left, and
// Repair rebuilds it.
var ErrDamaged = errors.New("the session store is damaged")

// DamageError says which of the database's files are damaged and how.
type DamageError struct {
	Dir string
	// Tables are the damaged files (tables, the manifest, value logs),
	// each with what is wrong with it.
	Tables []string
}

// repairHint is the command every damage message names.
const repairHint = "run `darman sessions repair` (or `darman doctor --repair`) to move it aside untouched and rebuild it from what can be read and from its journal"

func (e *DamageError) Error() string {
	return fmt.Sprintf("the session store in %s is damaged (%s); nothing was changed: %s", e.Dir, strings.Join(e.Tables, "; "), repairHint)
}

func (e *DamageError) Unwrap() error { return ErrDamaged }

// storeFiles is what a directory listing says of a database.
type storeFiles struct {
	tables   map[uint64]int64 // table ID → size
	vlogs    map[uint32]int64 // value-log ID → size
	mems     int              // write-ahead logs of memtables
	manifest int64            // -1 when there is none
	registry int64            // -1 when there is none
	// used is the space the tables and value logs take on disk (badger
	// makes the value log being written large and sparse).
	used int64
}

func listStore(dir string) (storeFiles, error) {
	f := storeFiles{tables: map[uint64]int64{}, vlogs: map[uint32]int64{}, manifest: -1, registry: -1}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return f, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		name := e.Name()
		switch {
		case name == badger.ManifestFilename:
			f.manifest = info.Size()
		case name == badger.KeyRegistryFileName:
			f.registry = info.Size()
		case strings.HasSuffix(name, ".sst"):
			if id, ok := table.ParseFileID(name); ok {
				f.tables[id] = info.Size()
				f.used += diskUsage(info)
			}
		case strings.HasSuffix(name, ".vlog"):
			if id, err := strconv.ParseUint(strings.TrimSuffix(name, ".vlog"), 10, 32); err == nil {
				f.vlogs[uint32(id)] = info.Size()
				f.used += diskUsage(info)
			}
		case strings.HasSuffix(name, ".mem"):
			f.mems++
		}
	}
	return f, nil
}

// checkStore looks at what is on disk before badger opens it for writing,
// and refuses (a *DamageError) when the files do not agree with each
// other: badger would otherwise "fix" the disagreement, and what it fixes
// is the user's data. A manifest cut short at a record boundary reads as a
// shorter database, whose unnamed tables badger deletes; a value log cut
// or overwritten is truncated at the damage. Nothing is written here, and
// nothing is read whole but the manifest (small) and the newest value log,
// which badger reads whole anyway: the cost is that of the files' count,
// not of the history in them.
//
// It also finds the damage badger would crash on (a table shorter than its
// footer says) in goroutines of its own.
//
// What it learnt of the store comes back with it: how many tables the
// manifest puts in level 0 (see mergeTables), and the manifest (see
// rewriteManifest).
func checkStore(dir string) (storeShape, error) {
	var shape storeShape
	files, err := listStore(dir)
	shape.vlogs = files.vlogs
	if err != nil {
		return shape, err
	}
	var bad []string
	if files.manifest < 0 {
		if len(files.tables) > 0 || len(files.vlogs) > 0 || files.mems > 0 {
			bad = append(bad, "MANIFEST, which lists the tables, is missing")
		}
		return shape, damage(dir, bad)
	}
	m, err := readManifest(filepath.Join(dir, badger.ManifestFilename))
	if errors.Is(err, errManifestVersion) {
		return shape, nil // a newer badger's: badger itself says so
	}
	if err != nil {
		bad = append(bad, "MANIFEST: "+err.Error())
	}
	if w, ok := readWitness(dir); ok {
		var gone map[uint64]struct{} // tables MANIFEST records as deleted
		if err == nil {
			gone = m.deleted()
		}
		bad = append(bad, w.compare(files, gone)...)
	}
	if files.registry >= 0 {
		if err := checkRegistry(filepath.Join(dir, badger.KeyRegistryFileName)); err != nil {
			bad = append(bad, "KEYREGISTRY: "+err.Error())
		}
	}
	if err == nil {
		shape.manifest, shape.manifestBytes = m, files.manifest
		shape.leftovers = len(files.tables) > len(m.tables)
		liveMax := uint64(0) // the newest version in a table the manifest names
		known := readSums(dir)
		shape.sums = map[string]tableSum{}
		shape.newSums = len(known) != len(m.tables)
		for _, id := range m.live() {
			name := table.IDToFilename(id)
			if m.tables[id].level == 0 {
				shape.level0++
			}
			if _, ok := files.tables[id]; !ok {
				bad = append(bad, name+" is named by MANIFEST but missing")
				continue
			}
			check := tableCheck{info: m.tables[id], known: known[name]}
			v, err := readTableFile(filepath.Join(dir, name), &check)
			if err == nil {
				shape.sums[name] = check.sum
				shape.newSums = shape.newSums || check.sum != check.known
			}
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			}
			liveMax = max(liveMax, v)
		}
		var logged map[uint64]bool // the versions the memtables' logs hold
		for id := range files.tables {
			if _, mentioned := m.mentioned[id]; mentioned {
				continue
			}
			// A darman killed between writing a memtable's table and
			// recording it in the manifest leaves the table unnamed and
			// the memtable's log beside it: badger drops the table and
			// replays the log, so nothing is lost. One killed while it
			// merged tables (see mergeTables) leaves the merge's output
			// unnamed, and its inputs named and whole: the output holds
			// nothing newer than they do (what was written since a
			// manifest is newer than every table it names, since tables
			// are flushed in commit order), and badger drops it. An
			// unnamed table that is newer and whose log is gone (an older
			// manifest put back) is a loss.
			if logged == nil {
				logged = memtableVersions(dir)
			}
			if v, err := tableMaxVersion(filepath.Join(dir, table.IDToFilename(id))); err == nil && (logged[v] || v <= liveMax) {
				continue
			}
			bad = append(bad, table.IDToFilename(id)+" is not in MANIFEST (the manifest is older or cut short)")
		}
	}
	for id, n := range files.vlogs {
		if n < vlogHeader {
			bad = append(bad, fmt.Sprintf("%06d.vlog: cut short (%d bytes, shorter than its header)", id, n))
		}
	}
	if len(files.vlogs) > 0 {
		last := slices.Max(slicesKeys(files.vlogs))
		path := filepath.Join(dir, fmt.Sprintf("%06d.vlog", last))
		if err := checkLastValueLog(path); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", filepath.Base(path), err))
		}
	}
	slices.Sort(bad)
	return shape, damage(dir, slices.Compact(bad))
}

// storeShape is what checkStore learnt of a store's tables.
type storeShape struct {
	level0        int              // tables in level 0, where each flushed memtable goes
	vlogs         map[uint32]int64 // value-log ID → size
	manifest      manifest         // what MANIFEST says (nil maps when it was not read)
	manifestBytes int64            // its size
	leftovers     bool             // table files MANIFEST does not name are on disk
	// sums are the live tables' sums, found whole (see readTableFile);
	// newSums says they differ from the ones kept.
	sums    map[string]tableSum
	newSums bool
}

func damage(dir string, bad []string) error {
	if len(bad) == 0 {
		return nil
	}
	return &DamageError{Dir: dir, Tables: bad}
}

func slicesKeys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// manifest is what a MANIFEST says: the live tables and every table it
// ever named (a table it deleted may still be on disk, for badger to
// remove).
type manifest struct {
	tables    map[uint64]tableInfo
	mentioned map[uint64]struct{}
	header    []byte
}

type tableInfo struct {
	level       uint32
	keyID       uint64
	compression uint32
}

// deleted are the tables m named once and no longer does.
func (m manifest) deleted() map[uint64]struct{} {
	out := map[uint64]struct{}{}
	for id := range m.mentioned {
		if _, live := m.tables[id]; !live {
			out[id] = struct{}{}
		}
	}
	return out
}

func (m manifest) live() []uint64 {
	ids := slicesKeys(m.tables)
	slices.Sort(ids)
	return ids
}

var errManifestVersion = errors.New("a manifest of another badger version")

// readManifest reads a MANIFEST to its end. Unlike badger, which stops at
// a record cut short and truncates the file there, any record that does
// not read whole is damage: the file is badger's only list of the tables,
// and a shorter list makes badger delete the tables missing from it.
func readManifest(path string) (manifest, error) {
	m := manifest{tables: map[uint64]tableInfo{}, mentioned: map[uint64]struct{}{}}
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if len(raw) < 8 || !bytes.Equal(raw[:4], []byte("Bdgr")) {
		return m, fmt.Errorf("not a manifest (%d bytes, no badger header): cut short or overwritten", len(raw))
	}
	if binary.BigEndian.Uint16(raw[6:8]) != 8 || binary.BigEndian.Uint16(raw[4:6]) != 0 {
		return m, errManifestVersion
	}
	m.header = raw[:8]
	off := 8
	for off < len(raw) {
		if len(raw)-off < 8 {
			return m, fmt.Errorf("cut short in a record at byte %d of %d", off, len(raw))
		}
		n := int(binary.BigEndian.Uint32(raw[off:]))
		sum := binary.BigEndian.Uint32(raw[off+4:])
		if n > len(raw)-off-8 {
			return m, fmt.Errorf("cut short in a record at byte %d of %d", off, len(raw))
		}
		body := raw[off+8 : off+8+n]
		if crc32.Checksum(body, y.CastagnoliCrcTable) != sum {
			return m, fmt.Errorf("the record at byte %d does not match its checksum (overwritten)", off)
		}
		var set pb.ManifestChangeSet
		if err := proto.Unmarshal(body, &set); err != nil {
			return m, fmt.Errorf("the record at byte %d is unreadable: %v", off, err)
		}
		for _, c := range set.Changes {
			m.mentioned[c.Id] = struct{}{}
			switch c.Op {
			case pb.ManifestChange_CREATE:
				if _, ok := m.tables[c.Id]; ok {
					return m, fmt.Errorf("the record at byte %d creates table %d twice", off, c.Id)
				}
				m.tables[c.Id] = tableInfo{level: c.Level, keyID: c.KeyId, compression: c.Compression}
			case pb.ManifestChange_DELETE:
				delete(m.tables, c.Id)
			default:
				return m, fmt.Errorf("the record at byte %d has an unknown change", off)
			}
		}
		off += 8 + n
	}
	return m, nil
}

// checkRegistry checks the key registry of a database without encryption
// (darman's): a 16-byte IV, then badger's sanity text in the clear, then
// no keys.
func checkRegistry(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(raw) < 28 || string(raw[16:28]) != "Hello Badger" {
		return fmt.Errorf("unreadable (%d bytes): cut short or overwritten", len(raw))
	}
	return nil
}

// checkTable checks a table file's footer the way badger reads it (from
// the end: the checksum's length, the checksum, the index's length, the
// index), then that every block the index lists lies inside the file. It
// reads the footer only, not the blocks (badger checks each block's
// checksum when it reads it).
func checkTable(path string) error {
	_, err := tableMaxVersion(path)
	return err
}

// tableMaxVersion checks a table's footer and index as checkTable says and
// returns the newest version (commit timestamp) the table holds.
func tableMaxVersion(path string) (uint64, error) {
	return readTableFile(path, nil)
}

// readTableFile is tableMaxVersion, and with blocks it also checks every
// block against its checksum. badger checks a block only when it reads
// it, and an iterator (a read of a session, or a compaction merging
// tables) that meets one whose checksum fails ends there without an
// error: the records after it would be missing from the answer, or from
// the compaction's new table, which replaces the damaged one.
//
// Reading the blocks means decompressing them (their checksums are of
// what was compressed), 1.5 to 4 ms for a table of 10,000 sessions. So a
// table whose blocks were found whole has its file's size and CRC-32C
// kept (see tableSums): when the file still has them, which takes reading
// it once through the CRC (a tenth of a millisecond a megabyte), its
// blocks are the bytes that were checked.
func readTableFile(path string, blocks *tableCheck) (_ uint64, err error) {
	defer func() {
		// The index is a flatbuffer, whose reader panics on bytes that
		// are not one.
		if r := recover(); r != nil {
			err = fmt.Errorf("its index is unreadable (overwritten)")
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, errors.New("missing")
		}
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
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
		return 0, short
	}
	sumBuf, ok := take(int64(y.BytesToU32(lenBuf)))
	if !ok {
		return 0, short
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(sumBuf, &sum); err != nil {
		return 0, short
	}
	if lenBuf, ok = take(4); !ok {
		return 0, short
	}
	index, ok := take(int64(y.BytesToU32(lenBuf)))
	if !ok {
		return 0, short
	}
	if sum.Sum == 0 || len(index) < 8 {
		return 0, fmt.Errorf("its footer is zeroed or overwritten")
	}
	if err := y.VerifyChecksum(index, &sum); err != nil {
		return 0, fmt.Errorf("its index does not match its checksum (truncated or overwritten)")
	}
	ti := fb.GetRootAsTableIndex(index, 0)
	var bo fb.BlockOffset
	for i := range ti.OffsetsLength() {
		if !ti.Offsets(&bo, i) || int64(bo.Offset())+int64(bo.Len()) > end {
			return 0, short
		}
	}
	if blocks != nil {
		sum, err := fileSum(f, size)
		if err != nil {
			return 0, err
		}
		if sum != blocks.known {
			if err := checkBlocks(f, path, ti, blocks.info); err != nil {
				return 0, err
			}
		}
		blocks.sum = sum
	}
	return ti.MaxVersion(), nil
}

// tableCheck is what readTableFile needs to check a table's blocks: what
// the manifest says of it and the sum kept of it when its blocks were
// last found whole (zero when none was); it sets sum to the file's.
type tableCheck struct {
	info       tableInfo
	known, sum tableSum
}

// tableSum is a table file's size and CRC-32C.
type tableSum struct {
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc"`
}

func fileSum(f *os.File, size int64) (tableSum, error) {
	h := crc32.New(y.CastagnoliCrcTable)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return tableSum{}, err
	}
	return tableSum{Size: size, CRC: h.Sum32()}, nil
}

// sumsName is the file of the tables' sums (see readTableFile): table
// file → tableSum, for the tables whose blocks were found whole. It is
// only ever a shortcut: a table it does not name, or names with another
// sum, has its blocks read; an open that checked writes it again with
// the live tables (an older copy put back, or one cut, costs a read of the
// blocks, never a table taken for whole).
const sumsName = witnessName + ".sums"

func readSums(dir string) map[string]tableSum {
	sums := map[string]tableSum{}
	if raw, err := os.ReadFile(filepath.Join(dir, sumsName)); err == nil {
		json.Unmarshal(raw, &sums)
	}
	return sums
}

func saveSums(dir string, sums map[string]tableSum) error {
	raw, err := json.Marshal(sums)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, sumsName+".tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, sumsName))
}

// checkBlocks reads each block of a table in turn, through one buffer,
// and checks it against its checksum: the block as it was built (entries,
// their offsets and count, the checksum and its length), compressed.
// Encrypted tables and compressions other than snappy are read by badger
// itself (readBlocks), which costs an allocation per block.
func checkBlocks(f *os.File, path string, ti *fb.TableIndex, info tableInfo) error {
	compression := options.CompressionType(info.compression)
	if info.keyID != 0 || compression != options.None && compression != options.Snappy {
		return readBlocks(path, compression)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 256<<10)
	var bo fb.BlockOffset
	var raw, plain []byte
	at := int64(0)
	for i := range ti.OffsetsLength() {
		ti.Offsets(&bo, i)
		bad := func() error {
			return fmt.Errorf("its block %d (at %d, %d bytes) does not match its checksum (overwritten)", i, bo.Offset(), bo.Len())
		}
		if skip := int64(bo.Offset()) - at; skip > 0 {
			r.Discard(int(skip))
		} else if skip < 0 {
			return fmt.Errorf("its index names overlapping blocks (overwritten)")
		}
		raw = slices.Grow(raw[:0], int(bo.Len()))[:bo.Len()]
		if _, err := io.ReadFull(r, raw); err != nil {
			return fmt.Errorf("its block %d cannot be read: %v", i, err)
		}
		at = int64(bo.Offset()) + int64(bo.Len())
		data := raw
		if compression == options.Snappy {
			n, err := snappy.DecodedLen(raw)
			if err != nil || n > 64<<20 {
				return bad()
			}
			plain = slices.Grow(plain[:0], n)[:n]
			if data, err = snappy.Decode(plain, raw); err != nil {
				return bad()
			}
		}
		if len(data) < 8 {
			return bad()
		}
		end := len(data) - 4
		n := int(binary.BigEndian.Uint32(data[end:]))
		if n > end-4 {
			return bad()
		}
		end -= n
		var sum pb.Checksum
		if err := proto.Unmarshal(data[end:end+n], &sum); err != nil || y.VerifyChecksum(data[:end], &sum) != nil {
			return bad()
		}
	}
	return nil
}

// readBlocks has badger read every block of a table whose footer
// checkTable read and check it against its checksum (see readTableFile).
func readBlocks(path string, compression options.CompressionType) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %v", r)
		}
	}()
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return err
	}
	// OpenTable checks every block; the table is then let go of with its
	// file's Close, not DecrRef, which would delete the file.
	_, err = table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnTableAndBlockRead,
		BlockSize: 4 << 10, BloomFalsePositive: 0.01, Compression: compression})
	if err != nil {
		return fmt.Errorf("a block does not match its checksum (%v)", err)
	}
	return mf.Close(-1)
}

// vlogHeader is the size of a value-log file's header (a key ID and an IV).
const vlogHeader = 20

// checkLastValueLog reads the newest value-log file the way badger does
// when it opens it for writing, which truncates the file where its entries
// stop reading. That is right after a crash (the rest was never written:
// zeros, or one entry cut short followed by zeros), and wrong when
// anything follows: the file was damaged, and truncating it would throw
// the entries after the damage away.
func checkLastValueLog(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size < vlogHeader {
		return fmt.Errorf("cut short (%d bytes, shorter than its header)", size)
	}
	r := &countReader{r: bufio.NewReaderSize(io.NewSectionReader(f, vlogHeader, size-vlogHeader), 256<<10), n: vlogHeader}
	var claimedEnd int64 // where the entry that did not read would end
	for {
		start := r.n
		e, err := readVlogEntry(r)
		if err == io.EOF && r.n == start {
			return nil // the file ends after a whole entry
		}
		if err == nil && e.zero || err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			if torn, err := tornEntry(f, start, size); err != nil || torn {
				return err
			}
		}
		if err == nil && e.zero {
			claimedEnd = r.n
			break
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				if e.claimed > 0 && start+e.claimed > size {
					return fmt.Errorf("cut short inside the entry at byte %d", start)
				}
				return fmt.Errorf("cut short at byte %d", start)
			}
			claimedEnd = start + max(e.claimed, 1)
			break
		}
	}
	// What follows where badger stops reading must be zeros.
	if claimedEnd > size {
		return fmt.Errorf("cut short inside the entry that ends at byte %d of %d", claimedEnd, size)
	}
	if at, err := firstNonZero(f, claimedEnd, size); err != nil {
		return err
	} else if at >= 0 {
		return fmt.Errorf("an entry before byte %d is damaged (cut short, overwritten or zeroed) and data follows it", at)
	}
	return nil
}

// tornEntry reports whether the entry at start of the value log f, which
// does not read, is one a darman killed while it copied the entry into the
// log left: badger copies each entry into the mapped file with Go's
// memmove, which for all but small copies writes the body from the first
// 32-byte boundary on first and the head (up to that boundary, where the
// header is) and the last 128 bytes at the end. Killed in between, the
// entry's header reads as zeros and its body follows: the first bytes
// that are not zero come after start and no later than 128 bytes past the
// boundary. Damage looks otherwise: a bit flipped or bytes overwritten at
// an entry's start leave its first byte non-zero, and a zeroed block (4
// KiB, at a block boundary) leaves zeros well past that.
func tornEntry(f *os.File, start, size int64) (bool, error) {
	boundary := start&^31 + 32
	at, err := firstNonZero(f, start, min(boundary+128, size))
	if err != nil {
		return false, err
	}
	return at > start, nil
}

// memtableVersions returns the versions of the entries in the memtables'
// logs (the .mem files) of dir, read as badger replays them: to the first
// entry that does not read.
func memtableVersions(dir string) map[uint64]bool {
	versions := map[uint64]bool{}
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	for _, path := range mems {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		info, err := f.Stat()
		if err == nil && info.Size() > vlogHeader {
			r := &countReader{r: bufio.NewReaderSize(io.NewSectionReader(f, vlogHeader, info.Size()-vlogHeader), 256<<10), n: vlogHeader}
			for {
				e, err := readVlogEntry(r)
				if err != nil || e.zero {
					break
				}
				versions[e.version] = true
			}
		}
		f.Close()
	}
	return versions
}

type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// vlogEntry is what readVlogEntry learnt of an entry: whether it is the
// zeros after the last one, how long its header says it is, and the
// version (commit timestamp) its key carries.
type vlogEntry struct {
	zero    bool
	claimed int64
	version uint64
	key     []byte // with its version
}

var errBadEntry = errors.New("a value-log entry does not match its checksum")

// readVlogEntry reads one value-log entry: a header (meta, user meta,
// then the key's and value's lengths and the expiry as varints), the key,
// the value, and a CRC-32C of all of it.
func readVlogEntry(r *countReader) (vlogEntry, error) {
	var e vlogEntry
	h := crc32.New(y.CastagnoliCrcTable)
	var hdr [2 + 3*binary.MaxVarintLen64]byte
	meta, err := r.ReadByte()
	if err != nil {
		return e, err
	}
	user, err := r.ReadByte()
	if err != nil {
		return e, io.ErrUnexpectedEOF
	}
	hdr[0], hdr[1] = meta, user
	n := 2
	var lens [3]uint64
	for i := range lens {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return e, io.ErrUnexpectedEOF
			}
			return e, errBadEntry
		}
		lens[i] = v
		n += binary.PutUvarint(hdr[n:], v)
	}
	h.Write(hdr[:n])
	if meta == 0 && user == 0 && lens == [3]uint64{} {
		e.zero = true
		return e, nil
	}
	if lens[0] > 1<<16 || lens[1] > 1<<31 {
		return e, errBadEntry
	}
	e.claimed = int64(n) + int64(lens[0]+lens[1]) + 4
	key := make([]byte, lens[0])
	if _, err := io.ReadFull(r, key); err != nil {
		return e, io.ErrUnexpectedEOF
	}
	h.Write(key)
	e.key = key
	if len(key) >= 8 {
		e.version = y.ParseTs(key)
	}
	if _, err := io.CopyN(h, r, int64(lens[1])); err != nil {
		return e, io.ErrUnexpectedEOF
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return e, io.ErrUnexpectedEOF
	}
	if binary.BigEndian.Uint32(sum[:]) != h.Sum32() {
		return e, errBadEntry
	}
	return e, nil
}

// firstNonZero returns the offset of the first byte in [from, to) of f that
// is not zero, or -1.
func firstNonZero(f *os.File, from, to int64) (int64, error) {
	buf := make([]byte, 256<<10)
	for off := from; off < to; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
		for i, b := range buf[:n] {
			if b != 0 {
				return off + int64(i), nil
			}
		}
		off += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return -1, nil
			}
			return 0, err
		}
	}
	return -1, nil
}
