package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool"
)

// ErrNothing is returned (wrapped) when there is no turn to revert or redo.
var ErrNothing = errors.New("nothing to do")

// RevertOptions say what Revert and Redo do.
type RevertOptions struct {
	Session agent.ID
	// Turn names the turn: its user message's ID, or the front's name of
	// it (darman lsp's turnId). "" means the last turn that changed files
	// and is not reverted (Revert), or the last revert (Redo).
	Turn string
	// Workspace reads and writes the files: the editor's, so that what the
	// user has not saved counts and a restored buffer keeps its undo. Nil
	// means the disk.
	Workspace tool.Workspace
	// Preview reports what would be done, and does nothing.
	Preview bool
	// Force restores files the user changed since the turn too.
	Force bool
}

// Report is what a revert or redo did, or would do (Applied is false).
type Report struct {
	// Action is "revert" or "redo".
	Action  string   `json:"action"`
	Session agent.ID `json:"sessionId"`
	// Turn is the turn reverted (or redone); Turns every turn undone or
	// redone with it, in order (a revert takes back the turns after it
	// too).
	Turn     agent.ID   `json:"turnId"`
	TurnName string     `json:"turn,omitempty"`
	Turns    []agent.ID `json:"turns"`
	Applied  bool       `json:"applied"`
	// Files are the files written or removed (to be, in a preview).
	Files []FileChange `json:"files"`
	// Conflicts are files the user changed since: left alone unless
	// forced, each with the diff from what is there now to what would be
	// restored.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// NotRestorable are files the turns changed that the snapshots could
	// not keep (over checkpoints.maxFileBytes, or unreadable).
	NotRestorable []agent.LargeFile `json:"notRestorable,omitempty"`
	// Diff is the combined unified diff of Files, in a preview.
	Diff string `json:"diff"`
}

// FileChange is one file a revert or redo restores.
type FileChange struct {
	Path string `json:"path"` // relative to the workspace, slash-separated
	// Action is "restore" (its content goes back), "create" (it comes
	// back) or "delete" (it goes away).
	Action string `json:"action"`
}

// Conflict is a file left alone.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Diff   string `json:"diff,omitempty"`
}

