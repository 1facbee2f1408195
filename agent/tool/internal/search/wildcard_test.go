package search

import "testing"

func TestWildcard(t *testing.T) {
	for _, tt := range []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"**/*.go", []string{"a.go", "x/y/b.go", ".go"}, []string{"a.go/x", "a.gox"}},
		{"*.go", []string{"a.go"}, []string{"x/a.go"}},
		{"src/*.go", []string{"src/a.go"}, []string{"src/x/a.go", "a.go"}},
		{"x/**", []string{"x/a", "x/a/b"}, []string{"x", "y/x/a"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/xb", "b"}},
		{"**", []string{"a", "a/b"}, nil},
		{"a**b", []string{"ab", "axxb"}, []string{"a/b"}},
		{"?.txt", []string{"a.txt"}, []string{"ab.txt", "/.txt"}},
		{"[!a]*", []string{"b", "bcd"}, []string{"a", "abc"}},
		{"[^/]x", []string{"ax"}, nil},
		{"[a-c]", []string{"a", "b", "c"}, []string{"d", "-"}},
		{"[]]", []string{"]"}, []string{"a"}},
		{"[é-ë]", []string{"é", "ê"}, []string{"e"}},
		{"*.{ts,tsx}", []string{"a.ts", "a.tsx"}, []string{"a.t", "a.tsxx"}},
		{`\*`, []string{"*"}, []string{"a"}},
		{`a\[b`, []string{"a[b"}, nil},
		{"main.go", []string{"main.go"}, []string{"x/main.go"}},
	} {
		w, err := CompileWildcard(tt.glob)
		if err != nil {
			t.Errorf("%q: %v", tt.glob, err)
			continue
		}
		for _, p := range tt.yes {
			if !w.Match(p) {
				t.Errorf("%q does not match %q", tt.glob, p)
			}
		}
		for _, p := range tt.no {
			if w.Match(p) {
				t.Errorf("%q matches %q", tt.glob, p)
			}
		}
	}
	for _, bad := range []string{"[a", "{a,b", "a{b{c}}", `a\`, "[z-a]"} {
		if _, err := CompileWildcard(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}
