package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
)

// Store keeps the checkpoints with their sessions. agent/store implements
// it; its methods are safe for concurrent use.
type Store interface {
	PutCheckpoint(ctx context.Context, c agent.Checkpoint) error
	// Checkpoints returns a session's checkpoints in turn order; every
	// session's when session is "".
	Checkpoints(ctx context.Context, session agent.ID) ([]agent.Checkpoint, error)
}

// Options configure a Keeper. Dir and Store are required.
type Options struct {
	// Dir holds the shadow repositories, one per workspace
	// (<data dir>/checkpoints).
	Dir   string
	Store Store
	// Git is the git binary; "" finds git on PATH.
	Git string
	// MaxFileBytes is the largest file a snapshot keeps; larger ones are
	// named as not restorable. Zero means 2 MiB.
	MaxFileBytes int64
	// MaxBytes bounds the shadow repository of a workspace: past it, the
	// oldest turns' snapshots are dropped (and said so). Zero means 2 GiB.
	MaxBytes int64
	// Logger receives what was dropped and what failed; nil discards it.
	Logger *slog.Logger
	// NoWatch keeps every snapshot a walk of the whole tree, with no file
	// watcher (see Status).
	NoWatch bool
}

// Keeper takes the snapshots of the workspaces' turns and reverts them.
// It is safe for concurrent use; a workspace's snapshots, reverts and
// collections run one at a time, across darman processes too.
type Keeper struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	shadows map[string]*shadow
	// turns are the checkpoints of the turns running in this process, by
	// their user message.
	turns map[agent.ID]*agent.Checkpoint
}

