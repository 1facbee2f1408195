// Command release builds darman's release files into one directory (`make
// release` runs it): for each target a stripped binary in a reproducible
// archive (.tar.gz, .zip for Windows), a CycloneDX SBOM of the modules the
// binary links, the VS Code extension's platform VSIX with the binary inside and
// the universal VSIX, one SHA256SUMS over all of them, and a table of their
// sizes.
//
// Reproducible: every archive entry has the commit's time
// (SOURCE_DATE_EPOCH, else the commit's), owner 0:0, a fixed mode, and the
// entries are sorted; gzip carries no name or time. The VSIXes vsce writes
// are rewritten the same way (sorted, the commit's time, 0644 and 0755 for
// the binary). Two runs on one commit with one
// Go toolchain and one npm ci give the same bytes for every file
// (release_test.go).
//
// A target whose binary does not build is fatal. What the VSIXes need (node,
// npm, the workspace's node_modules) is checked before anything is built.
//
//	go run ./scripts/release [-out dist] [-targets linux/amd64,...] [-vsix=false] [-sbom=false]
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// allTargets are the release's platforms, in the order they are built.
var allTargets = []string{"linux/amd64", "linux/arm64", "darwin/arm64", "darwin/amd64", "windows/amd64", "windows/arm64"}

// vscodePlatform is the VS Code extension target of each release target.
var vscodePlatform = map[string]string{
	"linux/amd64":   "linux-x64",
	"linux/arm64":   "linux-arm64",
	"darwin/amd64":  "darwin-x64",
	"darwin/arm64":  "darwin-arm64",
	"windows/amd64": "win32-x64",
	"windows/arm64": "win32-arm64",
}

// sbomTool is the SBOM generator, pinned: `go install` fetches it through
// the module proxy once and caches the build.
const sbomTool = "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0"

type config struct {
	repo    string // the repository's root
	out     string // where the release files go
	version string
	commit  string
	epoch   time.Time // every archive entry's time
	targets []string
	vsix    bool
	sbom    bool
	// tools is where the SBOM generator is installed; "" means out/build/tools.
	tools string
	log   io.Writer
}

func main() {
	var c config
	var targets string
	flag.StringVar(&c.out, "out", "dist", "the directory the release files go to (emptied first)")
	flag.StringVar(&c.version, "version", "", "the version stamped into the binary and the archives' names (default: git describe --tags --always --dirty)")
	flag.StringVar(&c.commit, "commit", "", "the commit stamped into the binary (default: git rev-parse HEAD)")
	flag.StringVar(&targets, "targets", strings.Join(allTargets, ","), "comma-separated GOOS/GOARCH targets")
	flag.BoolVar(&c.vsix, "vsix", true, "also package the VS Code extension's VSIXes (needs npm ci)")
	flag.BoolVar(&c.sbom, "sbom", true, "also write a CycloneDX SBOM per target (with "+sbomTool+")")
	flag.Parse()
	c.targets = strings.Split(targets, ",")
	c.log = os.Stdout
	if err := c.fill(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	files, err := c.run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	c.report(files)
}

// fill completes the configuration from git and the environment.
func (c *config) fill() error {
	if c.repo == "" {
		top, err := git(".", "rev-parse", "--show-toplevel")
		if err != nil {
			return fmt.Errorf("run it inside darman's git checkout: %w", err)
		}
		c.repo = top
	}
	for _, t := range c.targets {
		if _, ok := vscodePlatform[t]; !ok {
			return fmt.Errorf("unknown target %q: use some of %s", t, strings.Join(allTargets, ","))
		}
	}
	if c.version == "" {
		c.version = cmp.Or(must(git(c.repo, "describe", "--tags", "--always", "--dirty")), "dev")
	}
	if c.commit == "" {
		c.commit = must(git(c.repo, "rev-parse", "HEAD"))
	}
	if c.epoch.IsZero() {
		s := os.Getenv("SOURCE_DATE_EPOCH")
		if s == "" {
			var err error
			if s, err = git(c.repo, "log", "-1", "--format=%ct", "HEAD"); err != nil {
				return fmt.Errorf("no SOURCE_DATE_EPOCH and no commit time: %w", err)
			}
		}
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds: %w", s, err)
		}
		c.epoch = time.Unix(sec, 0).UTC()
	}
	if !filepath.IsAbs(c.out) {
		c.out = filepath.Join(c.repo, c.out)
	}
	if c.tools == "" {
		c.tools = filepath.Join(c.out, "build", "tools")
	}
	if c.vsix {
		if err := c.checkVSIXTools(); err != nil {
			return err
		}
	}
	// run empties c.out: never the checkout or a directory holding it.
	if rel, err := filepath.Rel(c.out, c.repo); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return fmt.Errorf("-out %s holds the checkout, and it is emptied first: use a directory of its own, such as dist", c.out)
	}
	return nil
}

