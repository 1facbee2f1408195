package prompt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: x\ndescription: y\n---\nbody",
		"---\ndescription: >-\n  a\n\n   b\n  c\n---\n",
		"---\nd: |+2\n  a\n\n---\n",
		"---\nd: \"a\\u00e9\\x41\\U0001F600\\\n  b\"\n---\n",
		"---\nd: 'it''s\n\n  x'\n---\n",
		"---\nk:\n  - a\n  - b: c\n---\n",
		"---\r\nk: v # c\r\n---\r\n",
		"\uFEFF---\n\"q\": 'v'\n---",
		"---\n  x\n---\n",
		"---\nk: \"unclosed\n---\n",
		"---\n- a\n---\n",
		"---\nk: v\nk: w\n---\n",
		"no front matter",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fields, body, err := splitFrontmatter(src)
		if err != nil {
			if fields != nil || body != "" {
				t.Fatalf("error %v with fields %q, body %q", err, fields, body)
			}
			return
		}
		trimmed := strings.TrimPrefix(src, "\uFEFF")
		if !strings.HasSuffix(trimmed, body) {
			t.Fatalf("body %q is not the end of the file", body)
		}
		if fields == nil && body != trimmed {
			t.Fatalf("no front matter, yet the body %q is not the whole file", body)
		}
	})
}

func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{
		`"a b" c`, `'a "b"' c`, `"a \"q\" w"`, `"a"'b c'd`, `don't`, `"open`,
		`a\ b`, `C:\dir`, `\"x\"`, "é\u00a0ü", `""`, `\`, `"\`, "a\tb\nc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := SplitArgs(s)
		if !strings.ContainsAny(s, `"'\`) && !slices.Equal(words, strings.Fields(s)) {
			t.Fatalf("without quotes or backslashes SplitArgs(%q) = %q; want strings.Fields", s, words)
		}
		for _, w := range words {
			if len(w) > len(s) {
				t.Fatalf("word %q longer than the input", w)
			}
		}
		if got := substituteArgs("$ARGUMENTS", s); got != strings.TrimSpace(s) {
			t.Fatalf("$ARGUMENTS = %q; want the trimmed input", got)
		}
		all := substituteArgs("$1", s)
		if want := strings.Join(words, " "); all != want {
			t.Fatalf("$1 alone = %q; want every word, %q", all, want)
		}
	})
}

func FuzzExpand(f *testing.F) {
	root := f.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("A ``` B"), 0o644); err != nil {
		f.Fatal(err)
	}
	for _, s := range [][2]string{
		{"$1 @a.txt !`echo $2`", `x "y z"`},
		{"\\@a.txt \\!`x` @ (@a.txt) @missing", ""},
		{"!`", "$ARGUMENTS"},
		{"$ARGUMENTS$1$2$10$0$", "@a.txt"},
	} {
		f.Add(s[0], s[1])
	}
	run := func(_ context.Context, command string) (string, error) { return "ran " + command, nil }
	f.Fuzz(func(t *testing.T, template, args string) {
		c := Command{Name: "f", Template: template}
		out, err := c.Expand(context.Background(), args, ExpandOptions{Root: root, Run: run, Attachable: func(_, path string) (string, error) { return path, nil }})
		if err != nil {
			if out != "" || !strings.HasPrefix(err.Error(), "command /f: ") {
				t.Fatalf("error %q with output %q", err, out)
			}
			return
		}
		if !strings.ContainsAny(template+args, "$@!\\") && out != template {
			t.Fatalf("a template with nothing to expand changed: %q", out)
		}
	})
}
