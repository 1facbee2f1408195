package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The stat cache is kept in the shadow (darman-stat) for the next darman
// process, and in memory for this one, read again only when another
// process wrote it. Its format is darman's own, versioned by its first
// bytes; one it cannot read is thrown away and the next snapshot reads
// every file once (what a first snapshot does).

const statMagic = "darman-stat\x00\x02"

func (s *shadow) statPath() string { return filepath.Join(s.dir, "darman-stat") }

// encodeCache writes c, in a buffer of size bytes to begin with.
func encodeCache(c *statCache, size int) []byte {
	b := append(make([]byte, 0, size), statMagic...)
	b = appendString(b, c.excludes)
	return appendNode(b, c.root)
}

// appendNode appends n and all beneath it. (A function of its own, not a
// closure over b: a captured b lives on the heap, and each of its
// thousands of appends then paid a write barrier while the collector ran.)
func appendNode(b []byte, n *node) []byte {
	b = appendStat(b, n.ignore)
	b = appendStat(b, n.listed)
	b = append(b, n.tree[:]...)
	b = binary.AppendUvarint(b, uint64(len(n.files)))
	for name, t := range n.files {
		b = appendString(b, name)
		b = appendStat(b, t.st)
		b = binary.AppendUvarint(b, uint64(t.mode))
		b = append(b, t.id[:]...)
		b = appendBool(b, t.racy)
	}
	b = binary.AppendUvarint(b, uint64(len(n.others)))
	for name, o := range n.others {
		b = appendString(b, name)
		b = append(b, byte(o.kind))
		b = appendBool(b, o.dir)
		b = appendStat(b, o.st)
	}
	b = binary.AppendUvarint(b, uint64(len(n.subs)))
	for name, sub := range n.subs {
		b = appendString(b, name)
		b = appendNode(b, sub)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendStat(b []byte, st fstat) []byte {
	b = binary.AppendVarint(b, st.size)
	b = binary.AppendVarint(b, st.mtime)
	b = binary.AppendVarint(b, st.ctime)
	b = binary.AppendUvarint(b, st.ino)
	return binary.AppendUvarint(b, uint64(st.mode))
}

var errCache = errors.New("the stat cache is damaged")

type decoder struct{ b []byte }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		panic(errCache)
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		panic(errCache)
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if uint64(len(d.b)) < n {
		panic(errCache)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }
func (d *decoder) bool() bool     { return d.bytes(1)[0] != 0 }

func (d *decoder) oid() oid {
	var o oid
	copy(o[:], d.bytes(20))
	return o
}

func (d *decoder) stat() fstat {
	return fstat{size: d.varint(), mtime: d.varint(), ctime: d.varint(), ino: d.uvarint(), mode: uint32(d.uvarint())}
}

// decodeCache reads what encodeCache wrote.
func decodeCache(b []byte) (c *statCache, err error) {
	if !bytes.HasPrefix(b, []byte(statMagic)) {
		return nil, errCache
	}
	defer func() {
		if r := recover(); r != nil {
			if r != errCache {
				panic(r)
			}
			c, err = nil, errCache
		}
	}()
	d := &decoder{b[len(statMagic):]}
	c = &statCache{excludes: d.string()}
	var get func(depth int) *node
	get = func(depth int) *node {
		if depth > 4096 {
			panic(errCache)
		}
		n := newNode()
		n.ignore = d.stat()
		n.listed = d.stat()
		n.tree = d.oid()
		for range d.uvarint() {
			name := d.string()
			n.files[name] = &tracked{st: d.stat(), mode: uint32(d.uvarint()), id: d.oid(), racy: d.bool()}
		}
		for range d.uvarint() {
			name := d.string()
			n.others[name] = &other{kind: otherKind(d.bytes(1)[0]), dir: d.bool(), st: d.stat()}
		}
		for range d.uvarint() {
			name := d.string()
			n.subs[name] = get(depth + 1)
		}
		return n
	}
	c.root = get(0)
	if len(d.b) != 0 {
		return nil, errCache
	}
	return c, nil
}

// loadCache is the stat cache of the last snapshot, from memory when no
// other process wrote one since; nil when there is none (or it does not
// match the last snapshot's tree).
func (s *shadow) loadCache() *statCache {
	fi, err := statPath(s.statPath())
	if err != nil {
		s.cache = nil
		return nil
	}
	if s.cache != nil && fi == s.cacheStat {
		if s.behind == 0 {
			return s.cache
		}
		if gm, _ := statPath(s.gcMarkPath()); gm == s.gcMark {
			return s.cache
		}
	}
	s.cache, s.behind = nil, 0
	b, err := os.ReadFile(s.statPath())
	if err != nil {
		return nil
	}
	c, err := decodeCache(b)
	if err != nil || c.root.tree.String() != s.cachedTree() && !(c.root.tree.isZero() && s.cachedTree() == emptyTree) {
		return nil
	}
	s.cache, s.cacheStat = c, fi
	s.gcMark, _ = statPath(s.gcMarkPath())
	return c
}

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// saveCache writes the cache beside the snapshot's tree.
func (s *shadow) saveCache(c *statCache, tree string) error {
	if err := os.WriteFile(filepath.Join(s.dir, "darman-tree"), []byte(tree+"\n"), 0o600); err != nil {
		return fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	tmp := s.statPath() + ".tmp"
	b := encodeCache(c, int(s.cacheStat.size+s.cacheStat.size/8)+4096)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	if err := os.Rename(tmp, s.statPath()); err != nil {
		return fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	fi, err := statPath(s.statPath())
	if err != nil {
		return err
	}
	s.cache, s.cacheStat, s.behind = c, fi, 0
	s.gcMark, _ = statPath(s.gcMarkPath())
	return nil
}

// excludesPrint is a fingerprint of the exclude files that lie outside
// the workspace: the shadow's copy of its info/exclude and git's global
// one. When it changes, everything the walk left out is asked about again.
func (s *shadow) excludesPrint() string {
	h := sha256.New()
	b, _ := os.ReadFile(filepath.Join(s.dir, "info", "exclude"))
	h.Write(b)
	h.Write([]byte{0})
	if p := globalExcludes(); p != "" {
		st, _ := statPath(p)
		fmt.Fprintf(h, "%s %+v", p, st)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// globalExcludes is the exclude file git reads when core.excludesFile is
// not set (it is not: the shadow reads no global configuration).
func globalExcludes() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}
