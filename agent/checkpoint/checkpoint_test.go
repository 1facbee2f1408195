package checkpoint_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/store"
)

func userGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newKeeper is a keeper on a real session store in a temporary data
// directory.
func newKeeper(t testing.TB, opts ...func(*checkpoint.Options)) (*checkpoint.Keeper, *store.Store) {
	t.Helper()
	data := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(data, "store"), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o := checkpoint.Options{Dir: filepath.Join(data, "checkpoints"), Store: st}
	for _, f := range opts {
		f(&o)
	}
	k, err := checkpoint.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k, st
}

func newSession(t testing.TB, st *store.Store, root string) agent.ID {
	t.Helper()
	s := agent.Session{ID: agent.NewSessionID(), Workspace: root, Created: time.Now(), Updated: time.Now()}
	if err := st.PutSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// turn runs fn as a turn of session ses: a snapshot before, one after.
func turn(t *testing.T, k *checkpoint.Keeper, ses agent.ID, root string, fn func()) agent.ID {
	t.Helper()
	ctx := context.Background()
	ref := agent.TurnRef{SessionID: ses, MessageID: agent.NewMessageID(), Workspace: root}
	if err := k.Step(ctx, ref); err != nil {
		t.Fatal(err)
	}
	fn()
	if err := k.End(ctx, ref); err != nil {
		t.Fatal(err)
	}
	return ref.MessageID
}

// A file over the size limit is named as not restorable and left as it
// is; the small files beside it, an executable bit and a link are
// restored.
func TestLargeFilesAreNamedModesAndLinksRestored(t *testing.T) {
	root := t.TempDir()
	write(t, root, "small.txt", "small\n")
	write(t, root, "big.bin", strings.Repeat("x", 50))
	write(t, root, "run.sh", "#!/bin/sh\n")
	os.Symlink("small.txt", filepath.Join(root, "link"))
	k, st := newKeeper(t, func(o *checkpoint.Options) { o.MaxFileBytes = 100 })
	ses := newSession(t, st, root)
	turn(t, k, ses, root, func() {
		write(t, root, "small.txt", "changed\n")
		write(t, root, "big.bin", strings.Repeat("y", 500))
		os.Chmod(filepath.Join(root, "run.sh"), 0o755)
		os.Remove(filepath.Join(root, "link"))
		os.Symlink("run.sh", filepath.Join(root, "link"))
	})
	rep, err := k.Revert(context.Background(), checkpoint.RevertOptions{Session: ses})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "small.txt"); got != "small\n" {
		t.Errorf("small.txt = %q", got)
	}
	if got := read(t, root, "big.bin"); got != strings.Repeat("y", 500) {
		t.Errorf("big.bin was touched: %d bytes", len(got))
	}
	if len(rep.NotRestorable) != 1 || rep.NotRestorable[0].Path != "big.bin" || rep.NotRestorable[0].Size != 500 {
		t.Errorf("not restorable: %+v", rep.NotRestorable)
	}
	if fi, _ := os.Stat(filepath.Join(root, "run.sh")); fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh kept its executable bit: %v", fi.Mode())
	}
	if target, err := os.Readlink(filepath.Join(root, "link")); target != "small.txt" {
		t.Errorf("link -> %q, %v", target, err)
	}
}

