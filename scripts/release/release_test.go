package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"errors"
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
// target and windows/amd64 (two targets keep make test's time down: each
// is a full link, and two runs link four times), with the SBOMs and, when
// npm ci has run, the VSIXes, and wants the same bytes in every file and in
// SHA256SUMS. Then each file is checked: the archives' entries (sorted, the
// commit's time, owner 0, fixed modes), this machine's binary runs and
// reports the stamped version, the SBOMs are CycloneDX naming every module
// the binary links, and each platform VSIX names its platform and holds the
// archived binary, executable.
func TestReleaseIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release test links darman four times")
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	if _, ok := vscodePlatform[host]; !ok || runtime.GOOS == "windows" {
		t.Skipf("%s is not a release target this test can run", host)
	}
	targets := []string{host, "windows/amd64"}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	probe := config{repo: repo}
	vsix := probe.checkVSIXTools() == nil
	if !vsix {
		t.Logf("the VSIXes are left out: %v", probe.checkVSIXTools())
	}
	dir := t.TempDir()
	const version, commit = "v0.0.0-repro", "0123456789abcdef0123456789abcdef01234567"
	var names [2][]string
	for i := range 2 {
		c := config{repo: repo, out: filepath.Join(dir, []string{"a", "b"}[i]), version: version, commit: commit,
			epoch: epoch, targets: targets, sbom: true, vsix: vsix, tools: filepath.Join(dir, "tools"), log: io.Discard}
		start := time.Now()
		if names[i], err = c.run(); err != nil {
			t.Fatal(err)
		}
		t.Logf("release %d of 2 (%s, VSIXes %v): %v", i+1, strings.Join(targets, ", "), vsix, time.Since(start).Round(time.Second))
	}
	var want []string
	for _, tg := range targets {
		goos, goarch, _ := strings.Cut(tg, "/")
		base := "darman_" + version + "_" + goos + "_" + goarch
		want = append(want, base+map[bool]string{true: ".zip", false: ".tar.gz"}[goos == "windows"], base+".cdx.json")
		if vsix {
			want = append(want, "darman-vscode-"+version+"-"+vscodePlatform[tg]+".vsix")
		}
	}
	if vsix {
		want = append(want, "darman-vscode-"+version+".vsix")
	}
	slices.Sort(want)
	if !slices.Equal(names[0], want) || !slices.Equal(names[1], names[0]) {
		t.Fatalf("release files %v and %v, want %v", names[0], names[1], want)
	}
	for _, f := range append(want, "SHA256SUMS") {
		a, _ := os.ReadFile(filepath.Join(dir, "a", f))
		b, _ := os.ReadFile(filepath.Join(dir, "b", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit (%d and %d bytes)", f, len(a), len(b))
		}
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "SHA256SUMS")
		cmd.Dir = filepath.Join(dir, "a")
		if out, err := cmd.CombinedOutput(); err != nil {
			sums, _ := os.ReadFile(filepath.Join(dir, "a", "SHA256SUMS"))
			t.Errorf("sha256sum -c: %v\n%s\n%s", err, out, sums)
		}
	}

	out := filepath.Join(dir, "a")
	hostBase := "darman_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	hostExe := checkTarGz(t, filepath.Join(out, hostBase+".tar.gz"), hostBase)
	if err := os.WriteFile(filepath.Join(dir, "darman"), hostExe, 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := exec.Command(filepath.Join(dir, "darman"), "version", "--json").Output()
	if err != nil {
		t.Fatalf("the archived darman does not run: %v", err)
	}
	var v struct{ Version, Commit, Platform string }
	if err := json.Unmarshal(run, &v); err != nil || v.Version != version || v.Commit != commit || v.Platform != host {
		t.Errorf("darman version --json = %s (%v), want the stamped version and commit", run, err)
	}
	winBase := "darman_" + version + "_windows_amd64"
	winExe := checkZip(t, filepath.Join(out, winBase+".zip"), winBase)
	if !bytes.HasPrefix(winExe, []byte("MZ")) {
		t.Errorf("%s.zip's darman.exe is not a Windows executable", winBase)
	}

	for _, tg := range targets {
		goos, goarch, _ := strings.Cut(tg, "/")
		exe := filepath.Join(out, "build", goos+"_"+goarch, "darman")
		if goos == "windows" {
			exe += ".exe"
		}
		checkSBOM(t, filepath.Join(out, "darman_"+version+"_"+goos+"_"+goarch+".cdx.json"), exe, version)
	}
	if vsix {
		checkVSIX(t, filepath.Join(out, "darman-vscode-"+version+"-"+vscodePlatform[host]+".vsix"), vscodePlatform[host], "darman", hostExe)
		checkVSIX(t, filepath.Join(out, "darman-vscode-"+version+"-win32-x64.vsix"), "win32-x64", "darman.exe", winExe)
		checkVSIX(t, filepath.Join(out, "darman-vscode-"+version+".vsix"), "", "", nil)
	}
}

