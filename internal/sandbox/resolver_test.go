//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolverAgreesWithEvalSymlinks: the policy's resolver finds the same
// real path, kind and existence as EvalSymlinks and a stat, through links
// inside and out of the root, dangling links, files on the way and
// missing paths, asked in any order.
func TestResolverAgreesWithEvalSymlinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{"ws/.git/hooks", "ws/a/b", "out/x"} {
		os.MkdirAll(filepath.Join(base, d), 0o755)
	}
	for _, f := range []string{"ws/.git/config", "ws/a/f", "out/x/secret"} {
		os.WriteFile(filepath.Join(base, f), nil, 0o644)
	}
	os.Symlink(out, filepath.Join(root, "linkout"))
	os.Symlink("a/b", filepath.Join(root, "linkin"))
	os.Symlink("nowhere", filepath.Join(root, "dangling"))
	os.Symlink("../a/f", filepath.Join(root, "a/b/tofile"))
	paths := []string{
		".git/config", ".git/hooks", ".git", "a/b", "a/f", "a/f/under", "a/b/tofile",
		"linkout", "linkout/x/secret", "linkin", "linkin/tofile", "dangling", "dangling/x",
		"missing", "missing/deeper", "a/./b/../f", ".",
	}
	for _, order := range [][]string{paths, reversed(paths)} {
		r := newResolver(root)
		for _, rel := range order {
			p := filepath.Join(root, rel)
			real, dir, ok := r.resolve(p)
			wantReal := realOr(p)
			fi, err := os.Stat(wantReal)
			if real != wantReal || ok != (err == nil) || dir != (err == nil && fi.IsDir()) {
				t.Errorf("resolve(%s) = %s, dir %v, exists %v; want %s, dir %v, exists %v", rel, real, dir, ok, wantReal, err == nil && fi.IsDir(), err == nil)
			}
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
