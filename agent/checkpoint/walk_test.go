package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/store"
)

// snapper takes snapshots of one workspace, as the steps of turns do, and
// reads what they hold from the shadow repository with git.
type snapper struct {
	t    *testing.T
	k    *checkpoint.Keeper
	st   *store.Store
	ses  agent.ID
	root string
	dir  string // the keeper's
}

func newSnapper(t *testing.T, root string, opts ...func(*checkpoint.Options)) *snapper {
	s := &snapper{t: t, root: root}
	s.k, s.st = newKeeper(t, append(opts, func(o *checkpoint.Options) { s.dir = o.Dir })...)
	s.ses = newSession(t, s.st, root)
	return s
}

// snap is the snapshot before a step of a new turn.
func (s *snapper) snap() agent.Snapshot {
	s.t.Helper()
	ctx := context.Background()
	ref := agent.TurnRef{SessionID: s.ses, MessageID: agent.NewMessageID(), Workspace: s.root}
	if err := s.k.Step(ctx, ref); err != nil {
		s.t.Fatal(err)
	}
	cps, err := s.st.Checkpoints(ctx, s.ses)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, c := range cps {
		if c.MessageID == ref.MessageID {
			return c.Before
		}
	}
	s.t.Fatal("the step stored no checkpoint")
	return agent.Snapshot{}
}

// files is what a snapshot holds: path → "mode content".
func (s *snapper) files(snap agent.Snapshot) map[string]string {
	s.t.Helper()
	shadows, _ := filepath.Glob(filepath.Join(s.dir, "*", "HEAD"))
	if len(shadows) != 1 {
		s.t.Fatalf("shadow repositories: %v", shadows)
	}
	gd := filepath.Dir(shadows[0])
	out := userGit(s.t, s.root, "--git-dir", gd, "ls-tree", "-r", "-z", snap.Tree)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if line == "" {
			continue
		}
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		got[path] = f[0] + " " + userGit(s.t, s.root, "--git-dir", gd, "cat-file", "blob", f[2])
	}
	return got
}