// checkTarGz checks a .tar.gz release archive's headers and entries and
// returns its binary.
func checkTarGz(t *testing.T, path, top string) []byte {
	t.Helper()
	f, err := os.Open(path)
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
	var got []string
	var exe []byte
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
			exe, _ = io.ReadAll(tr)
		}
	}
	if want := []string{top + "/", top + "/LICENSE", top + "/README.md", top + "/darman"}; !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	return exe
}

// checkZip checks a Windows release archive's entries and returns its
// binary.
func checkZip(t *testing.T, path, top string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	var exe []byte
	for _, f := range zr.File {
		got = append(got, f.Name)
		want := map[string]fs.FileMode{top + "/": fs.ModeDir | 0o755, top + "/darman.exe": 0o755, top + "/LICENSE": 0o644, top + "/README.md": 0o644}[f.Name]
		if !f.Modified.Equal(epoch) || f.Mode() != want {
			t.Errorf("%s: time %v mode %v, want %v and %v", f.Name, f.Modified, f.Mode(), epoch, want)
		}
		if f.Name == top+"/darman.exe" {
			exe = readZipFile(t, f)
		}
	}
	if want := []string{top + "/", top + "/LICENSE", top + "/README.md", top + "/darman.exe"}; !slices.Equal(got, want) {
		t.Errorf("%s: entries %v, want %v", filepath.Base(path), got, want)
	}
	return exe
}

// checkSBOM wants a CycloneDX JSON document for the version with the
// release's time, naming every module the binary at exe links (as its
// build information records them) and the standard library.
func checkSBOM(t *testing.T, path, exe, version string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		BOMFormat, SpecVersion string
		Metadata               struct {
			Timestamp string
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version, Purl string }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	name := filepath.Base(path)
	if doc.BOMFormat != "CycloneDX" || !strings.HasPrefix(doc.SpecVersion, "1.") {
		t.Errorf("%s: bomFormat %q specVersion %q, want CycloneDX 1.x", name, doc.BOMFormat, doc.SpecVersion)
	}
	if doc.Metadata.Timestamp != epoch.Format(time.RFC3339) || doc.Metadata.Component.Version != version ||
		!strings.HasSuffix(doc.Metadata.Component.Name, "darman") {
		t.Errorf("%s: metadata %+v, want darman %s at %v", name, doc.Metadata, version, epoch)
	}
	purls := map[string]bool{}
	for _, c := range doc.Components {
		purl, _, _ := strings.Cut(c.Purl, "?")
		purls[purl] = true
	}
	info, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) == 0 {
		t.Fatalf("%s records no modules", exe)
	}
	for _, d := range info.Deps {
		if !purls["pkg:golang/"+d.Path+"@"+d.Version] {
			t.Errorf("%s does not name %s %s, which the binary links", name, d.Path, d.Version)
		}
	}
	if !purls["pkg:golang/std@"+info.GoVersion] {
		t.Errorf("%s does not name the standard library %s", name, info.GoVersion)
	}
}

