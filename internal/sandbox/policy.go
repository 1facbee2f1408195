package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// homeReadable are the directories (and files) under home that commands
// may read: toolchains and their settings, not credentials.
var homeReadable = []string{
	"go", ".cache/go-build", ".cache/pip", ".cache/pnpm", ".cache/yarn", ".cache/node", ".cache/ms-playwright",
	".cargo/bin", ".cargo/registry", ".cargo/git", ".cargo/config.toml", ".rustup",
	".npm", ".nvm", ".yarn", ".bun", ".deno", ".volta", ".pyenv", ".rbenv", ".sdkman", ".m2/repository", ".gradle/caches", ".gradle/wrapper",
	".local/bin", ".local/lib", ".local/share/pnpm", ".local/share/virtualenvs", ".local/pipx",
	".gitconfig", ".config/git", ".gitignore_global",
}

// DefaultCaches are the toolchains' caches under home that commands may
// write: Go's build and module caches (from go env when go is on PATH),
// npm, pnpm, yarn, pip and cargo.
func DefaultCaches(home string) []string {
	var out []string
	if home != "" {
		for _, rel := range []string{
			".cache/go-build", "go/pkg/mod",
			".npm", ".cache/pnpm", ".local/share/pnpm", ".cache/yarn", ".yarn/berry",
			".cache/pip",
			".cargo/registry", ".cargo/git",
		} {
			out = append(out, filepath.Join(home, rel))
		}
	}
	out = append(out, goCaches()...)
	return dedupe(out)
}

var goCachesOnce = sync.OnceValue(func() []string {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil
	}
	dirs := goCacheDirs(gobin)
	for _, d := range dirs {
		// Go makes them on first use; a sandboxed first use could not.
		os.MkdirAll(d, 0o755)
	}
	return dirs
})

func goCaches() []string { return goCachesOnce() }

// devices are the device files every command may use.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// staticTTL is how long the part of the policy that does not depend on
// the workspace (what / and home hold, the caches) is reused before it is
// read from the disk again.
const staticTTL = 2 * time.Second

// static is the part of every policy that does not depend on the
// workspace: reads outside and inside home, the configured writable
// directories and the caches, checked against the disk.
type static struct {
	at                                         time.Time
	readDirs, readFiles, writeDirs, writeFiles []string
}

func (s *Sandbox) static() static {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.cached; !st.at.IsZero() && time.Since(st.at) < staticTTL {
		return st
	}
	home := s.opts.Home
	var st static
	st.readDirs, st.readFiles = outsideHome(home)
	if home != "" {
		for _, rel := range homeReadable {
			st.readDirs = append(st.readDirs, filepath.Join(home, rel))
		}
	}
	st.readDirs = append(st.readDirs, s.opts.ReadableDirs...)
	st.writeDirs = append(slices.Clip(s.opts.WritableDirs), s.caches...)
	// Landlock grants directory rights only on directories: the files
	// among the listed paths get file rules.
	var files []string
	st.readDirs, files = splitFiles(existing(dedupe(st.readDirs)))
	st.readFiles = dedupe(append(st.readFiles, files...))
	st.writeDirs, st.writeFiles = splitFiles(existing(dedupe(st.writeDirs)))
	st.at = time.Now()
	s.cached = st
	return st
}

// Policy builds the policy of one command run for req, with tmp its
// session's temporary directory. It looks at the workspace (its .git, the
// protected paths) each time, so it sees what exists now; what lies
// outside the workspace is looked at again after staticTTL.
func (s *Sandbox) Policy(req Request, tmp string) Policy {
	s.probe()
	st := s.static()
	p := Policy{
		Network:     s.opts.Network || req.Network,
		UnixSockets: s.opts.UnixSockets,
		Home:        s.opts.Home,
		Devices:     devices,
		ReadDirs:    st.readDirs,
		ReadFiles:   st.readFiles,
		WriteFiles:  slices.Clip(st.writeFiles),
	}
	root := realOr(req.Root)
	if root != "" {
		p.WriteDirs = append(p.WriteDirs, root)
	}
	if tmp != "" {
		p.WriteDirs = append(p.WriteDirs, tmp)
	}
	p.WriteDirs = append(p.WriteDirs, st.writeDirs...)
	if root != "" {
		r := newResolver(root)
		git := gitDirs(root, r)
		p.WriteDirs = append(p.WriteDirs, existing(git.write)...)
		p.WriteFiles = append(p.WriteFiles, existing(git.writeFiles)...)
		if s.status.ProtectedReadOnly {
			var listed []string
			if s.opts.Protected != nil {
				listed = s.opts.Protected(root)
			}
			p.ReadOnly, p.Pin = s.protectedPaths(root, listed, s.opts.Protect, git, r)
		}
	}
	p.WriteDirs = dedupe(p.WriteDirs)
	p.WriteFiles = dedupe(p.WriteFiles)
	return p
}

