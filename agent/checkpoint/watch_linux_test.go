package checkpoint_test

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
)

// twins snapshot one workspace twice at each step: by the watcher (w) and
// by the walk of the whole tree (walk, its watcher off). Being git trees,
// the two snapshots are the same object when they hold the same files.
type twins struct {
	t          *testing.T
	root       string
	w, walk    *snapper
	partial    int // partial snapshots expected of w so far
	lastStatus checkpoint.Status
}

func newTwins(t *testing.T, root string) *twins {
	return &twins{t: t, root: root,
		w:    newSnapper(t, root, func(o *checkpoint.Options) { o.MaxFileBytes = 1000 }),
		walk: newSnapper(t, root, func(o *checkpoint.Options) { o.MaxFileBytes = 1000; o.NoWatch = true })}
}

// same takes both snapshots and fails unless they hold the same files and
// name the same large ones; partial: the watcher's was a partial walk.
func (tw *twins) same(what string, partial bool) {
	tw.t.Helper()
	a, b := tw.w.snap(), tw.walk.snap()
	if a.Tree != b.Tree || !slices.Equal(a.Large, b.Large) {
		fa, fb := tw.w.files(a), tw.walk.files(b)
		var diff []string
		for p := range fa {
			if fa[p] != fb[p] {
				diff = append(diff, "watcher has "+p+": "+strconv.Quote(fa[p])+", walk: "+strconv.Quote(fb[p]))
			}
		}
		for p := range fb {
			if _, ok := fa[p]; !ok {
				diff = append(diff, "only the walk has "+p)
			}
		}
		tw.t.Fatalf("%s: the watcher's snapshot differs from the walk's:\n%s\nlarge: %+v / %+v", what, strings.Join(diff, "\n"), a.Large, b.Large)
	}
	st, err := tw.w.k.Status(context.Background(), tw.root)
	if err != nil {
		tw.t.Fatal(err)
	}
	if st.Watcher != "inotify" {
		tw.t.Fatalf("%s: no watcher: %+v", what, st)
	}
	if partial {
		tw.partial++
	}
	if st.Partial != tw.partial {
		tw.t.Fatalf("%s: %d partial snapshots, want %d (%+v)", what, st.Partial, tw.partial, st)
	}
	tw.lastStatus = st
}