// checkVSIX checks a VSIX: sorted entries with the release's time, the
// manifest's target platform (none for the universal VSIX, platform ""),
// the extension's package.json, and the binary bin (none when "") with
// exe's bytes, executable.
func checkVSIX(t *testing.T, path, platform, bin string, exe []byte) {
	t.Helper()
	name := filepath.Base(path)
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		files[f.Name] = f
		want := fs.FileMode(0o644)
		if bin != "" && f.Name == "extension/bin/"+bin {
			want = 0o755
		}
		if !f.Modified.Equal(epoch) || f.Mode() != want {
			t.Errorf("%s: %s: time %v mode %v, want %v and %v", name, f.Name, f.Modified, f.Mode(), epoch, want)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("%s: entries not sorted: %v", name, names)
	}
	for _, n := range []string{"[Content_Types].xml", "extension.vsixmanifest", "extension/package.json", "extension/dist/extension.js", "extension/dist/lsp.js"} {
		if files[n] == nil {
			t.Fatalf("%s has no %s: %v", name, n, names)
		}
	}
	var pkg struct{ Name, Publisher string }
	if err := json.Unmarshal(readZipFile(t, files["extension/package.json"]), &pkg); err != nil || pkg.Name != "darman" || pkg.Publisher != "darman-dev" {
		t.Errorf("%s: extension/package.json names %+v (%v), want darman by darman-dev", name, pkg, err)
	}
	manifest := string(readZipFile(t, files["extension.vsixmanifest"]))
	if has := strings.Contains(manifest, "TargetPlatform="); platform == "" && has {
		t.Errorf("%s: the universal VSIX's manifest names a target platform:\n%s", name, manifest)
	} else if platform != "" && !strings.Contains(manifest, `TargetPlatform="`+platform+`"`) {
		t.Errorf("%s: the manifest does not name the target platform %s:\n%s", name, platform, manifest)
	}
	var bins []string
	for _, n := range names {
		if strings.HasPrefix(n, "extension/bin/") {
			bins = append(bins, n)
		}
	}
	if bin == "" {
		if len(bins) != 0 {
			t.Errorf("%s: the universal VSIX holds %v", name, bins)
		}
		return
	}
	if !slices.Equal(bins, []string{"extension/bin/" + bin}) {
		t.Fatalf("%s: binaries %v, want extension/bin/%s", name, bins, bin)
	}
	if got := readZipFile(t, files["extension/bin/"+bin]); !bytes.Equal(got, exe) {
		t.Errorf("%s: extension/bin/%s (%d bytes) is not the archived binary (%d bytes)", name, bin, len(got), len(exe))
	}
}

func readZipFile(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return b
}

// TestArchivesIgnoreTheFilesystem writes the archives of the same content
// from files with different times and modes on disk: the bytes are the
// same, and every entry has the given time and the entry's mode, whatever
// the machine's umask and clock (TestReleaseIsReproducible builds on one
// machine in one minute).
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

// TestVSIXNeedsNPMFirst: a release with the VSIXes on a checkout without
// the npm workspace's packages, or on a machine without node or npm, stops
// in fill, before the first build, saying what to run.
func TestVSIXNeedsNPMFirst(t *testing.T) {
	repo := t.TempDir()
	c := config{repo: repo, out: filepath.Join(repo, "..", filepath.Base(repo)+"-dist"), version: "v0", commit: "c", epoch: epoch,
		targets: []string{"linux/amd64"}, vsix: true, log: io.Discard}
	err := c.fill()
	if err == nil || !strings.Contains(err.Error(), "node_modules") || !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), "VSIX=false") {
		t.Errorf("fill without node_modules: %v, want it to name what is missing, npm ci and VSIX=false", err)
	}
	for _, p := range []string{"@vscode/vsce/vsce", "esbuild/package.json"} {
		p = filepath.Join(repo, "node_modules", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if err := c.fill(); err == nil || !strings.Contains(err.Error(), "node") || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("fill without node on PATH: %v, want it to say node is missing", err)
	}
	if _, err := os.Stat(c.out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fill made %s (%v): nothing is built or written before the checks", c.out, err)
	}
	c.vsix = false
	if err := c.fill(); err != nil {
		t.Errorf("fill with VSIX=false needs no npm: %v", err)
	}
}