// Revert restores the files a turn changed — and those the turns after it
// changed — to what they were before it; see the package doc.
func (k *Keeper) Revert(ctx context.Context, o RevertOptions) (*Report, error) {
	cps, err := k.opts.Store.Checkpoints(ctx, o.Session)
	if err != nil {
		return nil, err
	}
	if o.Force {
		if i := leftAlone(cps, o.Turn); i >= 0 {
			return k.finish(ctx, cps[i], o)
		}
	}
	i, err := pickRevert(cps, o)
	if err != nil {
		return nil, err
	}
	t := cps[i]
	var covered []agent.Checkpoint
	for _, c := range cps[i:] {
		if c.Reverted.IsZero() && c.Dropped.IsZero() {
			covered = append(covered, c)
		}
	}
	sh, now, unlock, err := k.lockedSnapshot(ctx, t.Workspace)
	if err != nil {
		return nil, err
	}
	defer unlock()
	for j := range covered {
		if covered[j].After.Tree == "" { // the turn never ended: its process died
			covered[j].After = now
		}
	}
	last := covered[len(covered)-1].After
	entries, err := sh.diffTree(ctx, last.Tree, t.Before.Tree)
	if err != nil {
		return nil, err
	}
	touched := map[string]bool{}
	large := map[string]agent.LargeFile{}
	for _, c := range covered {
		if len(covered) == 1 { // what the turn changed is the diff itself
			for _, e := range entries {
				touched[e.path] = true
			}
		} else {
			names, err := sh.changed(ctx, c.Before.Tree, c.After.Tree)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				touched[n] = true
			}
		}
		for _, f := range changedLarge(c.Before.Large, c.After.Large) {
			touched[f.Path], large[f.Path] = true, f
		}
	}
	for _, f := range slices.Concat(t.Before.Large, last.Large) {
		if touched[f.Path] {
			large[f.Path] = f
		}
	}
	entries = slices.DeleteFunc(entries, func(e entry) bool { _, big := large[e.path]; return !touched[e.path] || big })
	rep := &Report{Action: "revert", Session: o.Session, Turn: t.MessageID, TurnName: t.Turn}
	for _, c := range covered {
		rep.Turns = append(rep.Turns, c.MessageID)
	}
	for _, f := range large {
		rep.NotRestorable = append(rep.NotRestorable, f)
	}
	slices.SortFunc(rep.NotRestorable, func(a, b agent.LargeFile) int { return strings.Compare(a.Path, b.Path) })
	applied, err := k.apply(ctx, sh, o, entries, last.Tree, t.Before.Tree, rep)
	if err != nil || o.Preview {
		return rep, err
	}
	at := time.Now().UTC()
	for _, c := range covered {
		c.Reverted = at
		if c.MessageID == t.MessageID {
			c.Undo = &agent.Undo{At: at, Redo: now, Turns: rep.Turns, Files: applied, Left: conflictPaths(rep)}
		}
		if err := k.opts.Store.PutCheckpoint(ctx, c); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// lockedSnapshot locks a workspace's shadow repository and snapshots the
// workspace as it is before a revert; unlock releases the lock.
func (k *Keeper) lockedSnapshot(ctx context.Context, workspace string) (sh *shadow, now agent.Snapshot, unlock func(), err error) {
	sh = k.shadowOf(workspace)
	unlock, err = sh.lock(ctx)
	if err != nil {
		return nil, agent.Snapshot{}, nil, diskFull(err)
	}
	now, err = sh.snapshot(ctx)
	if err != nil {
		unlock()
		return nil, agent.Snapshot{}, nil, diskFull(fmt.Errorf("snapshot before reverting: %w", err))
	}
	return sh, now, unlock, nil
}

// leftAlone finds the last revert that left files alone (of turn, when
// not ""); -1 when there is none.
func leftAlone(cps []agent.Checkpoint, turn string) int {
	i := -1
	for j, c := range cps {
		if c.Undo == nil || len(c.Undo.Left) == 0 || turn != "" && !names(c, turn) {
			continue
		}
		if i < 0 || c.Undo.At.After(cps[i].Undo.At) {
			i = j
		}
	}
	return i
}

// finish completes a revert that left files alone: forced, they too go
// back to what they were before its turn, and a redo puts back what they
// were just before the revert, as it does for the others.
func (k *Keeper) finish(ctx context.Context, t agent.Checkpoint, o RevertOptions) (*Report, error) {
	u := t.Undo
	sh, now, unlock, err := k.lockedSnapshot(ctx, t.Workspace)
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := sh.diffTree(ctx, now.Tree, t.Before.Tree)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e entry) bool { return !slices.Contains(u.Left, e.path) })
	rep := &Report{Action: "revert", Session: o.Session, Turn: t.MessageID, TurnName: t.Turn, Turns: u.Turns}
	applied, err := k.apply(ctx, sh, o, entries, now.Tree, t.Before.Tree, rep)
	if err != nil || o.Preview {
		return rep, err
	}
	u.Files = slices.Compact(slices.Sorted(slices.Values(slices.Concat(u.Files, applied))))
	u.Left = conflictPaths(rep)
	return rep, k.opts.Store.PutCheckpoint(ctx, t)
}

// conflictPaths are the paths of the files a revert left alone.
func conflictPaths(rep *Report) []string {
	var paths []string
	for _, c := range rep.Conflicts {
		paths = append(paths, c.Path)
	}
	return paths
}