// run builds every release file and returns their names in c.out, sorted.
func (c *config) run() ([]string, error) {
	if err := os.RemoveAll(c.out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(c.out, "build"), 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, t := range c.targets {
		goos, goarch, _ := strings.Cut(t, "/")
		exe := filepath.Join(c.out, "build", goos+"_"+goarch, "darman")
		if goos == "windows" {
			exe += ".exe"
		}
		fmt.Fprintf(c.log, "%s: building\n", t)
		if out, err := c.build(goos, goarch, exe); err != nil {
			return nil, fmt.Errorf("%s: go build failed: %v\n%s", t, err, out)
		}
		archive, err := c.archive(goos, goarch, exe)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		files = append(files, archive)
		if c.sbom {
			sbom, err := c.writeSBOM(goos, goarch, exe)
			if err != nil {
				return nil, fmt.Errorf("%s: SBOM: %w", t, err)
			}
			files = append(files, sbom)
		}
		if c.vsix {
			vsix, err := c.packageVSIX(vscodePlatform[t], exe)
			if err != nil {
				return nil, fmt.Errorf("%s: VSIX: %w", t, err)
			}
			files = append(files, vsix)
		}
	}
	if c.vsix {
		vsix, err := c.packageVSIX("", "")
		if err != nil {
			return nil, fmt.Errorf("universal VSIX: %w", err)
		}
		files = append(files, vsix)
	}
	slices.Sort(files)
	if err := c.writeSums(files); err != nil {
		return nil, err
	}
	return files, nil
}

// build runs go build for one target, returning its output.
func (c *config) build(goos, goarch, exe string) ([]byte, error) {
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", c.version, c.commit)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", exe, "./cmd/darman")
	cmd.Dir = c.repo
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// base is the name of one target's release files, without extension.
func (c *config) base(goos, goarch string) string {
	return fmt.Sprintf("darman_%s_%s_%s", c.version, goos, goarch)
}

// entry is one file of an archive.
type entry struct {
	name string // inside the archive's top directory
	path string // on disk
	mode fs.FileMode
}

// archive writes the target's archive: the binary, LICENSE and README.md
// under one top directory named like the archive.
func (c *config) archive(goos, goarch, exe string) (string, error) {
	entries := []entry{
		{filepath.Base(exe), exe, 0o755},
		{"LICENSE", filepath.Join(c.repo, "LICENSE"), 0o644},
		{"README.md", filepath.Join(c.repo, "README.md"), 0o644},
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	top := c.base(goos, goarch)
	var buf bytes.Buffer
	var name string
	var err error
	if goos == "windows" {
		name = top + ".zip"
		err = writeZip(&buf, top, entries, c.epoch)
	} else {
		name = top + ".tar.gz"
		err = writeTarGz(&buf, top, entries, c.epoch)
	}
	if err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(c.out, name), buf.Bytes(), 0o644)
}

func writeTarGz(w io.Writer, top string, entries []entry, epoch time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	// No name, no time: gzip's header is the same on every run.
	gz.Header = gzip.Header{OS: 255}
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode int64, size int64, typ byte) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: epoch, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(top+"/", 0o755, 0, tar.TypeDir)); err != nil {
		return err
	}
	for _, e := range entries {
		b, err := os.ReadFile(e.path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr(top+"/"+e.name, int64(e.mode), int64(len(b)), tar.TypeReg)); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, top string, entries []entry, epoch time.Time) error {
	zw := zip.NewWriter(w)
	dir := &zip.FileHeader{Name: top + "/", Method: zip.Store, Modified: epoch}
	dir.SetMode(fs.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dir); err != nil {
		return err
	}
	for _, e := range entries {
		b, err := os.ReadFile(e.path)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: top + "/" + e.name, Method: zip.Deflate, Modified: epoch}
		h.SetMode(e.mode)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeSBOM writes the CycloneDX SBOM of the target's binary: the modules
// and the Go standard library it links, read from the build information Go
// records in it (what `go version -m` prints), so it is what was built.
// The document's time is the archives'. Licenses are left out rather than
// guessed: the tool's -licenses detection reads each module's license file
// from the module cache and, for this module's dependencies, names
// modelcontextprotocol/go-sdk CC-BY-4.0 (its code is Apache-2.0 and MIT,
// only its documentation CC-BY-4.0) and golang.org/x/... "BSD-Source-Code"
// (their license is BSD-3-Clause), and it downloads the main module by its
// version, which an unpublished commit does not have. (Its `app` mode cannot read the version of a git
// worktree's checkout.)
func (c *config) writeSBOM(goos, goarch, exe string) (string, error) {
	name := c.base(goos, goarch) + ".cdx.json"
	// Built for this machine once, into the release's build directory.
	tool := filepath.Join(c.tools, "cyclonedx-gomod")
	if _, err := os.Stat(tool); err != nil {
		install := exec.Command("go", "install", sbomTool)
		install.Env = append(os.Environ(), "GOBIN="+c.tools, "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
		if out, err := install.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go install %s: %v\n%s", sbomTool, err, out)
		}
	}
	cmd := exec.Command(tool, "bin", "-json", "-std", "-noserial", "-notimestamp", "-version", c.version, "-output", "-", exe)
	cmd.Dir = c.repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v\n%s", err, stderr.Bytes())
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		return "", fmt.Errorf("the SBOM is not JSON: %w", err)
	}
	meta, _ := doc["metadata"].(map[string]any)
	if meta == nil {
		return "", errors.New("the SBOM has no metadata")
	}
	meta["timestamp"] = c.epoch.Format(time.RFC3339)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(c.out, name), append(b, '\n'), 0o644)
}