// The watcher's snapshots hold what the walk's do, change after change:
// edits, renames of files and directories, deletes, new trees, ignored
// files and a .gitignore that changes, symlinks, modes, large files,
// changes made by another process, and a queue that overflowed.
func TestWatcherSnapshotIsTheWalks(t *testing.T) {
	root := t.TempDir()
	userGit(t, root, "init", "-q")
	write(t, root, ".gitignore", "node_modules/\n*.log\n")
	for _, p := range []string{"a/b/c/deep.go", "a/b/x.go", "a/y.go", "top.txt", "pkg/one/1.go", "pkg/two/2.go", "pkg/two/sub/3.go", "a/b2/old.go"} {
		write(t, root, p, "package "+filepath.Base(filepath.Dir(p))+"\n")
	}
	write(t, root, "node_modules/lib/index.js", "module.exports = 1\n")
	os.Symlink("top.txt", filepath.Join(root, "link"))
	os.Symlink("pkg", filepath.Join(root, "dirlink"))
	tw := newTwins(t, root)
	tw.same("first snapshot", false)
	tw.same("nothing changed", true)

	steps := []struct {
		what   string
		change func()
	}{
		{"an edit deep down", func() { write(t, root, "a/b/c/deep.go", "package c // edited\n") }},
		{"a new file", func() { write(t, root, "a/b/new.go", "package b\n") }},
		{"a file renamed across directories", func() { must(t, os.Rename(filepath.Join(root, "a/y.go"), filepath.Join(root, "pkg/one/y.go"))) }},
		{"a directory renamed", func() { must(t, os.Rename(filepath.Join(root, "pkg/two"), filepath.Join(root, "pkg/three"))) }},
		{"an edit in the renamed directory", func() { write(t, root, "pkg/three/sub/3.go", "package sub // after the rename\n") }},
		{"a directory moved onto a name the cache knew", func() {
			must(t, os.RemoveAll(filepath.Join(root, "pkg/one")))
			must(t, os.Rename(filepath.Join(root, "pkg/three"), filepath.Join(root, "pkg/one")))
		}},
		{"a file deleted", func() { must(t, os.Remove(filepath.Join(root, "a/b/x.go"))) }},
		{"a new tree, made at once", func() {
			write(t, root, "gen/p/q/r/s.go", "package r\n")
			write(t, root, "gen/p/t.go", "package p\n")
		}},
		{"a file in the new tree changed", func() { write(t, root, "gen/p/q/r/s.go", "package r // again\n") }},
		{"a tree deleted", func() { must(t, os.RemoveAll(filepath.Join(root, "a/b"))) }},
		{"ignored files written", func() {
			write(t, root, "node_modules/lib/more.js", "x\n")
			write(t, root, "build.log", "log\n")
			write(t, root, "gen/p/debug.log", "log\n")
		}},
		{"the .gitignore changed: *.log kept now", func() { write(t, root, ".gitignore", "node_modules/\n") }},
		{"a nested .gitignore", func() { write(t, root, "gen/.gitignore", "q/\n") }},
		{"a link retargeted", func() {
			must(t, os.Remove(filepath.Join(root, "link")))
			must(t, os.Symlink("pkg/one/sub/3.go", filepath.Join(root, "link")))
		}},
		{"a file replaced by a link, a link to a directory by a directory", func() {
			must(t, os.Remove(filepath.Join(root, "top.txt")))
			must(t, os.Symlink("gen", filepath.Join(root, "top.txt")))
			must(t, os.Remove(filepath.Join(root, "dirlink")))
			write(t, root, "dirlink/real.go", "package dirlink\n")
		}},
		{"a mode changed", func() { must(t, os.Chmod(filepath.Join(root, "pkg/one/sub/3.go"), 0o755)) }},
		{"a large file", func() { write(t, root, "gen/big.bin", strings.Repeat("\x00\x01", 1000)) }},
		{"the large file grown", func() { write(t, root, "gen/big.bin", strings.Repeat("\x00\x01", 2000)) }},
		{"changes by another process", func() {
			sh(t, root, "echo shell > pkg/one/shell.go && mkdir -p sh/a/b && echo x > sh/a/b/x.go && mv pkg/one/sub/3.go sh/a/3.go && rm -f gen/p/t.go")
		}},
		{"a directory deleted and made again by the same name", func() {
			must(t, os.RemoveAll(filepath.Join(root, "a/b2")))
			write(t, root, "a/b2/z.go", "package b2\n")
		}},
		{"an edit in the directory made again", func() { write(t, root, "a/b2/z.go", "package b2 // watched\n") }},
	}
	for _, s := range steps {
		s.change()
		tw.same(s.what, true)
	}

	// Another process, from the stat cache this one left on disk (which
	// the watcher's snapshots let lag behind), sees what the walk sees.
	other, err := checkpoint.New(checkpoint.Options{Dir: tw.w.dir, Store: tw.w.st, MaxFileBytes: 1000, NoWatch: true})
	must(t, err)
	ctx := context.Background()
	ref := agent.TurnRef{SessionID: tw.w.ses, MessageID: agent.NewMessageID(), Workspace: root}
	must(t, other.Step(ctx, ref))
	cps, err := tw.w.st.Checkpoints(ctx, tw.w.ses)
	must(t, err)
	if got, want := cps[len(cps)-1].Before, tw.walk.snap(); got.Tree != want.Tree || !slices.Equal(got.Large, want.Large) {
		fa, fb := tw.w.files(got), tw.walk.files(want)
		var diff []string
		for p := range fa {
			if fa[p] != fb[p] {
				diff = append(diff, p+": "+strconv.Quote(fa[p])+", walk: "+strconv.Quote(fb[p]))
			}
		}
		for p := range fb {
			if _, ok := fa[p]; !ok {
				diff = append(diff, "only the walk has "+p)
			}
		}
		t.Fatalf("another process's snapshot from the cache on disk differs from the walk's:\n%s", strings.Join(diff, "\n"))
	}
	write(t, root, "pkg/one/shell.go", "package one // after the other process\n")
	tw.same("after another process's snapshot", false)

	// Overflow the queue: more events than it holds, then one change that
	// only the walk the overflow forces can find.
	max, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(max)))
	f1, _ := os.OpenFile(filepath.Join(root, "sh/a/b/x.go"), os.O_WRONLY, 0)
	f2, _ := os.OpenFile(filepath.Join(root, "pkg/one/shell.go"), os.O_WRONLY, 0)
	for i := range n/2 + 100 { // alternating: the kernel folds only repeats
		f1.WriteAt([]byte{'a' + byte(i%26)}, 0)
		f2.WriteAt([]byte{'a' + byte(i%26)}, 0)
	}
	f1.Close()
	f2.Close()
	write(t, root, "after/overflow.go", "package after\n")
	tw.same("after an overflow", false)
	if tw.lastStatus.Overflows != 1 {
		t.Fatalf("the overflow was not seen: %+v", tw.lastStatus)
	}
	write(t, root, "after/again.go", "package after // watched again\n")
	must(t, os.Rename(filepath.Join(root, "gen/p"), filepath.Join(root, "after/p")))
	tw.same("the watcher set up again after the overflow", true)
}