// splitFiles parts paths into directories and the rest.
func splitFiles(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if isDir(p) {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	return dirs, files
}

// outsideHome lists what / holds except the way to home: every entry of
// / but the one home is under, then every sibling of each directory on the
// way down to home. Directories and files apart, since Landlock grants
// directory rights only on directories.
func outsideHome(home string) (dirs, files []string) {
	var way []string // the directories from / down to home, excluding /
	if home != "" && home != "/" {
		for d := home; d != "/" && d != "."; d = filepath.Dir(d) {
			way = append([]string{d}, way...)
		}
	}
	parent := "/"
	for i := 0; ; i++ {
		skip := ""
		if i < len(way) {
			skip = way[i]
		}
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			p := filepath.Join(parent, e.Name())
			if p == skip {
				continue
			}
			if isDir(p) {
				dirs = append(dirs, p)
			} else {
				files = append(files, p)
			}
		}
		if skip == "" || i+1 >= len(way) {
			break
		}
		parent = skip
	}
	if len(way) == 0 {
		dirs = []string{"/"}
		files = nil
	}
	return dirs, files
}

// gitInfo is the workspace's repository: where git writes when it adds and
// commits, and what must not change.
type gitInfo struct {
	gitDir, commonDir string
	write, writeFiles []string
}

// gitDirs finds the workspace's git directory. A .git directory is inside
// the workspace already; a .git file (a worktree or submodule) points
// elsewhere, and git add / commit then write that directory and the
// common directory's objects, refs and logs.
func gitDirs(root string, r *resolver) gitInfo {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return gitInfo{}
	}
	real, _, _ := r.resolve(dotgit)
	g := gitInfo{gitDir: real, commonDir: real}
	if fi.Mode().IsRegular() {
		f, err := os.Open(dotgit)
		if err != nil {
			return gitInfo{}
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		f.Close()
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "gitdir:")
		if !ok {
			return gitInfo{}
		}
		dir := strings.TrimSpace(line)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		g.gitDir, g.commonDir = realOr(dir), realOr(dir)
		if b, err := os.ReadFile(filepath.Join(g.gitDir, "commondir")); err == nil {
			c := strings.TrimSpace(string(b))
			if !filepath.IsAbs(c) {
				c = filepath.Join(g.gitDir, c)
			}
			g.commonDir = realOr(c)
		}
		g.write = append(g.write, g.gitDir)
		for _, sub := range []string{"objects", "refs", "logs", "worktrees/" + filepath.Base(g.gitDir)} {
			g.write = append(g.write, filepath.Join(g.commonDir, sub))
		}
		g.writeFiles = append(g.writeFiles, filepath.Join(g.commonDir, "packed-refs"))
	}
	return g
}

// protectedPaths resolves the protected paths of the workspace at root
// (listed: absolute, existing or not; patterns: relative globs, ".git/"
// ones in the git directories) to the paths to make read-only, and the
// directories between root and each of them to pin. A listed path that
// does not exist must not be created either (the file another program
// would run is usually one that is not there yet: .git/commondir,
// .envrc): see missingProtected.
func (s *Sandbox) protectedPaths(root string, listed, patterns []string, git gitInfo, r *resolver) (ro, pin []string) {
	seen := map[string]bool{}
	add := func(p string) {
		real, _, ok := r.resolve(p)
		if !ok || seen[real] {
			return
		}
		seen[real] = true
		ro = append(ro, real)
		// Pin what lies between root and the path, so that the directory
		// holding it cannot be renamed and replaced.
		for d := filepath.Dir(p); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
			if rd, dir, _ := r.resolve(d); !seen["pin:"+rd] && dir {
				seen["pin:"+rd] = true
				pin = append(pin, rd)
			}
		}
	}
	gitDirs := []string{git.gitDir}
	if git.commonDir != git.gitDir {
		gitDirs = append(gitDirs, git.commonDir)
	}
	// Most listed paths are names at the root that do not exist: one
	// read of the root's names rules those out without a look at each.
	var atRoot map[string]bool
	if f, err := os.Open(root); err == nil {
		names, _ := f.Readdirnames(-1)
		f.Close()
		atRoot = make(map[string]bool, len(names))
		for _, n := range names {
			atRoot[n] = true
		}
	}
	for _, p := range listed {
		if rel, ok := strings.CutPrefix(p, root+string(filepath.Separator)); ok && atRoot != nil {
			first, _, _ := strings.Cut(rel, string(filepath.Separator))
			if !atRoot[first] {
				continue // missing, directly under the root: see missingProtected
			}
		}
		if _, _, ok := r.resolve(p); ok {
			add(p)
			continue
		}
		if guard := s.missingProtected(root, p, gitDirs, r); guard != "" {
			add(guard)
		}
	}
	for _, pat := range patterns {
		rel, ok := strings.CutPrefix(pat, ".git/")
		if ok && git.gitDir != "" {
			for _, dir := range gitDirs {
				matches, _ := filepath.Glob(filepath.Join(dir, rel))
				for _, m := range matches {
					add(m)
				}
			}
			if rel == "config" {
				add(filepath.Join(git.gitDir, "config.worktree"))
			}
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(pat)) {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pat)))
		for _, m := range matches {
			add(m)
		}
	}
	// The .git directory itself, inside the workspace, is pinned too.
	if len(ro) > 0 {
		if real, dir, _ := r.resolve(filepath.Join(root, ".git")); dir && !seen["pin:"+real] {
			pin = append(pin, real)
		}
	}
	slices.Sort(pin)
	return ro, pin
}

