package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/store"
)

// A file changed again after a snapshot read it, in the same tick of the
// file system's clock and to the same size, keeps its stat; the snapshot
// that read it marked it racy, so the next one reads it anyway.
func TestRacyFileIsReadAgain(t *testing.T) {
	ctx := context.Background()
	data, root := t.TempDir(), t.TempDir()
	st, err := store.Open(ctx, filepath.Join(data, "store"), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := New(Options{Dir: filepath.Join(data, "checkpoints"), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(root, "f")
	os.WriteFile(f, []byte("aaaa"), 0o644)
	sh := k.shadowOf(root)
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