// Redo puts back what a revert took away: the files it restored go back
// to what they were just before it, unless the user changed them since.
func (k *Keeper) Redo(ctx context.Context, o RevertOptions) (*Report, error) {
	cps, err := k.opts.Store.Checkpoints(ctx, o.Session)
	if err != nil {
		return nil, err
	}
	i := -1
	for j, c := range cps {
		if c.Undo != nil && (o.Turn == "" && (i < 0 || c.Undo.At.After(cps[i].Undo.At)) || o.Turn != "" && names(c, o.Turn)) {
			i = j
		}
	}
	if i < 0 {
		if o.Turn != "" {
			return nil, fmt.Errorf("turn %s of session %s was not reverted, so there is nothing to redo: %w", o.Turn, o.Session, ErrNothing)
		}
		return nil, fmt.Errorf("session %s has no reverted turn to redo: %w", o.Session, ErrNothing)
	}
	t := cps[i]
	if !t.Dropped.IsZero() {
		return nil, fmt.Errorf("the snapshots of turn %s were dropped on %s to keep the checkpoint store under checkpoints.maxBytes; it cannot be redone", t.MessageID, t.Dropped.Format(time.DateTime))
	}
	u := t.Undo
	sh := k.shadowOf(t.Workspace)
	unlock, err := sh.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := sh.diffTree(ctx, t.Before.Tree, u.Redo.Tree)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e entry) bool { return !slices.Contains(u.Files, e.path) })
	rep := &Report{Action: "redo", Session: o.Session, Turn: t.MessageID, TurnName: t.Turn, Turns: u.Turns}
	if _, err := k.apply(ctx, sh, o, entries, t.Before.Tree, u.Redo.Tree, rep); err != nil || o.Preview {
		return rep, err
	}
	for _, c := range cps {
		if !slices.Contains(u.Turns, c.MessageID) {
			continue
		}
		c.Reverted = time.Time{}
		if c.MessageID == t.MessageID {
			c.Undo = nil
		}
		if err := k.opts.Store.PutCheckpoint(ctx, c); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// names reports whether turn names the checkpoint's turn.
func names(c agent.Checkpoint, turn string) bool {
	return string(c.MessageID) == turn || c.Turn != "" && c.Turn == turn
}

// pickRevert finds the turn to revert among cps.
func pickRevert(cps []agent.Checkpoint, o RevertOptions) (int, error) {
	if o.Turn != "" {
		i := slices.IndexFunc(cps, func(c agent.Checkpoint) bool { return names(c, o.Turn) })
		switch {
		case i < 0:
			return 0, fmt.Errorf("session %s has no checkpoint of turn %s: the turn changed no files, or ran with checkpoints off; the turns with checkpoints are %s: %w",
				o.Session, o.Turn, turnList(cps), ErrNothing)
		case !cps[i].Dropped.IsZero():
			return 0, fmt.Errorf("the snapshots of turn %s were dropped on %s to keep the checkpoint store under checkpoints.maxBytes; it cannot be reverted", o.Turn, cps[i].Dropped.Format(time.DateTime))
		case !cps[i].Reverted.IsZero():
			return 0, fmt.Errorf("turn %s is reverted already; redo it (darman.turn.redo, darman sessions redo) or revert an earlier turn", o.Turn)
		}
		return i, nil
	}
	for i := len(cps) - 1; i >= 0; i-- {
		c := cps[i]
		if c.Reverted.IsZero() && c.Dropped.IsZero() && (c.After.Tree == "" || c.After.Tree != c.Before.Tree || len(changedLarge(c.Before.Large, c.After.Large)) > 0) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("session %s has no turn whose changes to files can be reverted: %w", o.Session, ErrNothing)
}

func turnList(cps []agent.Checkpoint) string {
	if len(cps) == 0 {
		return "none"
	}
	var s []string
	for _, c := range cps {
		s = append(s, string(c.MessageID))
	}
	return strings.Join(s, ", ")
}

// changedLarge are the large files that came, went or changed (by size or
// time) between two snapshots.
func changedLarge(before, after []agent.LargeFile) []agent.LargeFile {
	var out []agent.LargeFile
	for _, a := range after {
		if !slices.ContainsFunc(before, func(b agent.LargeFile) bool { return b == a }) {
			out = append(out, a)
		}
	}
	for _, b := range before {
		if !slices.ContainsFunc(after, func(a agent.LargeFile) bool { return a.Path == b.Path }) {
			out = append(out, b)
		}
	}
	return out
}

// entry is one file that differs between the tree the workspace is
// expected to match now (from) and the tree to restore (to). A zero sha
// means the file is absent there.
type entry struct {
	path              string
	fromMode, fromSHA string
	toMode, toSHA     string
}

const zeroSHA = "0000000000000000000000000000000000000000"

// changed lists the paths that differ between two trees.
func (s *shadow) changed(ctx context.Context, a, b string) ([]string, error) {
	if a == b || a == "" || b == "" {
		return nil, nil
	}
	out, err := s.git.run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
	return zsplit(out), err
}

// diffTree lists the files that differ between two trees.
func (s *shadow) diffTree(ctx context.Context, from, to string) ([]entry, error) {
	if from == to {
		return nil, nil
	}
	out, err := s.git.run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	f := zsplit(out)
	var es []entry
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("git diff-tree printed %q", f[i])
		}
		es = append(es, entry{path: f[i+1], fromMode: meta[0], toMode: meta[1], fromSHA: meta[2], toSHA: meta[3]})
	}
	return es, nil
}