// A revert after snapshots the watcher drove puts the tree back exactly:
// every file, link and mode as it was before the turn.
func TestRevertAfterWatcherSnapshots(t *testing.T) {
	root := t.TempDir()
	userGit(t, root, "init", "-q")
	write(t, root, ".gitignore", "out/\n")
	for _, p := range []string{"src/a.go", "src/b/c.go", "doc/x.md", "out/ignored.o"} {
		write(t, root, p, "content of "+p+"\n")
	}
	os.Symlink("src/a.go", filepath.Join(root, "link"))
	os.Chmod(filepath.Join(root, "src/a.go"), 0o755)
	s := newSnapper(t, root)
	s.snap() // the watcher set up by a first snapshot
	before := tree(t, root)
	ctx := context.Background()
	ref := agent.TurnRef{SessionID: s.ses, MessageID: agent.NewMessageID(), Workspace: root}
	must(t, s.k.Step(ctx, ref))
	write(t, root, "src/a.go", "changed\n")
	must(t, s.k.Step(ctx, ref))
	must(t, os.Rename(filepath.Join(root, "src/b"), filepath.Join(root, "src/moved")))
	write(t, root, "src/new/n.go", "new\n")
	must(t, s.k.Step(ctx, ref))
	must(t, os.Remove(filepath.Join(root, "doc/x.md")))
	must(t, os.Remove(filepath.Join(root, "link")))
	must(t, os.Symlink("doc", filepath.Join(root, "link")))
	must(t, os.Chmod(filepath.Join(root, "src/a.go"), 0o644))
	write(t, root, "out/ignored.o", "rebuilt\n")
	must(t, s.k.End(ctx, ref))
	st, err := s.k.Status(ctx, root)
	if err != nil || st.Watcher != "inotify" || st.Partial < 4 {
		t.Fatalf("the turn's snapshots were not the watcher's: %+v %v", st, err)
	}
	if _, err := s.k.Revert(ctx, checkpoint.RevertOptions{Session: s.ses}); err != nil {
		t.Fatal(err)
	}
	after := tree(t, root)
	delete(before, "out/ignored.o") // ignored: not the checkpoint's
	delete(after, "out/ignored.o")
	if !maps.Equal(before, after) {
		t.Fatalf("the revert did not restore the tree:\nbefore %v\nafter  %v", before, after)
	}
}

// tree is every file, link and directory under root (.git left out):
// path → kind, mode and content or target.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A workspace opened by a link to it is watched too (its top directory
// by the link).
func TestWatcherWorkspaceByALink(t *testing.T) {
	real := t.TempDir()
	root := filepath.Join(t.TempDir(), "ws")
	must(t, os.Symlink(real, root))
	write(t, real, "a.go", "package a\n")
	write(t, real, "locked/x.go", "package locked\n")
	tw := newTwins(t, root)
	tw.same("first snapshot", false)
	write(t, real, "a.go", "package a // edited at the top\n")
	write(t, real, "b.go", "package a\n")
	tw.same("a change at the top of a linked workspace", true)
	write(t, real, "locked/y.go", "package locked\n")
	tw.same("a new file in a subdirectory", true)
}
