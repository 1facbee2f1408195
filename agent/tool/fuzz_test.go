package tool

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// FuzzEdit drives the edit matcher chain, with the file's text form (BOM,
// CRLF) taken off and put back as the edit tool does: it must never panic,
// must fail only with "not found" or "ambiguous", and when it succeeds the
// new text must hold what newString became, which is newString itself
// except where a tolerant matcher says how it adapted it.
func FuzzEdit(f *testing.F) {
	f.Add([]byte("package main\n\nfunc main() {\n\tprintln(1)\n}\n"), "println(1)", "println(2)", false)
	f.Add([]byte("a  \nb\t\nc\n"), "a\nb", "x\ny", false)
	f.Add([]byte("func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"), "    if x {\n        y()\n    }", "    if x {\n        z()\n    }", false)
	f.Add([]byte("say(\"hi\")\n"), `say(\"hi\")`, `say(\"bye\")`, false)
	f.Add([]byte("func g() {\n\ta := 1\n\treturn a\n}\n"), "func g() {\n\ta := 2\n\treturn a\n}", "func g() {}", false)
	f.Add([]byte("\ufeffx\r\ny\r\nx\r\n"), "x", "z", true)
	f.Add([]byte("x\nx\n"), "x\n", "", false)
	f.Add([]byte(""), "a", "b", false)
	f.Fuzz(func(t *testing.T, content []byte, old, repl string, all bool) {
		text, form := decodeText(content)
		o, n := form.normalize(old), form.normalize(repl)
		a, err := applyEdit(text, o, n, all)
		if err != nil {
			var amb errAmbiguous
			if !errors.As(err, &amb) && !errors.As(err, new(errNotFound)) {
				t.Fatalf("unexpected error %T: %v", err, err)
			}
			if amb.lines != nil {
				_ = amb.Error()
			}
			if from, to, ok := closestRegion(text, o); ok {
				_ = numberedLines(text, from-2, to+2)
			}
			return
		}
		if !strings.Contains(a.text, a.inserted) {
			t.Fatalf("the result %q lacks the inserted text %q", a.text, a.inserted)
		}
		switch a.how {
		case "", "ignoring trailing whitespace", "by its first and last lines":
			if a.inserted != n {
				t.Fatalf("%q inserted %q, want newString %q", a.how, a.inserted, n)
			}
		case "ignoring indentation":
			got, want := strings.Split(a.inserted, "\n"), strings.Split(n, "\n")
			if len(got) != len(want) {
				t.Fatalf("re-indenting changed the line count: %q from %q", a.inserted, n)
			}
			for i := range got {
				if strings.TrimLeft(got[i], " \t") != strings.TrimLeft(want[i], " \t") {
					t.Fatalf("re-indenting changed line %d: %q from %q", i, got[i], want[i])
				}
			}
		default:
			if a.inserted != unescape(n) {
				t.Fatalf("%q inserted %q, want %q", a.how, a.inserted, unescape(n))
			}
		}
		if a.count < 1 || !all && a.count != 1 {
			t.Fatalf("count %d with replaceAll %v", a.count, all)
		}
		_, _ = changedLines(a.text, a)
	})
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb`:      "a\nb",
		`\t\"x\"`:   "\t\"x\"",
		`back\\`:    `back\`,
		`\q`:        `\q`,
		`end\`:      `end\`,
		"\\`\\$\\'": "`$'",
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSimilarity(t *testing.T) {
	if s := similarity("abc", "abc"); s != 1 {
		t.Errorf("equal strings: %v", s)
	}
	if s := similarity("kitten", "sitting"); s < 0.5 || s > 0.6 {
		t.Errorf("kitten/sitting: %v (distance 3 of 7)", s)
	}
	long := strings.Repeat("line\n", 2000)
	if s := similarity(long, long+"extra"); s < 0.99 {
		t.Errorf("long near-equal texts: %v", s)
	}
}

// FuzzPatch parses arbitrary patches and applies their updates to
// arbitrary text: no panic, and a chunk that applies leaves its added lines
// in the result.
func FuzzPatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n@@ def f():\n-    x\n+    y\n*** End of File\n*** End Patch", "def f():\n    x\n")
	f.Add("*** Begin Patch\n*** Add File: b\n+hi\n*** Delete File: c\n*** End Patch", "")
	f.Add("apply_patch <<EOF\n*** Begin Patch\n*** Update File: a\n*** Move to: b\n \n-a\n+b\n\n*** End Patch\nEOF", "\na\n")
	f.Fuzz(func(t *testing.T, patch, text string) {
		ops, err := parsePatch(patch)
		if err != nil {
			return
		}
		for _, op := range ops {
			if op.path == "" {
				t.Fatalf("an operation without a path: %+v", op)
			}
			if op.kind != opUpdate {
				continue
			}
			out, err := applyChunks(text, op.chunks)
			if err != nil {
				continue
			}
			for _, c := range op.chunks {
				for k, l := range c.new {
					if c.ctx[k] < 0 && !strings.Contains(out, l) {
						t.Fatalf("added line %q missing from %q", l, out)
					}
				}
			}
		}
	})
}