// apply restores the entries (all, with Force; else those whose file is
// still what from holds), filling rep, and returns the paths it changed.
// With Preview it only fills rep.
func (k *Keeper) apply(ctx context.Context, sh *shadow, o RevertOptions, entries []entry, from, to string, rep *Report) ([]string, error) {
	ws := o.Workspace
	if ws == nil {
		ws = tool.NewDisk(sh.root)
	}
	root, err := os.OpenRoot(sh.root)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", sh.root, err)
	}
	defer root.Close()
	var shas []string
	for _, e := range entries {
		shas = append(shas, e.toSHA)
	}
	blobs, err := sh.blobs(ctx, shas)
	if err != nil {
		return nil, err
	}
	var ok []entry
	for _, e := range entries {
		abs := filepath.Join(sh.root, filepath.FromSlash(e.path))
		cur, exists, err := current(ctx, ws, root, e.path, abs)
		if err != nil {
			rep.Conflicts = append(rep.Conflicts, Conflict{Path: e.path, Reason: err.Error()})
			continue
		}
		if (exists && blobSHA(cur) == e.fromSHA) || (!exists && e.fromSHA == zeroSHA) || o.Force {
			ok = append(ok, e)
			continue
		}
		d, _ := sh.fileDiff(ctx, e.path, cur, exists, blobs[e.toSHA], e.toSHA != zeroSHA)
		rep.Conflicts = append(rep.Conflicts, Conflict{Path: e.path, Reason: "changed since the turn; left alone (force restores it)", Diff: d})
	}
	var paths []string
	for _, e := range ok {
		paths = append(paths, e.path)
		action := "restore"
		switch {
		case e.toSHA == zeroSHA:
			action = "delete"
		case e.fromSHA == zeroSHA:
			action = "create"
		}
		rep.Files = append(rep.Files, FileChange{Path: e.path, Action: action})
	}
	if len(paths) > 0 && o.Preview {
		args := append([]string{"diff-tree", "-p", "-r", "--no-renames", "--no-color", from, to, "--"}, paths...)
		d, err := sh.git.run(ctx, nil, args...)
		if err != nil {
			return nil, err
		}
		rep.Diff = string(d)
	}
	if o.Preview {
		return nil, nil
	}
	var done []string
	var deleted []string
	for _, e := range ok {
		abs := filepath.Join(sh.root, filepath.FromSlash(e.path))
		if err := restore(ctx, ws, root, e, abs, blobs[e.toSHA]); err != nil {
			rep.Conflicts = append(rep.Conflicts, Conflict{Path: e.path, Reason: "not restored: " + err.Error()})
			rep.Files = slices.DeleteFunc(rep.Files, func(f FileChange) bool { return f.Path == e.path })
			continue
		}
		done = append(done, e.path)
		if e.toSHA == zeroSHA {
			deleted = append(deleted, e.path)
		}
	}
	if len(deleted) > 0 {
		sh.removeEmptyDirs(ctx, root, to, deleted)
	}
	rep.Applied = true
	return done, nil
}