// Reverting an earlier turn takes the later ones back too; redo puts back
// the latest revert first.
func TestRevertEarlierTurnRewindsLaterOnes(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "0\n")
	k, st := newKeeper(t)
	ses := newSession(t, st, root)
	first := turn(t, k, ses, root, func() { write(t, root, "f.txt", "1\n") })
	turn(t, k, ses, root, func() { write(t, root, "g.txt", "2\n") })
	ctx := context.Background()
	rep, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(first)})
	if err != nil || len(rep.Turns) != 2 {
		t.Fatalf("revert: %v %+v", err, rep)
	}
	if read(t, root, "f.txt") != "0\n" || read(t, root, "g.txt") != "<missing>" {
		t.Errorf("after revert: f=%q g=%q", read(t, root, "f.txt"), read(t, root, "g.txt"))
	}
	if _, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(first)}); err == nil || !strings.Contains(err.Error(), "reverted already") {
		t.Errorf("reverting twice: %v", err)
	}
	if _, err := k.Redo(ctx, checkpoint.RevertOptions{Session: ses}); err != nil {
		t.Fatal(err)
	}
	if read(t, root, "f.txt") != "1\n" || read(t, root, "g.txt") != "2\n" {
		t.Errorf("after redo: f=%q g=%q", read(t, root, "f.txt"), read(t, root, "g.txt"))
	}
}

// A step taken for a turn after it ended (an edit the user applies to
// it) continues the turn's checkpoint: the turn's revert takes back both
// its own change and the later step's, and a reverted turn takes no
// more steps.
func TestStepAfterTheTurnEndedIsRevertedWithIt(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "0\n")
	k, st := newKeeper(t)
	ses := newSession(t, st, root)
	ctx := context.Background()
	msg := turn(t, k, ses, root, func() { write(t, root, "f.txt", "1\n") })
	ref := agent.TurnRef{SessionID: ses, MessageID: msg, Workspace: root}
	if err := k.Step(ctx, ref); err != nil {
		t.Fatal(err)
	}
	write(t, root, "g.txt", "applied\n")
	if err := k.End(ctx, ref); err != nil {
		t.Fatal(err)
	}
	rep, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(msg)})
	if err != nil || len(rep.Conflicts) != 0 {
		t.Fatalf("revert: %v %+v", err, rep)
	}
	if read(t, root, "f.txt") != "0\n" || read(t, root, "g.txt") != "<missing>" {
		t.Errorf("after revert: f=%q g=%q", read(t, root, "f.txt"), read(t, root, "g.txt"))
	}
	if err := k.Step(ctx, ref); err == nil || !strings.Contains(err.Error(), "is reverted") {
		t.Errorf("a step of the reverted turn: %v", err)
	}
}

// A step taken for a turn after it ended whose process dies before End (the
// editor closed while the applied edit's question was open) keeps the
// turn's After: a later revert takes back what the turn changed, and a
// file the user made since is left alone. With the After cleared, the
// revert took the workspace as it is then for the turn's end and removed
// the user's file.
func TestStepAfterTheTurnEndedKeepsItsEndIfTheProcessDies(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "0\n")
	var opts checkpoint.Options // for the second darman's keeper
	k, st := newKeeper(t, func(o *checkpoint.Options) { opts = *o })
	ses := newSession(t, st, root)
	ctx := context.Background()
	msg := turn(t, k, ses, root, func() { write(t, root, "f.txt", "1\n") })
	if err := k.Step(ctx, agent.TurnRef{SessionID: ses, MessageID: msg, Workspace: root}); err != nil {
		t.Fatal(err)
	}
	// The process dies here; the user goes on by hand, and a new darman
	// reverts the turn.
	write(t, root, "notes.txt", "mine\n")
	k2, err := checkpoint.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k2.Close)
	rep, err := k2.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(msg)})
	if err != nil {
		t.Fatalf("revert: %v", err)
	}
	if read(t, root, "f.txt") != "0\n" || read(t, root, "notes.txt") != "mine\n" {
		t.Errorf("after the revert f.txt = %q, notes.txt = %q (report %+v)", read(t, root, "f.txt"), read(t, root, "notes.txt"), rep)
	}
}

