package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/darman-dev/darman/agent"
)

// shadow is the shadow git repository of one workspace: its own object
// database and refs under the Keeper's directory, with the
// workspace as its work tree. Its stat cache (walk.go) makes a snapshot
// cost what changed since the last one. One process at a time
// works on it (mu, and a lock file for the other darman processes).
type shadow struct {
	k    *Keeper
	root string // the workspace, absolute and clean
	dir  string // the shadow repository
	git  *git

	mu    sync.Mutex
	ready bool
	// cache is the stat cache as this process last read or wrote it;
	// cacheStat, the lstat of its file then.
	cache     *statCache
	cacheStat fstat
	// listings counts the directories the walks listed (the others were
	// known unchanged by their stat).
	listings atomic.Int64
	// behind: how many files the cache in memory has newer than the one
	// on disk (whose tree is still darman-tree); gcMark, the stat of the
	// gc mark (gcMarkPath) when the cache in memory was last known good.
	behind int
	gcMark fstat

	// The watcher (watch.go): nil before the first snapshot, and once it
	// failed (watchErr says why); watchBase, the cache it has watched the
	// tree of since the cache was brought up to date; walks numbers the
	// walks; large, the files each directory named as not kept when last
	// visited; overflows, how often the watcher lost changes.
	watch     *watcher
	watchErr  error
	watchBase *statCache
	walks     uint64
	large     map[string][]agent.LargeFile
	overflows int
	full      int // snapshots that walked the whole tree
	partial   int // snapshots that visited only what the watcher saw change
}

// maxBehind is how many files' changes the stat cache on disk may lag the
// one in memory: what the next darman process reads again.
const maxBehind = 64

// gcMarkPath is a file every gc rewrites: a gc of another process, which
// keeps only the trees it knows, makes a cache in memory that is behind
// the disk's suspect (its trees may be gone), so it is read from disk
// again.
func (s *shadow) gcMarkPath() string { return filepath.Join(s.dir, "darman-gc") }

// shadowDir is where a workspace's shadow repository lives: a name made
// from its path, so two workspaces never share one.
func shadowDir(base, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(base, hex.EncodeToString(sum[:12]))
}

// lock takes the shadow for the caller: this process's goroutines and the
// other darman processes wait. The repository is made on first use.
func (s *shadow) lock(ctx context.Context) (func(), error) {
	s.mu.Lock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	unlockFile, err := lockFile(ctx, filepath.Join(s.dir, "darman.lock"))
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("locking the checkpoint store %s: %w", s.dir, err)
	}
	unlock := func() { unlockFile(); s.mu.Unlock() }
	if err := s.init(ctx); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// init makes the repository when it is not there yet and points it at the
// workspace's own objects, read only, so that a file already committed
// there is not stored twice.
func (s *shadow) init(ctx context.Context) error {
	if s.ready {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if _, err := s.git.run(ctx, nil, "init", "--bare", "--quiet", "--object-format=sha1"); err != nil {
			return fmt.Errorf("making the checkpoint store %s: %w", s.dir, err)
		}
		for _, kv := range [][2]string{{"core.bare", "false"}, {"core.logAllRefUpdates", "false"}, {"index.version", "4"}, {"gc.auto", "0"}} {
			if _, err := s.git.run(ctx, nil, "config", kv[0], kv[1]); err != nil {
				return fmt.Errorf("making the checkpoint store %s: %w", s.dir, err)
			}
		}
		os.WriteFile(filepath.Join(s.dir, "workspace"), []byte(s.root+"\n"), 0o600)
	}
	alt := filepath.Join(s.dir, "objects", "info", "alternates")
	if objects := s.userObjects(); objects != "" {
		os.WriteFile(alt, []byte(objects+"\n"), 0o600)
	} else {
		os.Remove(alt)
	}
	s.ready = true
	return nil
}

// userGitDir is the workspace's own git directory (its common directory
// for a linked worktree), "" when it has none. Only read, never written.
func (s *shadow) userGitDir() string {
	dotgit := filepath.Join(s.root, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotgit
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.root, dir)
	}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		return filepath.Clean(common)
	}
	return dir
}

func (s *shadow) userObjects() string {
	gd := s.userGitDir()
	if gd == "" {
		return ""
	}
	objects := filepath.Join(gd, "objects")
	if fi, err := os.Stat(objects); err != nil || !fi.IsDir() {
		return ""
	}
	return objects
}

