package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/darman-dev/darman/agent"
)

// A snapshot is taken by darman's own walk of the workspace, not by git's:
// git reads its whole index and lstats every file in one thread, which was
// most of a snapshot's time. The walk lstats the files in parallel,
// relative to their directory's descriptor, against a stat cache kept in
// memory (and in the shadow, for the next process), and hands git only what
// changed: the contents to store (hash-object). Whether a name not seen
// before is ignored is decided here by git's rules (ignore.go), checked
// against git check-ignore by TestIgnoreMatchesGit. The trees are written
// here, only those of the directories that changed.

// fstat is what a snapshot remembers of a file's lstat to tell next time
// whether it may have changed: git's stat cache, in small.
type fstat struct {
	size, mtime, ctime int64
	ino                uint64
	mode               uint32 // an fs.FileMode: kind and permission bits
}

func (s fstat) fileMode() fs.FileMode { return fs.FileMode(s.mode) }

// tracked is a file the snapshot records.
type tracked struct {
	st   fstat
	mode uint32 // git's: 0o100644, 0o100755 or 0o120000
	id   oid
	// racy: the file was written too close to the snapshot that read it
	// for its stat to tell a later change of the same size in the same
	// clock tick, so the next snapshot reads it again.
	racy bool
}

type otherKind uint8

const (
	kindIgnored otherKind = iota + 1
	kindLarge             // over the size limit or unreadable: named as not restorable
	kindSpecial           // neither a file, a link nor a directory: a socket, a fifo
	kindNested            // a repository of its own
)

// other is an entry the snapshot leaves out, remembered so that the next
// walk need not ask again.
type other struct {
	kind otherKind
	dir  bool
	st   fstat // kindLarge, kindSpecial: a change of it asks again
}

// node is a directory the walk goes into: one that is not ignored, or one
// that holds recorded files.
type node struct {
	files  map[string]*tracked
	subs   map[string]*node
	others map[string]*other
	ignore fstat // its .gitignore's, when last walked; zero when none
	// listed: the directory's own stat when it was last listed, zero when
	// that was too close to the snapshot for a later change to show in it
	// (or the system gives no such stat). While it stays the same, no
	// name in it was added, removed or renamed, and it is not listed.
	listed fstat
	tree   oid    // the tree of what is recorded beneath it; zero: nothing
	walk   uint64 // the last walk that visited it (walker.gen)

	// One snapshot's:
	dirty bool       // its own entries changed: its tree is written again
	fresh []freshEnt // entries the cache does not know
	cands []cand     // files to read
	large []agent.LargeFile
}

func newNode() *node {
	return &node{files: map[string]*tracked{}, subs: map[string]*node{}, others: map[string]*other{}}
}

type freshEnt struct {
	name string
	dir  bool
}

// cand is a file whose content the snapshot must read: new, or its stat
// changed, or racy.
type cand struct {
	name string
	st   fstat
	prev *tracked // nil for a file not recorded before
}

// statCache is what the last snapshot saw.
type statCache struct {
	excludes string // a fingerprint of the exclude files outside the tree
	root     *node
}

// walker is one snapshot's walk.
type walker struct {
	s     *shadow
	ctx   context.Context
	start time.Time
	skip  string // the checkpoint store, when it lies inside the workspace
	sem   chan struct{}
	wg    sync.WaitGroup
	// changed: the cache is not what it was; it is written back.
	changed atomic.Bool
	// updated: how many recorded files got a new stat or content, and
	// nothing else (a change the next process finds by the stat alone,
	// so the write of the cache may wait: see shadow.snapshot).
	updated atomic.Int32
	// ignoreChanged: a .gitignore changed; what is recorded now depends on
	// what was before it (recorded files stay), so the cache is written.
	ignoreChanged atomic.Bool

	// gen numbers this walk; a node it visited has it in node.walk, so
	// that no node is visited twice when changed directories nest.
	gen uint64
	// watch, when set, is told of every directory visited, before its
	// listing; deep (a watcher's walk: see watch.go) are the directories
	// walked whole, those whose parent the watcher saw them come to;
	// partial, that the walk goes only where the watcher saw changes.
	watch   *watcher
	deep    map[string]bool
	partial bool

	mu      sync.Mutex
	visited []visited
}