func (s *snapper) paths(snap agent.Snapshot) []string {
	var ps []string
	for p := range s.files(snap) {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// gitOthers is what git itself lists as untracked and not ignored in a
// workspace without commits: what a snapshot must hold (less the
// repositories of their own inside, which it leaves out).
func gitOthers(t *testing.T, root string) []string {
	out := userGit(t, root, "ls-files", "-z", "-o", "--exclude-standard")
	var ps []string
	for _, p := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// The snapshot holds what git lists as untracked and not ignored, on
// tricky ignore rules, at the first snapshot and after each change: the
// workspace's nested .gitignore files, negations, directory patterns,
// info/exclude, a repository of its own inside.
func TestSnapshotHoldsWhatGitDoesNotIgnore(t *testing.T) {
	root := t.TempDir()
	userGit(t, root, "init", "-q")
	write(t, root, ".gitignore", "*.log\n!keep.log\nbuild/\n/top.txt\ndeep/**/x\n# a comment\n\\#hash\nspace\\ \n")
	write(t, root, "a.go", "package a\n")
	write(t, root, "keep.log", "kept\n")
	write(t, root, "drop.log", "dropped\n")
	write(t, root, "top.txt", "ignored at the top only\n")
	write(t, root, "sub/top.txt", "not ignored here\n")
	write(t, root, "build/out.o", "ignored dir\n")
	write(t, root, "sub/build/out.o", "ignored dir anywhere\n")
	write(t, root, "deep/a/b/x", "ignored by **\n")
	write(t, root, "deep/a/b/y", "kept\n")
	write(t, root, "#hash", "escaped\n")
	write(t, root, "space ", "trailing space\n")
	write(t, root, "sub/.gitignore", "*.tmp\n!important.tmp\n")
	write(t, root, "sub/x.tmp", "ignored by the nested file\n")
	write(t, root, "sub/important.tmp", "kept by negation\n")
	write(t, root, "x.tmp", "kept above the nested file\n")
	write(t, root, "excluded.txt", "info/exclude\n")
	write(t, root, ".git/info/exclude", "excluded.txt\n")
	write(t, root, "build2/keep.log", "dir not ignored\n")
	write(t, root, "weird:name*[x]", "glob characters\n")
	write(t, root, ":colon", "magic-looking name\n")
	write(t, root, "new\nline", "a newline in the name\n")
	write(t, root, "nested/own.txt", "another repository\n")
	userGit(t, filepath.Join(root, "nested"), "init", "-q")
	os.MkdirAll(filepath.Join(root, "empty/dir"), 0o755)
	for i := range 20 { // enough for the first snapshot to go to git hash-object
		write(t, root, fmt.Sprintf("many/f%02d", i), fmt.Sprint(i))
	}

	s := newSnapper(t, root)
	check := func(when string) {
		t.Helper()
		want := gitOthers(t, root)
		if got := s.paths(s.snap()); !slices.Equal(got, want) {
			t.Errorf("%s: the snapshot holds\n%q\ngit lists\n%q", when, got, want)
		}
	}
	check("first snapshot")

	write(t, root, "sub/new.tmp", "new, ignored\n")
	write(t, root, "sub/new.go", "new, kept\n")
	write(t, root, "fresh/dir/f.go", "a new directory\n")
	write(t, root, "fresh/dir/f.log", "ignored in it\n")
	write(t, root, "build/more.o", "in an ignored directory\n")
	check("new files")

	// x.tmp and new.tmp come in; new.go, recorded, would stay while it
	// exists (TestNewlyIgnoredFile), where git, without commits, drops it.
	write(t, root, "sub/.gitignore", "*.go\n")
	os.Remove(filepath.Join(root, "sub/new.go"))
	check("a nested .gitignore changed")

	write(t, root, ".git/info/exclude", "new-excluded.txt\nfresh/\n")
	write(t, root, "new-excluded.txt", "now excluded\n")
	os.RemoveAll(filepath.Join(root, "fresh"))
	write(t, root, "excluded.txt", "now kept\n")
	check("info/exclude changed")

	os.Remove(filepath.Join(root, "keep.log"))
	os.Remove(filepath.Join(root, "build2/keep.log"))
	write(t, root, ".gitignore", "*.log\n")
	check("the top .gitignore changed: build/, top.txt, #hash and \"space \" come in")
}

// Recorded files stay recorded while they exist, as git's tracked files
// do, when a .gitignore comes to match them; new ones it matches are left
// out; a file it stops matching comes in.
func TestNewlyIgnoredFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	write(t, root, "b.dat", "b\n")
	s := newSnapper(t, root)
	if got := s.paths(s.snap()); !slices.Equal(got, []string{"a.txt", "b.dat"}) {
		t.Fatalf("first: %q", got)
	}
	write(t, root, ".gitignore", "*.dat\nc.txt\n")
	write(t, root, "c.txt", "c\n")
	write(t, root, "d.dat", "d\n")
	write(t, root, "b.dat", "b changed\n")
	snap := s.snap()
	files := s.files(snap)
	if got := s.paths(snap); !slices.Equal(got, []string{".gitignore", "a.txt", "b.dat"}) {
		t.Errorf("after ignoring: %q", got)
	}
	if files["b.dat"] != "100644 b changed\n" {
		t.Errorf("b.dat, recorded before it was ignored, = %q", files["b.dat"])
	}
	write(t, root, ".gitignore", "*.dat\n")
	if got := s.paths(s.snap()); !slices.Equal(got, []string{".gitignore", "a.txt", "b.dat", "c.txt"}) {
		t.Errorf("after un-ignoring c.txt: %q", got)
	}
}

// A file a shell command changes right after a snapshot, to content of the
// same size, within the same second, is seen by the next one; so are a
// deletion, a mode change, a link's new target, and a file growing over
// the size limit and shrinking back.
func TestSnapshotSeesShellChanges(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "aaaa")
	write(t, root, "gone.txt", "gone\n")
	write(t, root, "run.sh", "#!/bin/sh\n")
	write(t, root, "big.bin", "small\n")
	os.Symlink("f.txt", filepath.Join(root, "link"))
	s := newSnapper(t, root, func(o *checkpoint.Options) { o.MaxFileBytes = 100 })
	first := s.files(s.snap())
	if first["link"] != "120000 f.txt" || first["f.txt"] != "100644 aaaa" {
		t.Fatalf("first: %q", first)
	}
	for i, c := range []string{"bbbb", "cccc", "dddd"} {
		s.snap()
		sh(t, root, "printf "+c+" > f.txt")
		if got := s.files(s.snap())["f.txt"]; got != "100644 "+c {
			t.Fatalf("round %d: f.txt = %q", i, got)
		}
	}
	sh(t, root, "rm gone.txt && chmod +x run.sh && ln -sf run.sh link && head -c 500 /dev/zero > big.bin")
	snap := s.snap()
	files := s.files(snap)
	if _, ok := files["gone.txt"]; ok {
		t.Error("a deleted file is still recorded")
	}
	if files["run.sh"] != "100755 #!/bin/sh\n" {
		t.Errorf("run.sh after chmod +x: %q", files["run.sh"])
	}
	if files["link"] != "120000 run.sh" {
		t.Errorf("link: %q", files["link"])
	}
	if _, ok := files["big.bin"]; ok || len(snap.Large) != 1 || snap.Large[0].Path != "big.bin" || snap.Large[0].Size != 500 {
		t.Errorf("a file over the limit: recorded %v, large %+v", ok, snap.Large)
	}
	if again := s.snap(); len(again.Large) != 1 || again.Tree != snap.Tree {
		t.Errorf("unchanged, the next snapshot: %+v (was %+v)", again, snap)
	}
	sh(t, root, "printf small > big.bin && chmod -x run.sh")
	files = s.files(s.snap())
	if files["big.bin"] != "100644 small" || files["run.sh"] != "100644 #!/bin/sh\n" {
		t.Errorf("shrunk back, chmod -x: %q %q", files["big.bin"], files["run.sh"])
	}
}

// Another darman process (a keeper of its own on the same data directory)
// takes up where the first left, and a damaged stat cache costs a full
// read, not a wrong snapshot.
func TestStatCacheSharedAndDamaged(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	s := newSnapper(t, root)
	s.snap()
	other, err := checkpoint.New(checkpoint.Options{Dir: s.dir, Store: s.st})
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "b.txt", "b\n")
	ref := agent.TurnRef{SessionID: s.ses, MessageID: agent.NewMessageID(), Workspace: root}
	if err := other.Step(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "a2\n")
	if got := s.files(s.snap()); got["a.txt"] != "100644 a2\n" || got["b.txt"] != "100644 b\n" {
		t.Errorf("after the other process's snapshot: %q", got)
	}
	caches, _ := filepath.Glob(filepath.Join(s.dir, "*", "darman-stat"))
	if len(caches) != 1 {
		t.Fatalf("stat caches: %v", caches)
	}
	b, _ := os.ReadFile(caches[0])
	os.WriteFile(caches[0], b[:len(b)/2], 0o600)
	write(t, root, "b.txt", "b2\n")
	if got := s.files(s.snap()); got["a.txt"] != "100644 a2\n" || got["b.txt"] != "100644 b2\n" || len(got) != 2 {
		t.Errorf("after damaging the cache: %q", got)
	}
}