// New returns a keeper; it fails when git cannot be found.
func New(opts Options) (*Keeper, error) {
	if opts.Dir == "" || opts.Store == nil {
		return nil, errors.New("checkpoint.New: Dir and Store are required")
	}
	if opts.Git == "" {
		bin, err := exec.LookPath("git")
		if err != nil {
			return nil, fmt.Errorf("checkpoints need git, which is not on PATH (%v); install git, or turn checkpoints off with \"checkpoints\": {\"enabled\": false}", err)
		}
		opts.Git = bin
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = 2 << 20
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 2 << 30
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{opts: opts, log: opts.Logger.With("component", "checkpoint"), shadows: map[string]*shadow{}, turns: map[agent.ID]*agent.Checkpoint{}}, nil
}

func (k *Keeper) shadowOf(root string) *shadow {
	root = filepath.Clean(root)
	k.mu.Lock()
	defer k.mu.Unlock()
	sh := k.shadows[root]
	if sh == nil {
		dir := shadowDir(k.opts.Dir, root)
		sh = &shadow{k: k, root: root, dir: dir, git: newGit(k.opts.Git, dir, root)}
		k.shadows[root] = sh
	}
	return sh
}

// Step snapshots the workspace before a step of the turn ref that may
// change files. The turn's first snapshot is its Before, stored at once,
// so a turn whose process dies can still be reverted. A step of a turn
// that ended already (an edit the user applies after it,
// session.Service.Apply) continues the turn's stored checkpoint: its
// Before stays, and End takes a new After (the old one is kept until
// then), so the turn's revert takes the step back with the rest. A turn
// that was reverted, or whose snapshots were dropped, takes no more
// steps: Step fails and says why.
func (k *Keeper) Step(ctx context.Context, ref agent.TurnRef) error {
	k.mu.Lock()
	_, running := k.turns[ref.MessageID]
	k.mu.Unlock()
	var ended *agent.Checkpoint
	if !running {
		var err error
		if ended, err = k.ended(ctx, ref); err != nil {
			return err
		}
	}
	sh := k.shadowOf(ref.Workspace)
	unlock, err := sh.lock(ctx)
	if err != nil {
		return diskFull(err)
	}
	snap, err := sh.snapshot(ctx)
	unlock()
	if err != nil {
		return diskFull(fmt.Errorf("snapshot of %s: %w", ref.Workspace, err))
	}
	k.mu.Lock()
	cp := k.turns[ref.MessageID]
	if cp == nil && ended != nil {
		// Its After stays until End replaces it: should the process die
		// before (an applied edit's question still open), a revert takes
		// back what the turn changed, not everything changed since.
		cp = ended
		k.turns[ref.MessageID] = cp
	}
	if cp == nil {
		cp = &agent.Checkpoint{SessionID: ref.SessionID, MessageID: ref.MessageID, Turn: ref.Turn, Workspace: sh.root,
			Before: snap, Created: time.Now().UTC()}
		k.turns[ref.MessageID] = cp
	}
	cp.Steps++
	c := *cp
	k.mu.Unlock()
	return k.opts.Store.PutCheckpoint(context.WithoutCancel(ctx), c)
}

// ended returns the stored checkpoint of the turn ref, which is not
// running in this process: nil when it has none (a turn's first step).
func (k *Keeper) ended(ctx context.Context, ref agent.TurnRef) (*agent.Checkpoint, error) {
	cps, err := k.opts.Store.Checkpoints(ctx, ref.SessionID)
	if err != nil {
		return nil, fmt.Errorf("the checkpoints of session %s: %w", ref.SessionID, err)
	}
	for _, c := range cps {
		if c.MessageID != ref.MessageID {
			continue
		}
		switch {
		case !c.Dropped.IsZero():
			return nil, fmt.Errorf("the snapshots of turn %s were dropped on %s to keep the checkpoint store under checkpoints.maxBytes, so a change made in it could not be reverted", ref.MessageID, c.Dropped.Format(time.DateTime))
		case !c.Reverted.IsZero():
			return nil, fmt.Errorf("turn %s is reverted, so a change made in it could not be reverted with it: redo the turn (darman.turn.redo, darman sessions redo) or start a new one first", ref.MessageID)
		case filepath.Clean(c.Workspace) != filepath.Clean(ref.Workspace):
			// End snapshots the checkpoint's workspace: the step's change
			// would not be in it, and what changed there since would.
			return nil, fmt.Errorf("turn %s ran in the workspace %s, not %s, so a change made here could not be reverted with it: start a turn in this workspace first", ref.MessageID, c.Workspace, ref.Workspace)
		}
		return &c, nil
	}
	return nil, nil
}

// End snapshots the workspace once the turn ref has ended, when Step was
// called in it, and keeps the store under its size limit. A turn reverted
// or dropped meanwhile (by another darman) keeps that record, and End
// says so.
func (k *Keeper) End(ctx context.Context, ref agent.TurnRef) error {
	k.mu.Lock()
	cp := k.turns[ref.MessageID]
	delete(k.turns, ref.MessageID)
	k.mu.Unlock()
	if cp == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	sh := k.shadowOf(cp.Workspace)
	unlock, err := sh.lock(ctx)
	if err != nil {
		return diskFull(err)
	}
	defer unlock()
	// Another darman may have reverted the turn (or dropped its snapshots)
	// since Step read it: its record stays, or the revert could not be
	// redone.
	cps, err := k.opts.Store.Checkpoints(ctx, cp.SessionID)
	if err != nil {
		return err
	}
	for _, c := range cps {
		if c.MessageID == cp.MessageID && (c.Reverted.After(cp.Reverted) || c.Dropped.After(cp.Dropped)) {
			return fmt.Errorf("turn %s was reverted, or its snapshots dropped, while a step of it ran: the step's change is not part of the turn's checkpoint", cp.MessageID)
		}
	}
	snap, err := sh.snapshot(ctx)
	if err != nil {
		return diskFull(fmt.Errorf("snapshot of %s: %w", cp.Workspace, err))
	}
	cp.After, cp.Ended = snap, time.Now().UTC()
	if err := k.opts.Store.PutCheckpoint(ctx, *cp); err != nil {
		return err
	}
	_, err = k.bound(ctx, sh, cp.MessageID)
	return err
}

// Collect gives back the space of the snapshots no stored checkpoint of
// the workspace needs any more (a session was removed): call it after
// removing the session.
func (k *Keeper) Collect(ctx context.Context, workspace string) error {
	sh := k.shadowOf(workspace)
	if !sh.exists() {
		return nil
	}
	unlock, err := sh.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return k.gc(ctx, sh)
}

// Prune is the maintenance of one workspace's shadow repository that
// `darman sessions gc` asks for: it gives back what no stored checkpoint
// needs (as Collect), then drops the oldest turns' snapshots while the
// repository is over MaxBytes (as the end of a turn does). It returns the
// checkpoints dropped and the repository's size before and after, in
// bytes. A workspace without a shadow repository is left alone.
func (k *Keeper) Prune(ctx context.Context, workspace string) (dropped []agent.Checkpoint, before, after int64, err error) {
	sh := k.shadowOf(workspace)
	if !sh.exists() {
		return nil, 0, 0, nil
	}
	unlock, err := sh.lock(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	defer unlock()
	if before, err = sh.size(ctx); err != nil {
		return nil, 0, 0, err
	}
	if err := k.gc(ctx, sh); err != nil {
		return nil, before, 0, err
	}
	if dropped, err = k.bound(ctx, sh, ""); err != nil {
		return dropped, before, 0, err
	}
	after, err = sh.size(ctx)
	return dropped, before, after, err
}

// live returns the checkpoints of the shadow's workspace whose snapshots
// are kept.
func (k *Keeper) live(ctx context.Context, sh *shadow) ([]agent.Checkpoint, error) {
	all, err := k.opts.Store.Checkpoints(ctx, "")
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c agent.Checkpoint) bool {
		return filepath.Clean(c.Workspace) != sh.root || !c.Dropped.IsZero()
	}), nil
}

