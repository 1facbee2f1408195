package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// TestReleaseIsReproducible runs the release twice for this machine's
// target (one target keeps make test fast: a build is a full link) and
// wants the same archive bytes and the same SHA256SUMS; then the archive's
// entries are checked (sorted, the commit's time, owner 0, fixed modes)
// and its binary runs and reports the stamped version.
func TestReleaseIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release test links darman twice")
	}
	target := runtime.GOOS + "/" + runtime.GOARCH
	if _, ok := vscodePlatform[target]; !ok || runtime.GOOS == "windows" {
		t.Skipf("%s is not a release target this test can run", target)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var names [2][]string
	for i := range 2 {
		c := config{repo: repo, out: filepath.Join(dir, []string{"a", "b"}[i]), version: "v0.0.0-repro", commit: "0123456789abcdef0123456789abcdef01234567",
			epoch: epoch, targets: []string{target}, log: io.Discard}
		if names[i], err = c.run(); err != nil {
			t.Fatal(err)
		}
	}
	archive := "darman_v0.0.0-repro_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	if !slices.Equal(names[0], []string{archive}) || !slices.Equal(names[1], names[0]) {
		t.Fatalf("release files %v and %v, want [%s]", names[0], names[1], archive)
	}
	for _, f := range []string{archive, "SHA256SUMS"} {
		a, _ := os.ReadFile(filepath.Join(dir, "a", f))
		b, _ := os.ReadFile(filepath.Join(dir, "b", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit (%d and %d bytes)", f, len(a), len(b))
		}
	}
	sums, _ := os.ReadFile(filepath.Join(dir, "a", "SHA256SUMS"))
	cmd := exec.Command("sha256sum", "-c", "SHA256SUMS")
	cmd.Dir = filepath.Join(dir, "a")
	if _, err := exec.LookPath("sha256sum"); err == nil {
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s\n%s", err, out, sums)
		}
	}

	f, err := os.Open(filepath.Join(dir, "a", archive))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("gzip header has time %v and name %q, want neither", gz.ModTime, gz.Name)
	}
	tr := tar.NewReader(gz)
	top := strings.TrimSuffix(archive, ".tar.gz")
	var got []string
	exe := filepath.Join(dir, "darman")
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: time %v owner %d:%d (%q:%q), want %v and 0:0", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, epoch)
		}
		want := map[string]int64{top + "/": 0o755, top + "/darman": 0o755, top + "/LICENSE": 0o644, top + "/README.md": 0o644}[h.Name]
		if h.Mode != want {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
		}
		if h.Name == top+"/darman" {
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(exe, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{top + "/", top + "/LICENSE", top + "/README.md", top + "/darman"}; !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	out, err := exec.Command(exe, "version", "--json").Output()
	if err != nil {
		t.Fatalf("the archived darman does not run: %v", err)
	}
	var v struct{ Version, Commit, Platform string }
	if err := json.Unmarshal(out, &v); err != nil || v.Version != "v0.0.0-repro" || v.Commit != "0123456789abcdef0123456789abcdef01234567" || v.Platform != target {
		t.Errorf("darman version --json = %s (%v), want the stamped version and commit", out, err)
	}
}

// TestArchivesIgnoreTheFilesystem writes the archives of the same content
// from files with different times and modes on disk: the bytes are the
// same, and every entry has the given time and the entry's mode. Windows'
// zip is checked here too, which the release cannot build yet.
func TestArchivesIgnoreTheFilesystem(t *testing.T) {
	write := func(mtime time.Time, perm fs.FileMode) []entry {
		dir := t.TempDir()
		var es []entry
		for _, n := range []string{"darman.exe", "LICENSE", "README.md"} {
			p := filepath.Join(dir, n)
			if err := os.WriteFile(p, []byte("content of "+n), perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			mode := fs.FileMode(0o644)
			if n == "darman.exe" {
				mode = 0o755
			}
			es = append(es, entry{n, p, mode})
		}
		return es
	}
	a := write(time.Now(), 0o600)
	b := write(time.Now().Add(-48*time.Hour), 0o777)
	for _, kind := range []string{"zip", "tar.gz"} {
		var x, y bytes.Buffer
		w := writeZip
		if kind == "tar.gz" {
			w = writeTarGz
		}
		if err := w(&x, "top", a, epoch); err != nil {
			t.Fatal(err)
		}
		if err := w(&y, "top", b, epoch); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Bytes(), y.Bytes()) {
			t.Errorf("%s: the bytes depend on the files' times or modes", kind)
		}
	}
	var x bytes.Buffer
	if err := writeZip(&x, "top", a, epoch); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(x.Bytes()), int64(x.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(epoch) {
			t.Errorf("%s: time %v, want %v", f.Name, f.Modified, epoch)
		}
		want := map[string]fs.FileMode{"top/": fs.ModeDir | 0o755, "top/darman.exe": 0o755}[f.Name]
		if want == 0 {
			want = 0o644
		}
		if f.Mode() != want {
			t.Errorf("%s: mode %v, want %v", f.Name, f.Mode(), want)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if base := strings.TrimPrefix(f.Name, "top/"); base != "" && string(b) != "content of "+base {
			t.Errorf("%s holds %q", f.Name, b)
		}
	}
	if want := []string{"top/", "top/darman.exe", "top/LICENSE", "top/README.md"}; !slices.Equal(names, want) {
		t.Errorf("zip entries %v, want %v", names, want)
	}
}