// FuzzGrepLines checks grep's line matcher, with its literal prefilters and
// its many-lines-at-once form, against the plain way: the pattern run on
// each line by itself.
func FuzzGrepLines(f *testing.F) {
	f.Add(`\d{4}-\d{2}-\d{2}`, "date 2024-01-02\nno-date 1-2\n2024-1-02-03-04\n")
	f.Add(`(?i)deadline exceeded`, "Deadline Exceeded\nDEADLINE EXCEEDED!\ndeadline\n")
	f.Add(`(?i)kelvin`, "\u212aelvin\nKELVIN\n")
	f.Add(`^$`, "\n\na\n\n")
	f.Add(`a$`, "a\r\nba\nab\n")
	f.Add(`[^a]`, "a\n\naa\nb")
	f.Add(`x*`, "")
	f.Add(`(?s).`, "a\n\n")
	f.Add(`\bfoo\b`, "foo\nfoobar\n(foo)\n")
	f.Add(`(foo|bar)\d`, "foo1\nbar\nxbar2y\nfoo\n")
	f.Add(`[0-9a-f]{4}-x`, "dead-x\nbeef-\n12345-x\n")
	f.Add(`(?i)(abc|xyz)+`, "ABC\nxYzabc\nab\n")
	f.Add(`a-b|c-d`, "a-b\nc-d\na-d\n")
	f.Fuzz(func(t *testing.T, pattern, data string) {
		m, err := compileLineMatcher(pattern)
		if err != nil {
			return
		}
		re := regexp.MustCompile(pattern)
		var want []int
		// An empty file has no lines; a final line end starts none.
		lines := strings.Split(data, "\n")
		if strings.HasSuffix(data, "\n") || data == "" {
			lines = lines[:len(lines)-1]
		}
		for i, l := range lines {
			if re.MatchString(l) {
				want = append(want, i+1)
			}
		}
		var got []int
		n := m.scan([]byte(data), func(no int, line []byte) {
			got = append(got, no)
			if string(line) != lines[no-1] {
				t.Fatalf("line %d given as %q, is %q", no, line, lines[no-1])
			}
		})
		if n != len(got) || !slices.Equal(got, want) {
			t.Fatalf("pattern %q on %q: lines %v, want %v", pattern, data, got, want)
		}
	})
}

// TestPlanFinder checks that grep's common shapes of pattern get a fast
// finder, not a scan of every line with the pattern.
func TestPlanFinder(t *testing.T) {
	for pattern, want := range map[string]string{
		"ErrShort(Write|Buffer)": `*tool.litFinder "ErrShort"`,
		`func \w+Error\(`:        `*tool.litFinder "Error(" with neighbours`,
		`(?i)deadline exceeded`:  `*tool.foldFinder "deadline exceeded"`,
		`\d{4}-\d{2}-\d{2}`:      `*tool.litFinder "-" with neighbours`,
		`[0-9a-f]{40}`:           `*tool.runFinder of 40`,
		`(foo|bar)\d`:            `*tool.anyFinder of 2`,
		`TODO|FIXME|XXX`:         `*tool.anyFinder of 3`,
		`\w+`:                    `none`,
		`.*`:                     `none`,
	} {
		tree, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got := "none"
		switch f := planFinder(tree.Simplify()).(type) {
		case *litFinder:
			got = fmt.Sprintf("%T %q", f, f.lit)
			if f.before != nil || f.after != nil {
				got += " with neighbours"
			}
		case *foldFinder:
			got = fmt.Sprintf("%T %q", f, f.lit)
		case *runFinder:
			got = fmt.Sprintf("%T of %d", f, f.n)
		case *anyFinder:
			got = fmt.Sprintf("%T of %d", f, len(f.alts))
		}
		if got != want {
			t.Errorf("%s: finder %s, want %s", pattern, got, want)
		}
	}
}