type visited struct {
	n   *node
	rel string
}

func (w *walker) abs(rel string) string {
	if rel == "" {
		return w.s.root
	}
	return filepath.Join(w.s.root, filepath.FromSlash(rel))
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// spawn visits n in a goroutine of its own; at most sem of them do
// system calls at once. deep: its subdirectories too (a walk of the whole
// tree is deep everywhere; a watcher's, only in what is new).
func (w *walker) spawn(n *node, rel string, reignore, deep bool) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.visit(n, rel, reignore, deep)
	}()
}

// visit lists one directory and lstats the recorded files in it against
// the cache, and walks on into its known subdirectories. What it cannot
// tell by the cache (new names; everything not recorded when its
// .gitignore changed, reignore) it leaves in n.fresh for the caller.
func (w *walker) visit(n *node, rel string, reignore, deep bool) {
	w.mu.Lock()
	if n.walk == w.gen {
		w.mu.Unlock()
		return
	}
	n.walk = w.gen
	w.mu.Unlock()
	w.sem <- struct{}{}
	released := false
	release := func() {
		if !released {
			released = true
			<-w.sem
		}
	}
	defer release()
	w.mu.Lock()
	w.visited = append(w.visited, visited{n, rel})
	w.mu.Unlock()
	abs := w.abs(rel)
	if w.watch != nil {
		w.watch.add(rel) // before the listing: a change after it is an event
	}
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		*n = *newNode()
		n.walk = w.gen
		n.dirty = true
		w.changed.Store(true)
		return
	}
	if err != nil {
		return // unreadable: kept as the last snapshot saw it
	}
	defer f.Close()
	// The stat before the listing: a change after it shows next time.
	dst, _ := statDir(f)
	if !reignore && dst != (fstat{}) && dst == n.listed && w.unlisted(n, f, abs, rel, deep) {
		return
	}
	w.s.listings.Add(1)
	es, err := f.ReadDir(-1)
	if err != nil {
		return
	}
	if w.racy(dst) {
		dst = fstat{}
	}
	if dst != n.listed {
		n.listed = dst
		w.changed.Store(true)
	}
	var gi fstat
	for _, e := range es {
		if e.Name() == ".gitignore" {
			gi, _ = statAt(f, abs, ".gitignore")
		}
	}
	changed := false
	if gi != n.ignore {
		reignore, n.ignore, changed = true, gi, true
		w.ignoreChanged.Store(true)
	}
	seen := make(map[string]bool, len(es)) // name: whether a directory
	for _, e := range es {
		name := e.Name()
		p := join(rel, name)
		if name == ".git" || p == w.skip {
			continue
		}
		dir := e.Type().IsDir()
		seen[name] = dir
		if dir {
			if sub := n.subs[name]; sub != nil {
				if !reignore || !sub.tree.isZero() {
					if deep || reignore || w.deep[p] {
						w.spawn(sub, p, reignore, true)
					}
					continue
				}
				delete(n.subs, name)
			} else if o := n.others[name]; o != nil && o.dir && !reignore {
				if o.kind != kindNested {
					continue
				}
				if isRepo(filepath.Join(abs, name)) {
					w.watchNested(p)
					continue
				}
			}
			delete(n.others, name)
			n.fresh = append(n.fresh, freshEnt{name, true})
			continue
		}
		if t := n.files[name]; t != nil {
			st, err := statAt(f, abs, name)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				delete(seen, name) // gone since the listing
			case err != nil:
				n.large = append(n.large, agent.LargeFile{Path: p})
				delete(seen, name)
			case st != t.st || t.racy:
				n.cands = append(n.cands, cand{name, st, t})
			}
			continue
		}
		if o := n.others[name]; o != nil && !o.dir && !reignore {
			if o.kind == kindIgnored {
				continue
			}
			st, err := statAt(f, abs, name)
			if err == nil && st == o.st {
				if o.kind == kindLarge {
					n.large = append(n.large, largeFile(p, st))
				}
				continue
			}
			delete(n.others, name)
			changed = true
			if err == nil { // known not to be ignored: read it again
				n.cands = append(n.cands, cand{name, st, nil})
				continue
			}
		}
		delete(n.others, name)
		n.fresh = append(n.fresh, freshEnt{name, false})
	}
	release()
	for name := range n.files {
		if dir, ok := seen[name]; !ok || dir {
			delete(n.files, name)
			n.dirty, changed = true, true
		}
	}
	for name, sub := range n.subs {
		if dir, ok := seen[name]; !ok || !dir {
			delete(n.subs, name)
			changed = true
			if !sub.tree.isZero() {
				n.dirty = true
			}
		}
	}
	for name, o := range n.others {
		if dir, ok := seen[name]; !ok || dir != o.dir {
			delete(n.others, name)
			changed = true
		}
	}
	if changed || len(n.fresh) > 0 { // (read tells whether a candidate changed it)
		w.changed.Store(true)
	}
}