// syncExclude gives the shadow the workspace's own info/exclude, so that
// what the user keeps out of git is kept out of snapshots too.
func (s *shadow) syncExclude() {
	gd := s.userGitDir()
	if gd == "" {
		return
	}
	want, err := os.ReadFile(filepath.Join(gd, "info", "exclude"))
	if err != nil {
		return
	}
	path := filepath.Join(s.dir, "info", "exclude")
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, want, 0o600)
}

// snapshot records the workspace's tracked and untracked-but-not-ignored
// files and returns the tree. Only what changed since the last snapshot is
// read and written: the stat cache tells the rest (walk.go). Files over the
// size limit, and files that cannot be read, are named in Large and left
// out. The caller holds the lock.
func (s *shadow) snapshot(ctx context.Context) (_ agent.Snapshot, err error) {
	s.syncExclude()
	s.walks++
	w := &walker{s: s, ctx: ctx, start: time.Now(), skip: s.inside(s.k.opts.Dir), gen: s.walks}
	c := s.loadCache()
	defer func() { s.watched(c, err == nil) }()
	first := c == nil
	if first {
		// The first snapshot, or one after a damaged cache: every file is
		// read once. (A git index of an earlier darman goes; it kept
		// objects alive.)
		os.Remove(filepath.Join(s.dir, "index"))
		if shared, _ := filepath.Glob(filepath.Join(s.dir, "sharedindex.*")); len(shared) > 0 {
			for _, f := range shared {
				os.Remove(f)
			}
		}
		c = &statCache{root: newNode()}
	}
	excludes := s.excludesPrint()
	reignore := excludes != c.excludes
	c.excludes = excludes
	ch := s.changesSince(c, first || reignore)
	w.watch = s.watch
	if ch != nil {
		s.partial++
	} else {
		s.full++
	}
	snap, err := w.walk(c, reignore, ch)
	if err != nil {
		s.cache = nil // half brought up to date: read again from the shadow
		return agent.Snapshot{}, err
	}
	if changed := w.changed.Load(); !first && !reignore && (!changed || ch != nil && !w.ignoreChanged.Load()) {
		updated := int(w.updated.Load())
		if changed {
			// A watcher's snapshot that added, removed or renamed names
			// (dirs says how many directories it visited): the next
			// process, whose walk lists the directories whose stat
			// changed, finds them again, as it finds the files below.
			updated += len(ch.dirs)
		}
		if updated == 0 && (s.behind > 0 || snap.Tree == s.cachedTree()) {
			return snap, nil
		}
		// Only the stat or content of files the cache knows changed (or
		// the watcher saw where names changed): the cache on disk, with
		// the tree it goes with (which every gc keeps), still tells the
		// next process the truth of all else, and that process finds
		// these files by their stat and reads them again. A few such
		// files of lag cost it little; writing out the whole cache for
		// each costs every snapshot.
		if s.behind+updated <= maxBehind {
			s.behind += updated
			return snap, nil
		}
	}
	if err := s.saveCache(c, snap.Tree); err != nil {
		s.cache = nil
		return agent.Snapshot{}, err
	}
	return snap, nil
}

// inside is path relative to the workspace when it lies in it, "" when
// not.
func (s *shadow) inside(path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(s.root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

func readable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func nulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// exists reports whether the repository was made.
func (s *shadow) exists() bool {
	_, err := os.Stat(filepath.Join(s.dir, "HEAD"))
	return err == nil
}

// cachedTree is the tree of the last snapshot, "" when there is none.
func (s *shadow) cachedTree() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "darman-tree"))
	if t := string(bytes.TrimSpace(b)); err == nil && len(t) == 40 {
		return t
	}
	return ""
}

// markGC rewrites the gc mark after a gc (a new file each time: its inode
// tells the change even within one tick of the clock). This process's
// cache in memory stays good, its tree kept; another's, when behind, is
// read from disk again.
func (s *shadow) markGC() error {
	before, _ := statPath(s.gcMarkPath())
	tmp := s.gcMarkPath() + ".tmp"
	if err := os.WriteFile(tmp, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		return fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	if err := os.Rename(tmp, s.gcMarkPath()); err != nil {
		return fmt.Errorf("the checkpoint store %s: %w", s.dir, err)
	}
	if before == s.gcMark {
		s.gcMark, _ = statPath(s.gcMarkPath())
	}
	return nil
}