// gc keeps the trees of the live checkpoints (as refs, which git's gc
// keeps with everything they reach) and lets
// git pack and prune the rest. The caller holds the lock.
func (k *Keeper) gc(ctx context.Context, sh *shadow) error {
	if sh.cache != nil && sh.behind > 0 {
		// The cache on disk first, so that its tree is the newest and
		// the older one can go.
		tree := emptyTree
		if !sh.cache.root.tree.isZero() {
			tree = sh.cache.root.tree.String()
		}
		if err := sh.saveCache(sh.cache, tree); err != nil {
			return err
		}
	}
	live, err := k.live(ctx, sh)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, c := range live {
		for _, t := range []string{c.Before.Tree, c.After.Tree} {
			keep[t] = true
		}
		if c.Undo != nil {
			keep[c.Undo.Redo.Tree] = true
		}
	}
	if t := sh.cachedTree(); t != "" {
		keep[t] = true
	}
	if sh.cache != nil && !sh.cache.root.tree.isZero() {
		keep[sh.cache.root.tree.String()] = true // newer than darman-tree when behind
	}
	delete(keep, "")
	out, err := sh.git.run(ctx, nil, "for-each-ref", "--format=%(refname)", "refs/darman/")
	if err != nil {
		return err
	}
	var cmds strings.Builder
	for _, ref := range strings.Fields(string(out)) {
		if !keep[strings.TrimPrefix(ref, "refs/darman/")] {
			fmt.Fprintf(&cmds, "delete %s\n", ref)
		}
	}
	for t := range keep {
		fmt.Fprintf(&cmds, "update refs/darman/%s %s\n", t, t)
	}
	if cmds.Len() > 0 {
		if _, err := sh.git.run(ctx, []byte(cmds.String()), "update-ref", "--stdin"); err != nil {
			return err
		}
	}
	if _, err := sh.git.run(ctx, nil, "gc", "--prune=now", "--quiet"); err != nil {
		return err
	}
	return sh.markGC()
}

// size is the shadow repository's object database in bytes.
func (sh *shadow) size(ctx context.Context) (int64, error) {
	out, err := sh.git.run(ctx, nil, "count-objects", "-v")
	if err != nil {
		return 0, err
	}
	var kib int64
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "size" || k == "size-pack" || k == "size-garbage" {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			kib += n
		}
	}
	return kib << 10, nil
}