// unlisted visits n by the names the cache knows, without listing the
// directory: its stat says none was added, removed or renamed since the
// last listing (as git's untracked cache does). It reports false, having
// done nothing, when the directory must be listed after all: its
// .gitignore changed, or a nested repository is one no more.
func (w *walker) unlisted(n *node, f *os.File, abs, rel string, deep bool) bool {
	if n.ignore != (fstat{}) {
		if gi, err := statAt(f, abs, ".gitignore"); err != nil || gi != n.ignore {
			return false
		}
	}
	for name, o := range n.others {
		if o.kind == kindNested {
			if !isRepo(filepath.Join(abs, name)) {
				return false
			}
			w.watchNested(join(rel, name))
		}
	}
	for name, sub := range n.subs {
		if p := join(rel, name); deep || w.deep[p] {
			w.spawn(sub, p, false, true)
		}
	}
	for name, t := range n.files {
		st, err := statAt(f, abs, name)
		switch {
		case errors.Is(err, fs.ErrNotExist): // gone since the directory's stat
			delete(n.files, name)
			n.dirty = true
			w.changed.Store(true)
		case err != nil:
			delete(n.files, name)
			n.dirty = true
			w.changed.Store(true)
			n.large = append(n.large, agent.LargeFile{Path: join(rel, name)})
		case st != t.st || t.racy:
			n.cands = append(n.cands, cand{name, st, t})
		}
	}
	for name, o := range n.others {
		if o.dir || o.kind == kindIgnored {
			continue
		}
		st, err := statAt(f, abs, name)
		if err == nil && st == o.st {
			if o.kind == kindLarge {
				n.large = append(n.large, largeFile(join(rel, name), st))
			}
			continue
		}
		delete(n.others, name)
		w.changed.Store(true)
		switch {
		case err == nil: // known not to be ignored: read it again
			n.cands = append(n.cands, cand{name, st, nil})
		case !errors.Is(err, fs.ErrNotExist):
			n.fresh = append(n.fresh, freshEnt{name, false})
		}
	}
	return true
}

func largeFile(path string, st fstat) agent.LargeFile {
	return agent.LargeFile{Path: path, Size: st.size, Modified: time.Unix(0, st.mtime).UTC()}
}

// isRepo reports whether dir is a git repository of its own: its .git a
// git directory, or a file pointing at one (a submodule, a linked
// worktree).
func isRepo(dir string) bool {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return false
	case fi.IsDir():
		_, herr := os.Stat(filepath.Join(dotgit, "HEAD"))
		_, oerr := os.Stat(filepath.Join(dotgit, "objects"))
		return herr == nil && oerr == nil
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(dotgit)
		return err == nil && bytes.HasPrefix(b, []byte("gitdir:"))
	}
	return false
}