// current is what the user has of a file now: the editor's buffer when it
// is open there, else the disk's; a link's target for a symbolic link.
func current(ctx context.Context, ws tool.Workspace, root *os.Root, rel, abs string) ([]byte, bool, error) {
	if fi, err := root.Lstat(filepath.FromSlash(rel)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := root.Readlink(filepath.FromSlash(rel))
		return []byte(target), err == nil, err
	}
	b, err := ws.ReadFile(ctx, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// restore puts one file back: through the workspace (the editor) for
// text, on the disk for links, binary content and modes.
func restore(ctx context.Context, ws tool.Workspace, root *os.Root, e entry, abs string, content []byte) error {
	rel := filepath.FromSlash(e.path)
	fi, lerr := root.Lstat(rel)
	isLink := lerr == nil && fi.Mode()&fs.ModeSymlink != 0
	switch {
	case e.toSHA == zeroSHA:
		if r, ok := ws.(tool.Remover); ok && !isLink {
			return r.Remove(ctx, abs)
		}
		return root.Remove(rel)
	case e.toMode == "120000":
		if lerr == nil {
			if err := root.Remove(rel); err != nil {
				return err
			}
		}
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return err
		}
		return root.Symlink(string(content), rel)
	case e.toMode == "160000":
		return errors.New("a repository of its own inside the workspace is not restored")
	}
	if isLink {
		if err := root.Remove(rel); err != nil {
			return err
		}
	}
	var err error
	if utf8.Valid(content) {
		err = ws.WriteFile(ctx, abs, content)
	} else {
		err = tool.NewDisk(root.Name()).WriteFile(ctx, abs, content)
	}
	if err != nil {
		return err
	}
	fi, err = root.Stat(rel)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	want := perm &^ 0o111
	if e.toMode == "100755" {
		want = perm | (perm&0o444)>>2
	}
	if want != perm {
		return root.Chmod(rel, want)
	}
	return nil
}

// removeEmptyDirs removes the directories that deleting files emptied and
// that the restored tree does not have.
func (s *shadow) removeEmptyDirs(ctx context.Context, root *os.Root, tree string, deleted []string) {
	out, err := s.git.run(ctx, nil, "ls-tree", "-r", "-d", "-z", "--name-only", tree)
	if err != nil {
		return
	}
	inTree := map[string]bool{}
	for _, d := range zsplit(out) {
		inTree[d] = true
	}
	for _, p := range deleted {
		for dir := path.Dir(p); dir != "." && !inTree[dir]; dir = path.Dir(dir) {
			if root.Remove(filepath.FromSlash(dir)) != nil { // not empty
				break
			}
		}
	}
}

// blobSHA is git's name of a blob with this content.
func blobSHA(b []byte) string {
	return objectID("blob", b).String()
}

// blobs reads blobs by name (one git process for all).
func (s *shadow) blobs(ctx context.Context, shas []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var in bytes.Buffer
	for _, sha := range shas {
		if sha != zeroSHA && sha != "" {
			in.WriteString(sha + "\n")
		}
	}
	if in.Len() == 0 {
		return out, nil
	}
	b, err := s.git.run(ctx, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		head, err := r.ReadString('\n')
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		f := strings.Fields(head)
		if len(f) == 2 && f[1] == "missing" {
			return nil, fmt.Errorf("the checkpoint store %s lost the object %s (was the workspace's own repository garbage-collected?)", s.dir, f[0])
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file printed %q", head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file printed %q", head)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, err
		}
		out[f[0]] = data[:n]
	}
}

// fileDiff is the unified diff from what a file holds now to what would
// be restored, by git diff --no-index on copies in a scratch directory.
func (s *shadow) fileDiff(ctx context.Context, rel string, cur []byte, curExists bool, want []byte, wantExists bool) (string, error) {
	tmp, err := os.MkdirTemp("", "darman-revert-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	write := func(side string, b []byte, ok bool) (string, error) {
		if !ok {
			return "/dev/null", nil
		}
		p := filepath.Join(side, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(p)), 0o700); err != nil {
			return "", err
		}
		return p, os.WriteFile(filepath.Join(tmp, p), b, 0o600)
	}
	a, err := write("now", cur, curExists)
	if err != nil {
		return "", err
	}
	b, err := write("restored", want, wantExists)
	if err != nil {
		return "", err
	}
	g := *s.git
	g.work = tmp
	out, err := g.run(ctx, nil, "diff", "--no-index", "--no-color", "--no-prefix", "--", a, b)
	if len(out) > 0 {
		return string(out), nil // git diff --no-index exits 1 when the files differ
	}
	return "", err
}