// bound keeps the shadow repository under MaxBytes: it collects garbage,
// then drops the oldest checkpoints (never keep's), a quarter at a time,
// until it fits. It returns what it dropped, and logs it. The caller
// holds the lock.
func (k *Keeper) bound(ctx context.Context, sh *shadow, keep agent.ID) ([]agent.Checkpoint, error) {
	size, err := sh.size(ctx)
	if err != nil || size <= k.opts.MaxBytes {
		return nil, err
	}
	if err := k.gc(ctx, sh); err != nil {
		return nil, err
	}
	var dropped []agent.Checkpoint
	for {
		if size, err = sh.size(ctx); err != nil || size <= k.opts.MaxBytes {
			break
		}
		live, err := k.live(ctx, sh)
		if err != nil {
			return dropped, err
		}
		live = slices.DeleteFunc(live, func(c agent.Checkpoint) bool { return c.MessageID == keep })
		if len(live) == 0 {
			break
		}
		slices.SortFunc(live, func(a, b agent.Checkpoint) int { return a.Created.Compare(b.Created) })
		now := time.Now().UTC()
		for _, c := range live[:max(1, len(live)/4)] {
			c.Dropped = now
			if err := k.opts.Store.PutCheckpoint(ctx, c); err != nil {
				return dropped, err
			}
			dropped = append(dropped, c)
		}
		if err := k.gc(ctx, sh); err != nil {
			return dropped, err
		}
	}
	if len(dropped) > 0 {
		var names []string
		for _, c := range dropped {
			names = append(names, string(c.SessionID)+"/"+string(c.MessageID))
		}
		k.log.Warn("checkpoints: dropped the oldest turns' snapshots to keep the store under checkpoints.maxBytes; those turns can no longer be reverted",
			"workspace", sh.root, "maxBytes", k.opts.MaxBytes, "size", size, "dropped", names)
	}
	return dropped, err
}

// Close stops the keeper's file watchers (their inotify instances, a
// per-user resource). Snapshots taken after it walk the tree.
func (k *Keeper) Close() {
	k.mu.Lock()
	shadows := slices.Collect(maps.Values(k.shadows))
	k.mu.Unlock()
	for _, sh := range shadows {
		sh.mu.Lock()
		if sh.watch != nil {
			sh.watch.close()
			sh.watch, sh.watchBase = nil, nil
		}
		sh.watchErr = errClosed
		sh.mu.Unlock()
	}
}

var errClosed = errors.New("the keeper was closed")

// Status is what a keeper knows of a workspace's checkpoints.
type Status struct {
	Workspace string `json:"workspace"`
	// Watcher is the file watcher snapshots use ("inotify"), "" when
	// each walks the whole tree; WatchError says why not, once known.
	Watcher    string `json:"watcher,omitempty"`
	WatchError string `json:"watchError,omitempty"`
	// Watched is how many directories the watcher watches.
	Watched int `json:"watched,omitempty"`
	// Walks counts this process's snapshots that walked the whole tree,
	// Partial those that visited only what the watcher saw change,
	// Overflows how often the watcher lost changes (the next walked).
	Walks     int `json:"walks"`
	Partial   int `json:"partial"`
	Overflows int `json:"overflows,omitempty"`
	// Bytes is the shadow repository's disk use (its objects and the stat
	// cache), MaxBytes the bound of its objects (checkpoints.maxBytes):
	// past it the oldest turns' snapshots go.
	Bytes    int64 `json:"bytes"`
	MaxBytes int64 `json:"maxBytes"`
}

// Status reports the checkpoints of workspace: its watcher and the disk
// use of its shadow repository.
func (k *Keeper) Status(ctx context.Context, workspace string) (Status, error) {
	sh := k.shadowOf(workspace)
	sh.mu.Lock()
	st := Status{Workspace: sh.root, Walks: sh.full, Partial: sh.partial, Overflows: sh.overflows, MaxBytes: k.opts.MaxBytes}
	switch {
	case sh.watch != nil:
		st.Watcher, st.Watched = watcherKind, sh.watch.watched()
	case sh.watchErr != nil:
		st.WatchError = sh.watchErr.Error()
	case k.opts.NoWatch:
		st.WatchError = "turned off"
	case watcherKind == "":
		st.WatchError = "no file watcher on this system"
	}
	sh.mu.Unlock()
	if !sh.exists() {
		return st, nil
	}
	var err error
	st.Bytes, err = sh.size(ctx)
	if fi, serr := os.Stat(sh.statPath()); serr == nil {
		st.Bytes += fi.Size()
	}
	return st, err
}