// walk brings the cache up to what is in the workspace: the recorded
// files' new contents stored, the new names classified, the trees of the
// directories that changed written. It returns the snapshot. With ch (a
// watcher's changes since the cache was last brought up to date) it visits
// only the directories named there, and walks whole only what is new;
// without, every directory.
func (w *walker) walk(c *statCache, reignore bool, ch *changes) (agent.Snapshot, error) {
	w.sem = make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	if ch == nil {
		w.spawn(c.root, "", reignore, true)
	} else {
		w.partial, w.deep = true, ch.deep
		// By depth, a wave at a time: a directory and one beneath it are
		// never visited at once (the parent's visit reads and drops its
		// subdirectories' nodes), and a node the wave before removed, or
		// visited already, is found so.
		var waves [][]string
		for rel := range ch.dirs {
			d := 0
			if rel != "" {
				d = strings.Count(rel, "/") + 1
			}
			for len(waves) <= d {
				waves = append(waves, nil)
			}
			waves[d] = append(waves[d], rel)
		}
		for _, wave := range waves {
			type target struct {
				n   *node
				rel string
			}
			ts := make([]target, 0, len(wave)) // found before any visit changes the tree
			for _, rel := range wave {
				n, at := lookup(c.root, rel)
				ts = append(ts, target{n, at})
			}
			for _, t := range ts {
				w.spawn(t.n, t.rel, false, w.deep[t.rel])
			}
			w.wg.Wait()
		}
	}
	w.wg.Wait()
	all := w.visited
	for pending := w.visited; ; {
		var paths []string
		type at struct {
			n   *node
			rel string
			freshEnt
		}
		var ats []at
		var dirs []bool
		for _, v := range pending {
			for _, e := range v.n.fresh {
				paths = append(paths, join(v.rel, e.name))
				dirs = append(dirs, e.dir)
				ats = append(ats, at{v.n, v.rel, e})
			}
			v.n.fresh = nil
		}
		if len(paths) == 0 {
			break
		}
		ignored, err := w.s.checkIgnore(w.ctx, paths, dirs)
		if err != nil {
			return agent.Snapshot{}, err
		}
		w.visited = nil
		for i, a := range ats {
			abs := w.abs(paths[i])
			switch {
			case ignored[paths[i]]:
				a.n.others[a.name] = &other{kind: kindIgnored, dir: a.dir}
			case a.dir && isRepo(abs):
				a.n.others[a.name] = &other{kind: kindNested, dir: true}
				w.watchNested(paths[i])
			case a.dir:
				sub := newNode()
				a.n.subs[a.name] = sub
				w.spawn(sub, paths[i], false, true)
			default:
				st, err := statPath(abs)
				if err != nil {
					continue // gone since the listing
				}
				a.n.cands = append(a.n.cands, cand{a.name, st, nil})
			}
		}
		w.wg.Wait()
		all = append(all, w.visited...)
		pending = w.visited
	}
	var snap agent.Snapshot
	if err := w.read(all, &snap); err != nil {
		return agent.Snapshot{}, err
	}
	snap.Large = w.s.largeFiles(c, all, w.partial)
	var touched map[*node]bool
	if w.partial {
		touched = map[*node]bool{}
		for _, v := range all {
			touch(c.root, v.rel, touched)
		}
	}
	tree, err := w.writeTrees(c.root, touched)
	if err != nil {
		return agent.Snapshot{}, err
	}
	if tree.isZero() {
		if tree, err = w.s.writeObject("tree", nil); err != nil {
			return agent.Snapshot{}, err
		}
	}
	snap.Tree = tree.String()
	return snap, nil
}

// racy reports whether a file of this stat, read after start, could be
// changed again without its stat telling: its times are within the
// coarsest file system clock (two seconds) of the snapshot.
func (w *walker) racy(st fstat) bool {
	edge := w.start.Add(-2 * time.Second).UnixNano()
	return st.mtime >= edge || st.ctime >= edge
}

// inlineBlobs is how many new contents a snapshot writes itself, as loose
// objects; more (a first snapshot, a checkout) go to one git hash-object,
// which writes only what neither the shadow nor the workspace's own object
// database (packs included) has, so that committed files are not stored
// twice. A few new contents, a step's edits, are seldom committed ones.
const inlineBlobs = 16

