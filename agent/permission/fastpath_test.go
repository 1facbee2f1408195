package permission

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// The shortcuts the path checks take must agree with the standard library
// they stand in for.
func TestPathShortcutsAgree(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the shortcuts are taken only where the separator is '/'")
	}
	paths := []string{"", "/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/b/..", "/a/b/.", "/.", "/..",
		"/a/.b", "/a/..b", "/a/b.", "/a/b..", "a", "a/b", "./a", "/ws", "/ws/x", "/wsx", "/ws/x/../y", "/ws/.git/hooks"}
	for _, p := range paths {
		if got, want := isCleanAbs(p), filepath.IsAbs(p) && filepath.Clean(p) == p; got != want {
			t.Errorf("isCleanAbs(%q) = %v, filepath says %v", p, got, want)
		}
		for _, root := range []string{"/", "/ws", "/ws/x"} {
			rel, ok := relWithin(root, p)
			wantOK := filepath.IsAbs(p) && within(root, filepath.Clean(p))
			if ok != wantOK {
				t.Errorf("relWithin(%q, %q) within = %v, want %v", root, p, ok, wantOK)
				continue
			}
			if ok {
				want, _ := filepath.Rel(root, p)
				if rel != filepath.ToSlash(want) {
					t.Errorf("relWithin(%q, %q) = %q, want %q", root, p, rel, want)
				}
			}
		}
		for _, name := range []string{"x", ".x", "..x", ".", "..", "", "a/b"} {
			if p == "" || !isCleanAbs(p) {
				continue
			}
			if got, want := joinName(p, name), filepath.Join(p, name); got != want {
				t.Errorf("joinName(%q, %q) = %q, want %q", p, name, got, want)
			}
		}
	}
}

func TestByteSet(t *testing.T) {
	for _, s := range []string{"", "a", "*", "ab?", "[x", "plain-word_1", "a\\b", "{a,b}", "é*", "\xff"} {
		for _, set := range []string{"*?[", "*?[{", `*?[\`, `*?\`} {
			if got, want := newByteSet(set).in(s), containsAnyASCII(s, set); got != want {
				t.Errorf("newByteSet(%q).in(%q) = %v, want %v", set, s, got, want)
			}
		}
	}
}

func containsAnyASCII(s, set string) bool {
	for _, r := range s {
		for _, c := range set {
			if r == c {
				return true
			}
		}
	}
	return false
}

// FuzzIsCleanAbs holds isCleanAbs to filepath.Clean on any path.
func FuzzIsCleanAbs(f *testing.F) {
	for _, p := range []string{"/", "/a/b", "/a/./b", "/a/../b", "//a", "/a/", "/.x", "/..x", "/x.."} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if runtime.GOOS == "windows" {
			t.Skip()
		}
		if got, want := isCleanAbs(p), filepath.IsAbs(p) && filepath.Clean(p) == p; got != want {
			t.Errorf("isCleanAbs(%q) = %v, filepath says %v", p, got, want)
		}
	})
}

// FuzzSpelled holds spelled to the subject it stands in for: where it
// takes a command's source text, that text is its words joined by spaces.
func FuzzSpelled(f *testing.F) {
	for _, s := range append(append([]string(nil), bashSeeds...), walkLines...) {
		f.Add(s)
	}
	f.Add(`a  b`)
	f.Add(`a 'b' "c" d\ e`)
	f.Fuzz(func(t *testing.T, line string) {
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if err != nil {
			return
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			ce, ok := n.(*syntax.CallExpr)
			if !ok || len(ce.Args) == 0 {
				return true
			}
			texts := make([]string, len(ce.Args))
			for i, a := range ce.Args {
				texts[i] = wordOf(line, a).text
			}
			if got, ok := spelled(line, ce.Args, texts); ok && got != strings.Join(texts, " ") {
				t.Errorf("%q: spelled %q, the words join to %q", line, got, strings.Join(texts, " "))
			}
			return true
		})
	})
}
