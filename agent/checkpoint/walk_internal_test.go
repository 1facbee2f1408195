package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/store"
)

// A file changed again after a snapshot read it, in the same tick of the
// file system's clock and to the same size, keeps its stat; the snapshot
// that read it marked it racy, so the next one reads it anyway.
func TestRacyFileIsReadAgain(t *testing.T) {
	ctx := context.Background()
	k, root := testKeeper(t)
	sh := readyShadow(t, k, root)
	f := filepath.Join(root, "f")
	os.WriteFile(f, []byte("aaaa"), 0o644)
	snap := func() string {
		t.Helper()
		unlock, err := sh.lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		s, err := sh.snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Tree
	}
	first := snap()
	e := sh.cache.root.files["f"]
	if e == nil || !e.racy {
		t.Fatalf("a file written just before the snapshot: %+v", e)
	}
	os.WriteFile(f, []byte("bbbb"), 0o644)
	var err error
	if e.st, err = statPath(f); err != nil { // as if the clock had not ticked
		t.Fatal(err)
	}
	second := snap()
	if second == first {
		t.Fatal("the change of a racy file was missed")
	}
	if got := sh.cache.root.files["f"].id; got != objectID("blob", []byte("bbbb")) {
		t.Errorf("recorded %s", got)
	}
	if snap() != second {
		t.Error("nothing changed, and the tree did")
	}

	w := &walker{start: time.Now()}
	old := time.Now().Add(-time.Minute).UnixNano()
	if w.racy(fstat{mtime: old, ctime: old}) || !w.racy(fstat{mtime: old, ctime: time.Now().UnixNano()}) {
		t.Error("racy: a minute old is not, a ctime of now is")
	}
}

// A stat cache file damaged in any way is refused with errCache (the
// snapshot then reads every file), never a crash; a good one reads back as
// it was written.
func FuzzDecodeStatCache(f *testing.F) {
	c := &statCache{excludes: "x", root: newNode()}
	sub := newNode()
	sub.files["a"] = &tracked{st: fstat{size: 3, mtime: 5, ctime: 7, ino: 9, mode: 0o644}, mode: 0o100644, id: objectID("blob", []byte("abc")), racy: true}
	sub.others["b"] = &other{kind: kindIgnored, dir: true}
	c.root.subs["d"] = sub
	good := encodeCache(c, 0)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(statMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeCache(b)
		if err != nil {
			if err != errCache {
				t.Fatalf("error %v", err)
			}
			return
		}
		if again := encodeCache(got, 0); string(b) == string(good) && string(again) != string(good) {
			t.Fatal("the good cache did not read back as written")
		}
	})
}

// A directory whose stat is the same as at its last listing is not listed
// again; one listed in the same tick of the clock as it last changed is
// (a name added in that tick would not change its stat), and a file
// created in it right after a snapshot is caught either way.
func TestUnchangedDirectoryIsNotListed(t *testing.T) {
	ctx := context.Background()
	k, root := testKeeper(t)
	k.opts.NoWatch = true // the walk's own economy: with a watcher nothing is listed
	sh := readyShadow(t, k, root)
	d := filepath.Join(root, "d")
	os.MkdirAll(filepath.Join(d, "e"), 0o755)
	os.WriteFile(filepath.Join(d, "a"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(d, "e", "b"), []byte("b"), 0o644)
	snap := func() (string, int64) {
		t.Helper()
		unlock, err := sh.lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		before := sh.listings.Load()
		s, err := sh.snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Tree, sh.listings.Load() - before
	}
	has := func(tree, path string) bool {
		t.Helper()
		out, err := sh.git.run(ctx, nil, "ls-tree", "-r", "--name-only", tree)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Fields(string(out)) {
			if l == path {
				return true
			}
		}
		return false
	}

	// Just made: racy, so listed again and again.
	snap()
	if n := sh.cache.root.subs["d"]; n.listed != (fstat{}) {
		t.Fatalf("a directory changed just before its listing kept its stat %+v", n.listed)
	}
	os.WriteFile(filepath.Join(d, "new1"), []byte("1"), 0o644) // the same second
	if tree, _ := snap(); !has(tree, "d/new1") {
		t.Fatal("a file created right after a snapshot, in a racy directory, was missed")
	}

	// Old enough (past the racy window of its change time, which only
	// the kernel sets): listed once more to take the stat, then not.
	time.Sleep(2100 * time.Millisecond)
	if _, n := snap(); n != 3 {
		t.Fatalf("listed %d directories, want all 3", n)
	}
	tree, n := snap()
	if n != 0 {
		t.Fatalf("listed %d unchanged directories", n)
	}
	if !has(tree, "d/e/b") || !has(tree, "d/new1") {
		t.Fatal("the unlisted directories' files are gone from the snapshot")
	}
	os.WriteFile(filepath.Join(d, "e", "new2"), []byte("2"), 0o644) // the same second
	os.Remove(filepath.Join(d, "a"))
	tree, _ = snap()
	if !has(tree, "d/e/new2") || has(tree, "d/a") {
		t.Fatal("a file created (or deleted) right after a snapshot that did not list its directory was missed")
	}
	if n := sh.cache.root.subs["d"].subs["e"]; n.listed != (fstat{}) {
		t.Error("a directory changed just now kept its stat")
	}
}

// BenchmarkEncodeStatCache is the cost of writing out the stat cache of
// 10,000 files in 100 directories, which a snapshot that changed anything
// pays.
func BenchmarkEncodeStatCache(b *testing.B) {
	c := &statCache{excludes: "x", root: newNode()}
	now := time.Now().UnixNano()
	for i := range 10_000 {
		name := fmt.Sprintf("d%02d", i%100)
		sub := c.root.subs[name]
		if sub == nil {
			sub = newNode()
			sub.listed = fstat{size: 4096, mtime: now, ctime: now, ino: uint64(i), mode: 0o755 | uint32(fs.ModeDir)}
			c.root.subs[name] = sub
		}
		sub.files[fmt.Sprintf("f%05d.go", i)] = &tracked{st: fstat{size: 40, mtime: now + int64(i), ctime: now + int64(i), ino: uint64(1e6 + i), mode: 0o644}, mode: 0o100644, id: objectID("blob", []byte{byte(i)})}
	}
	size := len(encodeCache(c, 0))
	b.ResetTimer()
	for range b.N {
		encodeCache(c, size+4096)
	}
	b.ReportMetric(float64(size), "bytes")
}

// testKeeper is a Keeper over a store of its own, and an empty workspace.
// readyShadow is k's shadow of root with its repository made (git init
// and four git config runs, which a loaded machine can stretch over the
// 2 s racy window): a test that writes files after it has its first walk
// start right after the writes, as it means to.
func readyShadow(t *testing.T, k *Keeper, root string) *shadow {
	t.Helper()
	sh := k.shadowOf(root)
	unlock, err := sh.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	return sh
}

func testKeeper(t *testing.T) (*Keeper, string) {
	t.Helper()
	data := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(data, "store"), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	k, err := New(Options{Dir: filepath.Join(data, "checkpoints"), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k, t.TempDir()
}
