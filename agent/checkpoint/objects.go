package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// oid is the name of a git object; the zero one names none.
type oid [20]byte

func (o oid) String() string { return hex.EncodeToString(o[:]) }
func (o oid) isZero() bool   { return o == oid{} }

func parseOID(s string) (oid, error) {
	var o oid
	if len(s) != 40 {
		return o, fmt.Errorf("not an object name: %q", s)
	}
	_, err := hex.Decode(o[:], []byte(s))
	return o, err
}

// objectID is git's name of an object of this kind and content.
func objectID(kind string, content []byte) oid {
	h := sha1.New()
	h.Write(strconv.AppendInt([]byte(kind+" "), int64(len(content)), 10))
	h.Write([]byte{0})
	h.Write(content)
	var o oid
	h.Sum(o[:0])
	return o
}

// zwriters keep zlib's compressors (a large allocation each) from one
// object to the next.
var zwriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

// writeObject stores an object as a loose one in the shadow's object
// database, the way git does (zlib of "kind size\0content", written beside
// and renamed into place), unless it is there already.
func (s *shadow) writeObject(kind string, content []byte) (oid, error) {
	id := objectID(kind, content)
	name := id.String()
	dir := filepath.Join(s.dir, "objects", name[:2])
	path := filepath.Join(dir, name[2:])
	if _, err := os.Lstat(path); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return id, err
	}
	var b bytes.Buffer
	zw := zwriters.Get().(*zlib.Writer)
	defer zwriters.Put(zw)
	zw.Reset(&b)
	zw.Write(strconv.AppendInt([]byte(kind+" "), int64(len(content)), 10))
	zw.Write([]byte{0})
	zw.Write(content)
	if err := zw.Close(); err != nil {
		return id, err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return id, err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		os.Chmod(f.Name(), 0o444)
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return id, fmt.Errorf("writing object %s: %w", name, err)
	}
	return id, nil
}

// removeTempObjects removes the temporary files of objects being written
// that git left in the shadow's object database: a git hash-object that
// fails to write an object (a full disk) exits leaving the part it wrote,
// which would hold that space until a gc. The caller holds the shadow's
// lock, so no other writer of the shadow has a temporary file there.
func (s *shadow) removeTempObjects() {
	tmps, _ := filepath.Glob(filepath.Join(s.dir, "objects", "??", "tmp_obj_*"))
	more, _ := filepath.Glob(filepath.Join(s.dir, "objects", "tmp_obj_*"))
	for _, f := range append(tmps, more...) {
		os.Remove(f)
	}
}

// treeEntry is one line of a tree object.
type treeEntry struct {
	name string
	mode uint32 // 0o100644, 0o100755, 0o120000 or 0o40000
	id   oid
}

// treeContent is the tree object of these entries, in git's order (a
// directory sorts as if its name ended in "/").
func treeContent(es []treeEntry) []byte {
	key := func(e treeEntry) string {
		if e.mode == 0o40000 {
			return e.name + "/"
		}
		return e.name
	}
	slices.SortFunc(es, func(a, b treeEntry) int { return strings.Compare(key(a), key(b)) })
	var b []byte
	for _, e := range es {
		b = strconv.AppendUint(b, uint64(e.mode), 8)
		b = append(b, ' ')
		b = append(b, e.name...)
		b = append(b, 0)
		b = append(b, e.id[:]...)
	}
	return b
}

// gitMode is the mode git records for a file of this kind and
// permissions.
func gitMode(m fs.FileMode) uint32 {
	switch {
	case m&fs.ModeSymlink != 0:
		return 0o120000
	case m&0o100 != 0:
		return 0o100755
	}
	return 0o100644
}

// cQuote is path as git's --stdin-paths reads one line: as it is unless
// it holds a newline, a backslash or a control character, or begins with
// a quote; then C-quoted.
func cQuote(path string) string {
	if !strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) && !strings.HasPrefix(path, `"`) {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