// A step of an ended turn in another workspace than the turn's (a session
// of one folder applied to from an editor on another) is refused: taken,
// its End snapshotted the turn's own workspace as the turn's new end, and
// the turn's revert then took back what the user changed there by hand
// since.
func TestStepOfAnEndedTurnInAnotherWorkspaceIsRefused(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	write(t, root, "f.txt", "0\n")
	k, st := newKeeper(t)
	ses := newSession(t, st, root)
	ctx := context.Background()
	msg := turn(t, k, ses, root, func() { write(t, root, "f.txt", "1\n") })
	write(t, root, "notes.txt", "mine\n")
	ref := agent.TurnRef{SessionID: ses, MessageID: msg, Workspace: other}
	if err := k.Step(ctx, ref); err == nil || !strings.Contains(err.Error(), root) {
		t.Errorf("a step in %s of a turn of %s: %v, want an error naming the turn's workspace", other, root, err)
	}
	k.End(ctx, ref)
	if _, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(msg)}); err != nil {
		t.Fatal(err)
	}
	if read(t, root, "f.txt") != "0\n" || read(t, root, "notes.txt") != "mine\n" {
		t.Errorf("after the revert f.txt = %q, notes.txt = %q", read(t, root, "f.txt"), read(t, root, "notes.txt"))
	}
}

// A turn reverted by another darman (darman sessions revert in a terminal)
// while a step of it runs here (an applied edit's question open) stays
// reverted: the step's End does not write the checkpoint it read before
// over the revert's, so the revert can still be redone and the turn's
// changes come back.
func TestRevertElsewhereDuringAStepOfAnEndedTurnStaysRedoable(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "0\n")
	var opts checkpoint.Options // for the other darman's keeper
	here, st := newKeeper(t, func(o *checkpoint.Options) { opts = *o })
	elsewhere, err := checkpoint.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(elsewhere.Close)
	ses := newSession(t, st, root)
	ctx := context.Background()
	msg := turn(t, here, ses, root, func() { write(t, root, "f.txt", "1\n") })
	ref := agent.TurnRef{SessionID: ses, MessageID: msg, Workspace: root}
	if err := here.Step(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(msg)}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "g.txt", "applied\n")
	here.End(ctx, ref)
	if _, err := elsewhere.Redo(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(msg)}); err != nil {
		t.Errorf("redo of the turn reverted elsewhere: %v", err)
	}
	if got := read(t, root, "f.txt"); got != "1\n" {
		t.Errorf("f.txt = %q after the redo, want the turn's change back", got)
	}
}

// Past checkpoints.maxBytes the oldest turns are dropped, and a revert of
// one says so; removing the session and collecting frees the snapshots.
func TestSizeBoundDropsOldestAndCollectFrees(t *testing.T) {
	root := t.TempDir()
	var dir string
	k, st := newKeeper(t, func(o *checkpoint.Options) { o.MaxBytes, dir = 1, o.Dir })
	ses := newSession(t, st, root)
	first := turn(t, k, ses, root, func() { write(t, root, "a.txt", strings.Repeat("a", 4000)) })
	turn(t, k, ses, root, func() { write(t, root, "b.txt", strings.Repeat("b", 4000)) })
	ctx := context.Background()
	_, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses, Turn: string(first)})
	if err == nil || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("revert of a dropped turn: %v", err)
	}
	if err := st.DeleteSession(ctx, ses); err != nil {
		t.Fatal(err)
	}
	if cps, _ := st.Checkpoints(ctx, ses); len(cps) != 0 {
		t.Errorf("%d checkpoints outlived their session", len(cps))
	}
	if err := k.Collect(ctx, root); err != nil {
		t.Fatal(err)
	}
	shadows, _ := filepath.Glob(filepath.Join(dir, "*", "HEAD"))
	if len(shadows) != 1 {
		t.Fatalf("shadow repositories: %v", shadows)
	}
	// Only the tree of the last snapshot (what the index holds) is kept.
	refs := userGit(t, root, "--git-dir", filepath.Dir(shadows[0]), "for-each-ref", "refs/darman/")
	if n := strings.Count(refs, "\n"); n != 1 {
		t.Errorf("after collecting, the shadow keeps %d trees:\n%s", n, refs)
	}
}
