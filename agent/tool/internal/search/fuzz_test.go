package search

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

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
		"ErrShort(Write|Buffer)": `*search.litFinder "ErrShort"`,
		`func \w+Error\(`:        `*search.litFinder "Error(" with neighbours`,
		`(?i)deadline exceeded`:  `*search.foldFinder "deadline exceeded"`,
		`\d{4}-\d{2}-\d{2}`:      `*search.litFinder "-" with neighbours`,
		`[0-9a-f]{40}`:           `*search.runFinder of 40`,
		`(foo|bar)\d`:            `*search.anyFinder of 2`,
		`TODO|FIXME|XXX`:         `*search.anyFinder of 3`,
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