// The checkpoint store, when darman's data directory lies inside the
// workspace (a workspace that is the home directory), is not snapshotted
// into itself.
func TestStoreInsideWorkspaceLeftOut(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	s := newSnapper(t, root, func(o *checkpoint.Options) { o.Dir = filepath.Join(root, ".local", "darman", "checkpoints") })
	s.snap()
	write(t, root, "b.txt", "b\n")
	if got := s.paths(s.snap()); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Errorf("the snapshot holds %q", got)
	}
}

// A snapshot in which only files the stat cache knows changed leaves the
// cache on disk as it was (the next process finds those files by their
// stat); a second process, and its gc, between such snapshots cost no
// wrong tree.
func TestStatCacheWriteWaits(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	write(t, root, "d/b.txt", "b\n")
	s := newSnapper(t, root)
	s.snap()
	trees, _ := filepath.Glob(filepath.Join(s.dir, "*", "darman-tree"))
	if len(trees) != 1 {
		t.Fatalf("darman-tree: %v", trees)
	}
	first, _ := os.ReadFile(trees[0])
	write(t, root, "a.txt", "a2\n")
	if got := s.files(s.snap()); got["a.txt"] != "100644 a2\n" {
		t.Errorf("after a change of content: %q", got)
	}
	if now, _ := os.ReadFile(trees[0]); string(now) != string(first) {
		t.Error("the stat cache was written out for one file's new content")
	}

	other := &snapper{t: t, root: root, dir: s.dir, st: s.st, ses: s.ses}
	var err error
	if other.k, err = checkpoint.New(checkpoint.Options{Dir: s.dir, Store: s.st}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "d/b.txt", "b2\n")
	if got := other.files(other.snap()); got["a.txt"] != "100644 a2\n" || got["d/b.txt"] != "100644 b2\n" {
		t.Errorf("another process, from the cache on disk: %q", got)
	}

	// The first process's newest trees are in no checkpoint once the
	// session goes; the other's gc does not know them.
	write(t, root, "d/b.txt", "b3\n")
	s.snap()
	if err := s.st.DeleteSession(ctx, s.ses); err != nil {
		t.Fatal(err)
	}
	if err := other.k.Collect(ctx, root); err != nil {
		t.Fatal(err)
	}
	s.ses = newSession(t, s.st, root)
	write(t, root, "a.txt", "a4\n")
	if got := s.files(s.snap()); got["a.txt"] != "100644 a4\n" || got["d/b.txt"] != "100644 b3\n" || len(got) != 2 {
		t.Errorf("after the other process's gc: %q", got)
	}
}