// read records the candidates of the visited directories: links, files
// whose content is unchanged, and a few new contents here, more by one git
// hash-object for all.
func (w *walker) read(all []visited, snap *agent.Snapshot) error {
	type job struct {
		n       *node
		rel     string
		c       cand
		mode    uint32
		content []byte // when read already
	}
	var store []job
	max := w.s.k.opts.MaxFileBytes
	for _, v := range all {
		n := v.n
		for _, c := range n.cands {
			p := join(v.rel, c.name)
			abs := w.abs(p)
			m := c.st.fileMode()
			switch {
			case m&fs.ModeSymlink != 0:
				target, err := os.Readlink(abs)
				if err != nil {
					w.drop(n, c.name, nil)
					n.large = append(n.large, agent.LargeFile{Path: p})
					continue
				}
				id, err := w.s.writeObject("blob", []byte(target))
				if err != nil {
					return err
				}
				w.record(n, c.name, &tracked{st: c.st, mode: gitMode(m), id: id, racy: w.racy(c.st)})
			case m.IsDir():
				w.drop(n, c.name, nil) // became a directory since: the next snapshot takes it
			case !m.IsRegular():
				w.drop(n, c.name, &other{kind: kindSpecial, st: c.st})
			case c.st.size > max || !readable(abs):
				w.drop(n, c.name, &other{kind: kindLarge, st: c.st})
				n.large = append(n.large, largeFile(p, c.st))
			default:
				var b []byte
				if c.prev != nil {
					var err error
					if b, err = os.ReadFile(abs); err == nil && objectID("blob", b) == c.prev.id {
						w.record(n, c.name, &tracked{st: c.st, mode: gitMode(m), id: c.prev.id, racy: w.racy(c.st)})
						continue
					}
				}
				store = append(store, job{n, p, c, gitMode(m), b})
			}
		}
		n.cands = nil
	}
	if len(store) == 0 {
		return nil
	}
	if len(store) <= inlineBlobs {
		for _, j := range store {
			b := j.content
			if b == nil {
				var err error
				if b, err = os.ReadFile(w.abs(j.rel)); err != nil {
					w.drop(j.n, j.c.name, nil)
					if _, err := os.Lstat(w.abs(j.rel)); err == nil {
						j.n.large = append(j.n.large, agent.LargeFile{Path: j.rel})
					}
					continue
				}
			}
			id, err := w.s.writeObject("blob", b)
			if err != nil {
				return err
			}
			w.record(j.n, j.c.name, &tracked{st: j.c.st, mode: j.mode, id: id, racy: w.racy(j.c.st)})
		}
		return nil
	}
	paths := make([]string, len(store))
	for i, j := range store {
		paths[i] = j.rel
	}
	ids, err := w.s.hashObjects(w.ctx, paths)
	if err != nil {
		if w.ctx.Err() != nil {
			return err
		}
		if err := diskFull(err); errors.Is(err, ErrDiskFull) {
			// Not a file that cannot be read: a snapshot without these
			// files could not bring them back.
			w.s.removeTempObjects()
			return err
		}
		// One of them changed or went away meanwhile: each alone, to
		// name the one that cannot be read.
		ids = make([]oid, len(store))
		for i, p := range paths {
			one, err := w.s.hashObjects(w.ctx, []string{p})
			if err == nil {
				ids[i] = one[0]
			} else if err := diskFull(err); errors.Is(err, ErrDiskFull) {
				w.s.removeTempObjects()
				return err
			}
		}
	}
	for i, j := range store {
		if ids[i].isZero() {
			w.drop(j.n, j.c.name, nil)
			if _, err := os.Lstat(w.abs(j.rel)); err == nil {
				j.n.large = append(j.n.large, agent.LargeFile{Path: j.rel})
			}
			continue
		}
		w.record(j.n, j.c.name, &tracked{st: j.c.st, mode: j.mode, id: ids[i], racy: w.racy(j.c.st)})
	}
	return nil
}

// record puts a file in the snapshot; its directory's tree is written
// again when that changes it, the cache when anything of it changed.
func (w *walker) record(n *node, name string, t *tracked) {
	prev := n.files[name]
	if prev == nil || prev.id != t.id || prev.mode != t.mode {
		n.dirty = true
	}
	switch {
	case prev == nil || prev.mode != t.mode:
		w.changed.Store(true)
	case *prev != *t:
		w.updated.Add(1)
	}
	n.files[name] = t
}

