package checkpoint

import (
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent"
)

// A snapshot's cost is the walk: every directory's stat and every
// recorded file's, whatever changed. Where the system has a watcher
// (watch_linux.go), a snapshot visits only the directories the watcher
// saw a change in since the last one, and walks whole only the
// directories new since: its cost follows the change, not the tree. The
// watcher is set up by the walk itself, on each directory it goes into
// (so never in an ignored tree), before the directory's listing, once per
// workspace in this process. The walk stays what a snapshot does when the
// watcher cannot be trusted: the first snapshot of the process, one after
// another process wrote the stat cache, after the exclude files changed,
// after the watcher's queue overflowed (its watches set up again by that
// walk), and always once the watcher failed (the watch limit: said in
// the log and in Keeper.Status).

// changes are the directories a watcher saw a change in (slash-separated,
// relative to the workspace), and deep, the directories that came to one
// of them (made, or moved in): walked whole.
type changes struct {
	dirs map[string]bool
	deep map[string]bool
}

func newChanges() *changes { return &changes{dirs: map[string]bool{}, deep: map[string]bool{}} }

func (c *changes) dirty(rel string) { c.dirs[rel] = true }

func parentRel(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// lookup is the node of the directory rel, or of its nearest ancestor
// that has one (when rel is new, ignored, or a repository of its own),
// with that ancestor's path.
func lookup(root *node, rel string) (*node, string) {
	n, at := root, ""
	if rel == "" {
		return n, at
	}
	for name := range strings.SplitSeq(rel, "/") {
		sub := n.subs[name]
		if sub == nil {
			break
		}
		n, at = sub, join(at, name)
	}
	return n, at
}

// touch marks the nodes on the way from root to rel.
func touch(root *node, rel string, set map[*node]bool) {
	if rel == "" {
		return
	}
	n := root
	for name := range strings.SplitSeq(rel, "/") {
		if n = n.subs[name]; n == nil {
			return
		}
		set[n] = true
	}
}

// watchNested watches the top of a repository of its own inside the
// workspace, not walked: when it stops being one (its .git goes), its
// parent is visited again.
func (w *walker) watchNested(rel string) {
	if w.watch != nil {
		w.watch.add(rel)
	}
}

// largeFiles are the files the snapshot names but does not hold: those of
// the directories visited now, and, after a partial walk, those the
// directories not visited had when last visited (nothing changed there).
func (s *shadow) largeFiles(c *statCache, all []visited, partial bool) []agent.LargeFile {
	if !partial || s.large == nil {
		s.large = map[string][]agent.LargeFile{}
	}
	for _, v := range all {
		if len(v.n.large) > 0 {
			s.large[v.rel] = v.n.large
		} else {
			delete(s.large, v.rel)
		}
		v.n.large = nil
	}
	if partial {
		for rel := range s.large {
			if _, at := lookup(c.root, rel); at != rel {
				delete(s.large, rel) // its directory went
			}
		}
	}
	var out []agent.LargeFile
	for _, l := range s.large {
		out = append(out, l...)
	}
	slices.SortFunc(out, func(a, b agent.LargeFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// changesSince starts the watcher on the first snapshot and reads what it
// saw. It returns the changes when a partial walk of c may be trusted
// (the watcher has watched c's tree since c was last brought up to date,
// and lost nothing), nil when the snapshot must walk the whole tree.
func (s *shadow) changesSince(c *statCache, full bool) *changes {
	if s.watch == nil {
		if s.watchErr != nil || s.k.opts.NoWatch || watcherKind == "" {
			return nil
		}
		w, err := newWatcher(s.root)
		if err != nil {
			s.stopWatch(err)
			return nil
		}
		s.watch = w
	}
	ch := newChanges()
	if !s.watch.drain(ch) {
		if err := s.watch.failure(); err != nil {
			s.stopWatch(err)
			return nil
		}
		// The queue overflowed: the names of the watches may be wrong
		// now. They are set up again by the walk that follows.
		s.overflows++
		if err := s.watch.reset(); err != nil {
			s.stopWatch(err)
		}
		s.watchBase = nil
		return nil
	}
	if full || c != s.watchBase {
		return nil
	}
	return ch
}

// watched is told how the snapshot of c ended: when it brought c up to
// date with the watcher working, the next may be a partial walk.
func (s *shadow) watched(c *statCache, ok bool) {
	s.watchBase = nil
	if s.watch == nil {
		return
	}
	if err := s.watch.failure(); err != nil {
		s.stopWatch(err)
		return
	}
	if ok {
		s.watchBase = c
	}
}

// stopWatch gives up the watcher for good (in this process): every
// snapshot walks.
func (s *shadow) stopWatch(err error) {
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	s.watchBase = nil
	if s.watchErr == nil {
		s.watchErr = err
		s.k.log.Warn("checkpoints: no file watcher for this workspace; each snapshot walks the whole tree", "workspace", s.root, "err", err)
	}
}
