package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ignoreTree is a workspace whose ignore files use what git's rules
// allow: nested .gitignore files that re-include and exclude again,
// directory-only patterns, anchored and floating ones, "**" in each of its
// places (and where it is only "*"), classes with ranges, negation and
// POSIX names, quoting, trailing spaces, CR LF and a byte order mark, a
// .gitignore that is a symbolic link (git does not read it), a symbolic
// link to a directory (not a directory to a "dir/" pattern), and names
// under an ignored directory that a "!" cannot bring back.
var ignoreTree = map[string]string{
	".gitignore": "\xef\xbb\xbf# comment\n*.log\n!keep.log\n/rootonly\nbuild/\nlink/\n" +
		"doc/**/*.tmp\n**/cache\nfoo**/bar\na**/b\n*.o   \nspace\\ \n\\#hash\n\\!bang\n" +
		"[Tt]est[0-9]?.txt\nx[!a-c]z\nq[[:digit:]]q\nr[[:nope:]]r\nu[[:alpha:]-]u\nopen[bracket\n" +
		"crlf\r\nend\\\nmid/*/leaf\n*/one\nout/**\n!out/keep\nlib/\n!lib/\n" +
		"[]]br\nw[^0-9]w\nstar*\n!stary\n\n   \n!\n",
	"keep.log":                 "",
	"a.log":                    "",
	"rootonly":                 "",
	"sub/rootonly":             "",
	"sub/a.log":                "",
	"sub/keep.log":             "",
	"sub/.gitignore":           "!*.log\n*.txt\n!important.txt\n/anchored\nnested/deeper/\n",
	"sub/x.txt":                "",
	"sub/important.txt":        "",
	"sub/anchored":             "",
	"sub/sub2/anchored":        "",
	"sub/nested/deeper/f":      "",
	"sub/nested/deeper2/f":     "",
	"sub/sub2/.gitignore":      "*\n!*/\n!*.go\n",
	"sub/sub2/main.go":         "",
	"sub/sub2/readme.md":       "",
	"sub/sub2/inner/x.go":      "",
	"sub/sub2/inner/x.md":      "",
	"build/out.bin":            "",
	"build/keep.log":           "",
	"src/build":                "", // a file: "build/" is for directories
	"doc/a.tmp":                "",
	"doc/x/y/b.tmp":            "",
	"doc/x/c.tmp2":             "",
	"cache/f":                  "",
	"deep/er/cache":            "",
	"foo/bar":                  "",
	"fooX/bar":                 "",
	"fooX/y/bar":               "",
	"a/b":                      "",
	"ax/b":                     "",
	"a/x/b":                    "",
	"x.o":                      "",
	"space ":                   "",
	"space":                    "",
	"#hash":                    "",
	"!bang":                    "",
	"test1a.txt":               "",
	"Test2.txt":                "",
	"test12.txt":               "",
	"xdz":                      "",
	"xbz":                      "",
	"q5q":                      "",
	"qxq":                      "",
	"r5r":                      "",
	"u-u":                      "",
	"uau":                      "",
	"u5u":                      "",
	"open[bracket":             "",
	"crlf":                     "",
	"end\\":                    "",
	"end":                      "",
	"mid/p/leaf":               "",
	"mid/p/q/leaf":             "",
	"z/one":                    "",
	"z/y/one":                  "",
	"out/keep":                 "",
	"out/other":                "",
	"lib/f":                    "",
	"]br":                      "",
	"wxw":                      "",
	"w1w":                      "",
	"stary":                    "",
	"starz":                    "",
	"linked/.gitignore-target": "*\n",
	"linked/plain":             "",
	"excl/one":                 "",
	"excl/two":                 "",
	"glob/one.glob":            "",
	"glob/two.glob":            "",
	"weird/file\twith tab":     "",
	"weird/ümlaut.log":         "",
}

// TestIgnoreMatchesGit: the in-process matcher gives, for every name of a
// tree of tricky patterns (the directories, and the names beneath ignored
// ones), the answer of git check-ignore run for the shadow, with the
// shadow's info/exclude and the global exclude file in play.
func TestIgnoreMatchesGit(t *testing.T) {
	ctx := context.Background()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	os.MkdirAll(filepath.Join(xdg, "git"), 0o755)
	os.WriteFile(filepath.Join(xdg, "git", "ignore"), []byte("*.glob\n!two.glob\nexcl/\n"), 0o644)
	k, root := testKeeper(t)
	for name, content := range ignoreTree {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".gitignore-target", filepath.Join(root, "linked", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	sh := k.shadowOf(root)
	unlock, err := sh.lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// info/exclude: the shadow's copy of the workspace's, which re-includes
	// one of the global file's and overrides nothing of the .gitignore's.
	os.MkdirAll(filepath.Join(sh.dir, "info"), 0o700)
	os.WriteFile(filepath.Join(sh.dir, "info", "exclude"), []byte("!excl/\nexcl/two\n"), 0o600)

	var paths []string
	var dirs []bool
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		paths = append(paths, filepath.ToSlash(rel))
		dirs = append(dirs, d.IsDir())
		return nil
	})
	want, err := sh.gitCheckIgnore(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sh.checkIgnore(ctx, paths, dirs)
	if err != nil {
		t.Fatal(err)
	}
	var diff []string
	for i, p := range paths {
		if got[p] != want[p] {
			diff = append(diff, fmt.Sprintf("%q (dir %v): git %v, darman %v", p, dirs[i], want[p], got[p]))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%d of %d names differ from git check-ignore:\n%s", len(diff), len(paths), strings.Join(diff, "\n"))
	}
	if len(want) < 20 || len(want) > len(paths)-20 {
		t.Errorf("git ignores %d of %d names: the tree does not test both answers", len(want), len(paths))
	}
}

// A shadow whose configuration could change git's answer (core.ignoreCase
// set, as git init sets it on a case-insensitive file system) is answered
// by git itself.
func TestIgnoreCaseAsksGit(t *testing.T) {
	ctx := context.Background()
	k, root := testKeeper(t)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.LOG\n"), 0o644)
	os.WriteFile(filepath.Join(root, "a.log"), nil, 0o644)
	sh := k.shadowOf(root)
	unlock, err := sh.lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	paths, dirs := []string{"a.log", ".gitignore"}, []bool{false, false}
	got, err := sh.checkIgnore(ctx, paths, dirs)
	if err != nil || got["a.log"] {
		t.Fatalf("case-sensitive shadow: %v, %v; want a.log kept", got, err)
	}
	if _, err := sh.git.run(ctx, nil, "config", "core.ignoreCase", "true"); err != nil {
		t.Fatal(err)
	}
	got, err = sh.checkIgnore(ctx, paths, dirs)
	if err != nil || !got["a.log"] || got[".gitignore"] {
		t.Fatalf("core.ignoreCase=true: %v, %v; want a.log ignored as git says", got, err)
	}
}

func TestConfigNeedsGit(t *testing.T) {
	for config, want := range map[string]bool{
		"[core]\n\tbare = false\n\tignorecase = false\n":      false,
		"[core]\n\tIgnoreCase = true\n":                       true,
		"[core]\n\tignorecase\n":                              true,
		"[core]\n\texcludesFile = ~/x\n":                      true,
		"[include]\n\tpath = other\n":                         true,
		"[includeIf \"gitdir:/x/\"]\n\tpath = other\n":        true,
		"[core]\n\trepositoryformatversion = 0\n\tbare = 0\n": false,
	} {
		if got := configNeedsGit([]byte(config)); got != want {
			t.Errorf("configNeedsGit(%q) = %v, want %v", config, got, want)
		}
	}
}