// drop takes a file out of the snapshot, to be remembered as o (nil: not
// at all).
func (w *walker) drop(n *node, name string, o *other) {
	if n.files[name] != nil {
		delete(n.files, name)
		n.dirty = true
	}
	if o != nil {
		n.others[name] = o
	}
	w.changed.Store(true)
}

// writeTrees writes the trees of the directories beneath n whose entries
// changed, and returns n's. With touched, only those nodes can have
// changed (they, or something beneath them, were visited).
func (w *walker) writeTrees(n *node, touched map[*node]bool) (oid, error) {
	for _, sub := range n.subs {
		if touched != nil && !touched[sub] {
			continue
		}
		before := sub.tree
		t, err := w.writeTrees(sub, touched)
		if err != nil {
			return oid{}, err
		}
		if t != before {
			n.dirty = true
		}
	}
	if !n.dirty {
		return n.tree, nil
	}
	n.dirty = false
	es := make([]treeEntry, 0, len(n.files)+len(n.subs))
	for name, t := range n.files {
		es = append(es, treeEntry{name, t.mode, t.id})
	}
	for name, sub := range n.subs {
		if !sub.tree.isZero() {
			es = append(es, treeEntry{name, 0o40000, sub.tree})
		}
	}
	if len(es) == 0 {
		n.tree = oid{}
		return n.tree, nil
	}
	id, err := w.s.writeObject("tree", treeContent(es))
	if err != nil {
		return oid{}, err
	}
	n.tree = id
	return id, nil
}

// hashObjects stores the files' contents as they are (no attribute's
// filter: a revert writes back the bytes) and returns their names. git
// writes only what its object database, or the workspace's own that the
// shadow borrows, lacks.
func (s *shadow) hashObjects(ctx context.Context, paths []string) ([]oid, error) {
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(cQuote(p))
		in.WriteByte('\n')
	}
	out, err := s.git.run(ctx, []byte(in.String()), "hash-object", "-w", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("git hash-object: %d names for %d files", len(lines), len(paths))
	}
	ids := make([]oid, len(lines))
	for i, l := range lines {
		if ids[i], err = parseOID(l); err != nil {
			return nil, fmt.Errorf("git hash-object: %w", err)
		}
	}
	return ids, nil
}

// checkIgnore returns which of the paths git ignores (by the workspace's
// .gitignore files, the shadow's copy of its info/exclude and git's global
// exclude file), leading directories included; dir says which paths are
// directories (as listed: a symbolic link is not). It answers in the
// process (ignore.go) unless the shadow's configuration could make git's
// answer differ.
func (s *shadow) checkIgnore(ctx context.Context, paths []string, dir []bool) (map[string]bool, error) {
	if config, err := os.ReadFile(filepath.Join(s.dir, "config")); err != nil || configNeedsGit(config) {
		return s.gitCheckIgnore(ctx, paths)
	}
	m := newIgnoreMatcher(s.root, filepath.Join(s.dir, "info", "exclude"), globalExcludes())
	ignored := map[string]bool{}
	for i, p := range paths {
		if m.ignored(p, dir[i]) {
			ignored[p] = true
		}
	}
	return ignored, nil
}

// gitCheckIgnore is checkIgnore asked of git check-ignore, which reads the
// same files and the shadow's configuration.
func (s *shadow) gitCheckIgnore(ctx context.Context, paths []string) (map[string]bool, error) {
	in := make([]string, len(paths))
	for i, p := range paths {
		in[i] = p
		if strings.HasPrefix(p, ":") {
			in[i] = "./" + p
		}
	}
	out, err := s.git.runExit(ctx, nulList(in), 1, "check-ignore", "--stdin", "-z", "-v", "-n", "--no-index")
	if err != nil {
		return nil, err
	}
	f := zsplit(out)
	if len(f) != 4*len(paths) {
		return nil, fmt.Errorf("git check-ignore: %d fields for %d paths", len(f), len(paths))
	}
	ignored := map[string]bool{}
	for i, p := range paths {
		source, pattern := f[4*i], f[4*i+2]
		if source != "" && !strings.HasPrefix(pattern, "!") {
			ignored[p] = true
		}
	}
	return ignored, nil
}
