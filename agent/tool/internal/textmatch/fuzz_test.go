package textmatch

import (
	"errors"
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
		text, crlf := asEdited(content)
		o, n := old, repl
		if crlf {
			o, n = strings.ReplaceAll(o, "\r\n", "\n"), strings.ReplaceAll(n, "\r\n", "\n")
		}
		a, err := Apply(text, o, n, all)
		if err != nil {
			var amb ErrAmbiguous
			if !errors.As(err, &amb) && !errors.As(err, new(errNotFound)) {
				t.Fatalf("unexpected error %T: %v", err, err)
			}
			if amb.lines != nil {
				_ = amb.Error()
			}
			if from, to, ok := ClosestRegion(text, o); ok && (from < 0 || to < from) {
				t.Fatalf("closest region [%d, %d]", from, to)
			}
			return
		}
		if !strings.Contains(a.Text, a.Inserted) {
			t.Fatalf("the result %q lacks the inserted text %q", a.Text, a.Inserted)
		}
		switch a.How {
		case "", "ignoring trailing whitespace", "by its first and last lines":
			if a.Inserted != n {
				t.Fatalf("%q inserted %q, want newString %q", a.How, a.Inserted, n)
			}
		case "ignoring indentation":
			got, want := strings.Split(a.Inserted, "\n"), strings.Split(n, "\n")
			if len(got) != len(want) {
				t.Fatalf("re-indenting changed the line count: %q from %q", a.Inserted, n)
			}
			for i := range got {
				if strings.TrimLeft(got[i], " \t") != strings.TrimLeft(want[i], " \t") {
					t.Fatalf("re-indenting changed line %d: %q from %q", i, got[i], want[i])
				}
			}
		default:
			if a.Inserted != unescape(n) {
				t.Fatalf("%q inserted %q, want %q", a.How, a.Inserted, unescape(n))
			}
		}
		if a.Count < 1 || !all && a.Count != 1 {
			t.Fatalf("count %d with replaceAll %v", a.Count, all)
		}
		_, _ = ChangedLines(a.Text, a)
	})
}

// asEdited is a file's content as the edit tool hands it to Apply: without
// its byte-order mark, and with LF line ends when every line end is CRLF.
func asEdited(b []byte) (text string, crlf bool) {
	text = strings.TrimPrefix(string(b), "\ufeff")
	if n := strings.Count(text, "\r\n"); n > 0 && n == strings.Count(text, "\n") {
		return strings.ReplaceAll(text, "\r\n", "\n"), true
	}
	return text, false
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
		ops, err := ParsePatch(patch)
		if err != nil {
			return
		}
		for _, op := range ops {
			if op.Path == "" {
				t.Fatalf("an operation without a path: %+v", op)
			}
			if op.Kind != OpUpdate {
				continue
			}
			out, err := ApplyChunks(text, op.Chunks)
			if err != nil {
				continue
			}
			for _, c := range op.Chunks {
				for k, l := range c.new {
					if c.ctx[k] < 0 && !strings.Contains(out, l) {
						t.Fatalf("added line %q missing from %q", l, out)
					}
				}
			}
		}
	})
}