// missingProtected returns what to make read-only so that commands cannot
// create the protected path p, which does not exist: "" when nothing can
// be. A mount needs an existing path, so:
//   - in a git directory (p's nearest existing directory is one, or is
//     inside one), a placeholder git reads as absent is made where p's
//     first missing component is (see placeholder), and stays until the
//     sandbox closes: the git directory's own entries (index.lock,
//     COMMIT_EDITMSG, refs, objects) stay writable, so git commit works;
//   - inside the workspace, the nearest existing directory below the root
//     (.cargo for .cargo/config.toml) is made read-only whole;
//   - where that directory is the workspace root itself (.envrc, .husky,
//     .vscode when absent), nothing: a read-only root would refuse every
//     new file, and a placeholder there would show in the user's folder.
//     The permission checks ask before a command names such a path; a
//     script that hides the name is not stopped (docs/security.md).
func (s *Sandbox) missingProtected(root, p string, gitDirs []string, r *resolver) string {
	first := p
	dir := filepath.Dir(p)
	for {
		if _, isDir, ok := r.resolve(dir); ok {
			if !isDir {
				return ""
			}
			break
		}
		if dir == root || filepath.Dir(dir) == dir {
			return ""
		}
		first, dir = dir, filepath.Dir(dir)
	}
	for _, g := range gitDirs {
		if g != "" && under(dir, g) {
			if s.placeholder(first, first != p || gitDirEntries[filepath.Base(p)]) {
				return first
			}
			return ""
		}
	}
	if dir != root && under(dir, root) {
		return dir
	}
	return ""
}

// gitDirEntries are the protected entries of a git directory that git
// reads as directories.
var gitDirEntries = map[string]bool{"hooks": true, "info": true}

// placeholder makes, once, the placeholder at path, an entry of a git
// directory: an empty directory (dir), or a file git reads as the entry's
// absence (commondir naming the git directory itself, an empty alternates
// or config.worktree). It reports whether the placeholder is there; Close
// removes it when it is still as made.
func (s *Sandbox) placeholder(path string, dir bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.placeholders[path]; ok {
		return true
	}
	if dir {
		if err := os.Mkdir(path, 0o755); err != nil {
			return false
		}
	} else {
		content := ""
		if filepath.Base(path) == "commondir" {
			content = ".\n"
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return false
		}
		_, werr := f.WriteString(content)
		if err := f.Close(); werr != nil || err != nil {
			os.Remove(path)
			return false
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	s.placeholders[path] = fi
	return true
}

// removePlaceholders removes the placeholders that are still as made (an
// empty directory, or the file unchanged); s.mu is held.
func (s *Sandbox) removePlaceholders() {
	for path, made := range s.placeholders {
		fi, err := os.Lstat(path)
		if err != nil || !os.SameFile(fi, made) || !fi.ModTime().Equal(made.ModTime()) || fi.Size() != made.Size() {
			continue
		}
		os.Remove(path) // a directory only when empty
	}
	s.placeholders = map[string]os.FileInfo{}
}

// resolver finds the real paths of paths under a real directory (the
// workspace root) with one lstat per component below it, each at most once
// per policy, where realOr and a stat would look at every component from
// / again for each path. A path with a link on the way is resolved by
// realOr.
type resolver struct {
	dirs map[string]bool // real directories, no link on their way
}

func newResolver(root string) *resolver {
	return &resolver{dirs: map[string]bool{root: true}}
}

// resolve returns p's real path, whether it is a directory and whether it
// exists; p is absolute.
func (r *resolver) resolve(p string) (real string, dir, exists bool) {
	p = filepath.Clean(p)
	base, n := p, 0
	for !r.dirs[base] {
		next := filepath.Dir(base)
		if next == base {
			return r.slow(p)
		}
		base, n = next, n+1
	}
	cur := base
	rest := p[len(base):]
	for i := 0; i < n; i++ {
		rest = strings.TrimPrefix(rest, string(filepath.Separator))
		name, after, _ := strings.Cut(rest, string(filepath.Separator))
		cur, rest = filepath.Join(cur, name), after
		if rest != "" {
			rest = string(filepath.Separator) + rest
		}
		fi, err := os.Lstat(cur)
		switch {
		case err != nil:
			return p, false, false
		case fi.Mode()&os.ModeSymlink != 0:
			return r.slow(p)
		case fi.IsDir():
			r.dirs[cur] = true
		case i < n-1:
			return p, false, false // a file on the way
		default:
			return cur, false, true
		}
	}
	return cur, true, true
}

func (r *resolver) slow(p string) (string, bool, bool) {
	real := realOr(p)
	fi, err := os.Stat(real)
	if err != nil {
		return real, false, false
	}
	return real, fi.IsDir(), true
}

func realOr(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func existing(paths []string) []string {
	out := paths[:0]
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func dedupe(paths []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}