// checkVSIXTools reports what packaging the VSIXes needs and this machine
// lacks, so that a release without them stops before its first build rather
// than after the first target's: node runs vsce and esbuild, vsce runs the
// extension's prepublish script with npm, and both come from the npm
// workspace's node_modules.
func (c *config) checkVSIXTools() error {
	const fix = "run npm ci at the repository's root, or make release with VSIX=false"
	for _, cmd := range []string{"node", "npm"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("the VSIXes need %s, which is not on PATH: install Node.js and npm and %s", cmd, fix)
		}
	}
	for _, pkg := range []string{filepath.Join("@vscode", "vsce", "vsce"), filepath.Join("esbuild", "package.json")} {
		if _, err := os.Stat(filepath.Join(c.repo, "node_modules", pkg)); err != nil {
			return fmt.Errorf("the VSIXes need the extension's packages, and %s is missing: %s", filepath.Join("node_modules", pkg), fix)
		}
	}
	return nil
}

// packageVSIX packages the extension for a VS Code platform with exe
// inside, or the universal VSIX (no binary) when platform is "", and makes
// it reproducible (normalizeVSIX).
func (c *config) packageVSIX(platform, exe string) (string, error) {
	ext := filepath.Join(c.repo, "vscode-extension")
	name := "darman-vscode-" + c.version + ".vsix"
	var cmd *exec.Cmd
	if platform == "" {
		// What `npm run package` does, with the release's file name.
		cmd = exec.Command("node", filepath.Join(c.repo, "node_modules", "@vscode", "vsce", "vsce"),
			"package", "--no-dependencies", "--out", filepath.Join(c.out, name))
	} else {
		name = "darman-vscode-" + c.version + "-" + platform + ".vsix"
		cmd = exec.Command("node", "scripts/package-platform.mjs", platform)
		cmd.Env = append(os.Environ(), "DARMAN_BINARY="+exe, "VSIX_OUT="+filepath.Join(c.out, name))
	}
	cmd.Dir = ext
	// vsce sorts the entries when SOURCE_DATE_EPOCH is set; normalizeVSIX
	// sorts them anyway.
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", c.epoch.Unix()))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return name, normalizeVSIX(filepath.Join(c.out, name), c.epoch)
}

// normalizeVSIX rewrites the VSIX at path with its entries sorted by name,
// each with the time epoch and mode 0644, the binary (extension/bin/darman,
// darman.exe) 0755: vsce takes each file's mode from the disk, so it
// depends on the checkout's umask, and writes MS-DOS times in the local time
// zone. Each entry is decompressed and compressed again with its method, by
// Go's flate, which gives the same bytes for the same input (zip's raw copy
// would keep vsce's bytes, but writes no time).
func normalizeVSIX(path string, epoch time.Time) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("vsce wrote no readable VSIX: %w", err)
	}
	files := slices.Clone(zr.File)
	slices.SortFunc(files, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: f.Method, Modified: epoch}
		mode := fs.FileMode(0o644)
		if f.Name == "extension/bin/darman" || f.Name == "extension/bin/darman.exe" {
			mode = 0o755
		}
		h.SetMode(mode)
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s in the VSIX: %w", f.Name, err)
		}
		w, err := zw.CreateHeader(h)
		if err == nil {
			_, err = io.Copy(w, r)
		}
		r.Close()
		if err != nil {
			return fmt.Errorf("%s in the VSIX: %w", f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// writeSums writes SHA256SUMS over files, in sha256sum's format.
func (c *config) writeSums(files []string) error {
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(c.out, f))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	return os.WriteFile(filepath.Join(c.out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// report prints each release file's size, and each binary's.
func (c *config) report(files []string) {
	fmt.Fprintf(c.log, "\nrelease %s (commit %.12s, %s) in %s:\n", c.version, c.commit, runtime.Version(), c.out)
	size := func(p string) string {
		fi, err := os.Stat(p)
		if err != nil {
			return "?"
		}
		if fi.Size() < 1<<20 {
			return fmt.Sprintf("%6.1f KiB", float64(fi.Size())/(1<<10))
		}
		return fmt.Sprintf("%6.1f MiB", float64(fi.Size())/(1<<20))
	}
	for _, f := range append(files, "SHA256SUMS") {
		fmt.Fprintf(c.log, "  %s  %s\n", size(filepath.Join(c.out, f)), f)
	}
	bins, _ := filepath.Glob(filepath.Join(c.out, "build", "*", "darman*"))
	for _, b := range bins {
		rel, _ := filepath.Rel(c.out, b)
		fmt.Fprintf(c.log, "  %s  %s (stripped binary)\n", size(b), rel)
	}
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func must(s string, _ error) string { return s }
