package fsafe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func setup(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o644)
	os.WriteFile(filepath.Join(root, "real", "target.txt"), []byte("old"), 0o640)
	return root, outside
}

func TestWriteFileRefusesLinksLeadingOut(t *testing.T) {
	root, outside := setup(t)
	os.Symlink(outside, filepath.Join(root, "linkdir"))
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "file-link"))
	os.Symlink("../outside/missing.txt", filepath.Join(root, "dangling"))
	for _, p := range []string{"linkdir/secret.txt", "linkdir/new.txt", "linkdir/sub/new.txt", "file-link", "dangling"} {
		_, err := WriteFile(root, filepath.Join(root, p), []byte("pwned"))
		var out *OutsideError
		if !errors.As(err, &out) {
			t.Errorf("WriteFile(%s) = %v, want an OutsideError", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside" {
		t.Errorf("the file outside changed: %q", b)
	}
	for _, p := range []string{"new.txt", "missing.txt", "sub"} {
		if _, err := os.Lstat(filepath.Join(outside, p)); err == nil {
			t.Errorf("%s was made outside", p)
		}
	}
}

func TestWriteFileWritesThroughALinkInside(t *testing.T) {
	root, _ := setup(t)
	link := filepath.Join(root, "link.txt")
	os.Symlink("real/target.txt", link)
	w, err := WriteFile(root, link, []byte("new"))
	if err != nil || !w.Through || w.Real != filepath.Join(root, "real", "target.txt") {
		t.Fatalf("WriteFile = %+v, %v", w, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	fi, _ := os.Stat(filepath.Join(root, "real", "target.txt"))
	if b, _ := os.ReadFile(filepath.Join(root, "real", "target.txt")); string(b) != "new" || fi.Mode().Perm() != 0o640 {
		t.Errorf("target = %q mode %v", b, fi.Mode())
	}
	// A plain new file in new directories.
	if w, err := WriteFile(root, filepath.Join(root, "a", "b", "c.txt"), []byte("c")); err != nil || w.Through {
		t.Fatalf("new file: %+v, %v", w, err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "a", "b"))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
