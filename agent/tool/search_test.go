package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// searchTree writes a workspace that exercises every ignore rule, with
// distinct modification times (a.go newest).
func searchTree(t *testing.T, h *harness) {
	t.Helper()
	files := map[string]string{
		".gitignore":                  "node_modules/\n*.log\n/build\n!keep.log\ndocs/**/draft*\n\\#hash\n",
		".darmanignore":               "secrets/\n",
		".hidden/conf.go":             "package hidden // TODO hidden\n",
		"a.go":                        "package a\n\nfunc A() error { return nil } // TODO a\n",
		"b.go":                        "package a\n// TODO b\nfunc B() {}\r\n",
		"build/out.go":                "package build // TODO build\n",
		"cmd/build/main.go":           "package main // TODO nested build dir is not /build\n",
		"debug.log":                   "TODO log\n",
		"keep.log":                    "TODO keep\n",
		"#hash":                       "TODO hash\n",
		"docs/guide/draft-1.md":       "TODO draft\n",
		"docs/guide/final.md":         "TODO final\n",
		"node_modules/x/index.js":     "TODO module\n",
		"secrets/key.txt":             "TODO secret\n",
		"sub/.gitignore":              "*.tmp\n!important.tmp\n",
		"sub/x.tmp":                   "TODO tmp\n",
		"sub/important.tmp":           "TODO important\n",
		"sub/.ignore":                 "ignored-by-dot.txt\n",
		"sub/ignored-by-dot.txt":      "TODO dot\n",
		"sub/deep/.rgignore":          "!x.tmp\n",
		"sub/deep/x.tmp":              "TODO deep tmp re-included by .rgignore\n",
		"sub/deep/more/y.go":          "package more // TODO y\n",
		"vendor/repo/.git/config":     "TODO git config\n",
		"vendor/repo/.gitignore":      "*.gen.go\n",
		"vendor/repo/z.gen.go":        "package z // TODO gen\n",
		"vendor/repo/z.go":            "package z // TODO z\n",
		"bin/tool":                    "TODO\x00binary\n",
		"unicode/ünï.txt":             "TODO Grüße, 数字 ١٢٣\n",
		"long/line.txt":               strings.Repeat("x", 700) + " TODO long\n",
		"windows/crlf.txt":            "TODO crlf\r\nsecond\r\n",
		"Makefile":                    "all:\n\t@echo TODO make\n",
		"sub/deep/more/Case.TXT":      "todo in lower case\nToDo mixed\n",
		".git/HEAD":                   "TODO real git dir\n",
		"docs/guide/drafts/other.md":  "TODO under drafts dir\n",
		"notes/2024/jan.md":           "TODO jan\n",
		"notes/2024/feb.md":           "nothing here\n",
		"weird name/with space.go":    "package weird // TODO space\n",
		"sub/deep/more/emptyfile.txt": "",
	}
	for name, content := range files {
		h.write(name, content)
	}
	// Distinct times, in a fixed order, so newest-first is well defined.
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for k, name := range names {
		setMtime(t, h.path(name), 1000+k*10)
	}
	setMtime(t, h.path("a.go"), 1)
	if err := os.Symlink("a.go", h.path("link.go")); err != nil {
		t.Fatal(err)
	}
}

func needRipgrep(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg is not on PATH: the ripgrep side of the comparison cannot run")
	}
	return p
}

// twoEngines is one workspace seen through the ripgrep tools and the Go
// tools.
type twoEngines struct {
	rg, goh *harness
}

func newTwoEngines(t *testing.T) twoEngines {
	rg := needRipgrep(t)
	a := newHarness(t, tool.Options{Ripgrep: rg})
	b := newHarness(t, tool.Options{NoRipgrep: true})
	// Both look at the same tree.
	b.root, b.ws = a.root, a.ws
	return twoEngines{a, b}
}

// same runs a tool through both engines and fails unless they agree; it
// returns the output.
func (e twoEngines) same(t *testing.T, name string, input map[string]any) string {
	t.Helper()
	r1, r2 := e.rg.run(name, input), e.goh.run(name, input)
	if r1.Output != r2.Output || r1.IsError != r2.IsError {
		t.Errorf("%s %v differs:\n--- rg:\n%s\n--- go:\n%s", name, input, r1.Output, r2.Output)
	}
	var m1, m2 map[string]any
	json.Unmarshal(r1.Metadata, &m1)
	json.Unmarshal(r2.Metadata, &m2)
	// glob and list walk in Go whichever engine grep uses.
	want := [2]string{"rg", "go"}
	if name != "grep" {
		want[0] = "go"
	}
	if m1["engine"] != want[0] || m2["engine"] != want[1] {
		t.Errorf("%s engines: %v and %v, want %v", name, m1["engine"], m2["engine"], want)
	}
	return r1.Output
}

func TestSearchEnginesAgree(t *testing.T) {
	e := newTwoEngines(t)
	searchTree(t, e.rg)

	all := e.same(t, "glob", map[string]any{"pattern": "*"})
	for _, want := range []string{"a.go", "b.go", ".hidden/conf.go", "keep.log", "cmd/build/main.go", "docs/guide/final.md",
		"sub/important.tmp", "sub/deep/x.tmp", "vendor/repo/z.go", "bin/tool", ".gitignore"} {
		if !containsLine(all, want) {
			t.Errorf("glob * lacks %s", want)
		}
	}
	for _, unwanted := range []string{"node_modules/x/index.js", "debug.log", "build/out.go", "secrets/key.txt", "sub/x.tmp",
		"sub/ignored-by-dot.txt", "vendor/repo/z.gen.go", ".git/HEAD", "vendor/repo/.git/config", "link.go", "#hash", "docs/guide/draft-1.md",
		"docs/guide/drafts/other.md"} {
		if containsLine(all, unwanted) {
			t.Errorf("glob * lists %s, which is ignored", unwanted)
		}
	}
	if first, _, _ := strings.Cut(all, "\n"); first != "a.go" {
		t.Errorf("glob is not newest first: %q", first)
	}

	for _, in := range []map[string]any{
		{"pattern": "*.go"},
		{"pattern": "**/*.go"},
		{"pattern": "sub/**"},
		{"pattern": "*.{md,txt}"},
		{"pattern": "*.go", "path": "sub"},
		{"pattern": "docs/*/*.md"},
		{"pattern": "[ab].go"},
		{"pattern": "nothing*"},
	} {
		e.same(t, "glob", in)
	}

	out := e.same(t, "grep", map[string]any{"pattern": "TODO"})
	for _, want := range []string{"a.go:3: func A() error { return nil } // TODO a", "b.go:2: // TODO b", "windows/crlf.txt:1: TODO crlf",
		"unicode/ünï.txt:1: TODO Grüße, 数字 ١٢٣", "keep.log:1: TODO keep"} {
		if !containsLine(out, want) {
			t.Errorf("grep TODO lacks %q", want)
		}
	}
	if strings.Contains(out, "binary") || strings.Contains(out, "module") || strings.Contains(out, "secret") {
		t.Errorf("grep found ignored or binary files:\n%s", out)
	}
	if !strings.Contains(out, strings.Repeat("x", 500)+" …") || strings.Contains(out, strings.Repeat("x", 501)) {
		t.Errorf("the long line is not cut at 500 bytes")
	}
	for _, in := range []map[string]any{
		{"pattern": `func\s+\w+\(`},
		{"pattern": `(?i)todo`},
		{"pattern": `(?i)TODO\s+\w+`, "include": "*.go"},
		{"pattern": `TODO`, "include": "*.{md,txt}"},
		{"pattern": `TODO`, "include": "sub/**/*.tmp"},
		{"pattern": `^package \w+$`},
		{"pattern": `\d`},
		{"pattern": `\bToDo\b`},
		{"pattern": `[^\x00-\x7f]+`},
		{"pattern": `crlf$`},
		{"pattern": `^$`},
		{"pattern": `.`},
		{"pattern": `(?s)TODO.second`},
		{"pattern": `TODO`, "path": "sub"},
		{"pattern": `TODO`, "path": "a.go"},
		{"pattern": `TODO`, "path": "debug.log"},
		{"pattern": `TODO`, "path": "a.go", "include": "*.md"},
		{"pattern": `TODO`, "path": "a.go", "include": "*.go"},
		{"pattern": `x{3,}\s*TODO`},
		{"pattern": `nothing matches this`},
		{"pattern": `a|b|c`},
		{"pattern": `(?i)deadline|TODO a`},
	} {
		e.same(t, "grep", in)
	}

	tree := e.same(t, "list", map[string]any{})
	if !strings.Contains(tree, "  cmd/\n    build/\n      main.go\n") || strings.Contains(tree, "node_modules") {
		t.Errorf("list:\n%s", tree)
	}
	e.same(t, "list", map[string]any{"path": "sub"})
	e.same(t, "list", map[string]any{"ignore": []string{"docs/", "*.md", "vendor"}})
}

func containsLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestSearchEnginesAgreeOnRandomTrees builds trees with random ignore
// files and checks that both engines search the same files (grep for the
// line every file but the ignore files holds), and that list shows those
// files.
func TestSearchEnginesAgreeOnRandomTrees(t *testing.T) {
	rgPath := needRipgrep(t)
	r := rand.New(rand.NewPCG(4, 2))
	names := []string{"a", "b", "c.go", "d.txt", "e.log", ".f", "g.md", "h_test.go"}
	dirs := []string{"", "x/", "x/y/", "z/", "x/z/", "y/"}
	pats := []string{"*.go", "!h_test.go", "x/", "/z", "y", "*.log", "!e.log", "x/**/c.go", "**/y/*", "/x/y/", "[cd].*", "*.{md,txt}",
		"!x/", "g.md", ".f", "z/*", "a", "!/a", "**/b", "x/*/", "*_test.go", "?.txt"}
	for round := range 30 {
		dir := t.TempDir()
		for _, d := range dirs {
			for _, n := range names {
				if r.IntN(3) > 0 {
					os.MkdirAll(filepath.Join(dir, d), 0o755)
					os.WriteFile(filepath.Join(dir, d, n), []byte("x\n"), 0o644)
				}
			}
			for _, ig := range []string{".gitignore", ".ignore", ".rgignore"} {
				if r.IntN(3) == 0 {
					var lines []string
					for range 1 + r.IntN(4) {
						lines = append(lines, pats[r.IntN(len(pats))])
					}
					os.MkdirAll(filepath.Join(dir, d), 0o755)
					os.WriteFile(filepath.Join(dir, d, ig), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
				}
			}
		}
		if r.IntN(2) == 0 {
			os.WriteFile(filepath.Join(dir, ".darmanignore"), []byte(pats[r.IntN(len(pats))]+"\n"), 0o644)
		}
		if r.IntN(4) == 0 {
			os.MkdirAll(filepath.Join(dir, "x", ".git"), 0o755)
		}
		var outs [3]string
		for i, opts := range []tool.Options{{Ripgrep: rgPath}, {NoRipgrep: true}} {
			h := newHarness(t, opts)
			h.root, h.ws = dir, tool.NewDisk(dir)
			outs[i] = grepFiles(h.ok("grep", map[string]any{"pattern": "^x$"}).Output)
			if i == 1 {
				outs[2] = listFiles(h.ok("list", map[string]any{}).Output)
			}
		}
		if outs[0] != outs[1] || outs[1] != outs[2] {
			var ignores strings.Builder
			filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() && strings.Contains(info.Name(), "ignore") {
					b, _ := os.ReadFile(p)
					fmt.Fprintf(&ignores, "%s: %q\n", p[len(dir):], b)
				}
				return nil
			})
			t.Errorf("round %d: rg and Go differ.\n%s--- grep, rg:\n%s\n--- grep, go:\n%s\n--- list:\n%s", round, ignores.String(), outs[0], outs[1], outs[2])
		}
	}
}

// grepFiles is the files of grep's output, sorted, a line each.
func grepFiles(out string) string {
	var files []string
	for _, l := range strings.Split(out, "\n")[1:] {
		if f, _, ok := strings.Cut(l, ":"); ok {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return strings.Join(files, "\n")
}

// listFiles is the files of list's tree but the ignore files,
// slash-separated, sorted, a line each.
func listFiles(out string) string {
	var files, dirs []string
	for _, l := range strings.Split(out, "\n")[1:] {
		name := strings.TrimLeft(l, " ")
		depth := (len(l) - len(name)) / 2
		dirs = dirs[:min(len(dirs), depth-1)]
		if d, ok := strings.CutSuffix(name, "/"); ok {
			dirs = append(dirs, d)
		} else if name != "" && !strings.HasPrefix(name, "(") && !strings.HasSuffix(name, "ignore") {
			files = append(files, strings.Join(append(slices.Clone(dirs), name), "/"))
		}
	}
	slices.Sort(files)
	return strings.Join(files, "\n")
}

func TestSearchPermissionsAndErrors(t *testing.T) {
	h := newHarness(t, tool.Options{NoRipgrep: true})
	h.write("src/a.go", "package a\n")
	h.ok("grep", map[string]any{"pattern": "package", "path": "src"})
	calls := h.permissions()
	if len(calls) != 1 || calls[0].Permission != permission.Grep || calls[0].Subjects[0] != h.path("src") {
		t.Errorf("permission calls %+v", calls)
	}
	h.fails("grep", map[string]any{"pattern": "(unclosed"}, "RE2", "missing closing )")
	h.fails("grep", map[string]any{"pattern": "x", "include": "[a"}, "include is not a valid glob")
	h.fails("glob", map[string]any{"pattern": "{a,b"}, "not a valid glob")
	h.fails("glob", map[string]any{"pattern": "*", "path": "src/a.go"}, "not a directory")
	h.fails("list", map[string]any{"path": "nowhere"}, "does not exist")
	h.deny(permission.Glob, "no looking")
	h.fails("glob", map[string]any{"pattern": "*"}, "no looking")
	h.deny(permission.List, "no listing")
	h.fails("list", map[string]any{}, "no listing")
	if res := h.ok("grep", map[string]any{"pattern": "absent"}); res.Output != "No matches." {
		t.Errorf("no match: %q", res.Output)
	}
}

func TestSearchCaps(t *testing.T) {
	h := newHarness(t, tool.Options{NoRipgrep: true})
	for i := range 150 {
		h.write(fmt.Sprintf("f%03d.txt", i), "hit\nhit\n")
	}
	res := h.ok("grep", map[string]any{"pattern": "hit"})
	if !strings.HasPrefix(res.Output, "Found 300 matching lines in 150 files; showing 100") || strings.Count(res.Output, ":1: hit")+strings.Count(res.Output, ":2: hit") != 100 {
		t.Errorf("grep cap: %q", res.Output[:200])
	}
	res = h.ok("glob", map[string]any{"pattern": "*.txt"})
	if !strings.Contains(res.Output, "Showing 100 of 150 files") || strings.Count(res.Output, ".txt\n") != 100 {
		t.Errorf("glob cap: %q", res.Output[len(res.Output)-200:])
	}
	for i := range 150 {
		h.write(fmt.Sprintf("d/e/g%03d.txt", i), "")
	}
	for i := range 10 {
		h.write(fmt.Sprintf("d/e/f/z%03d.txt", i), "")
	}
	res = h.ok("list", map[string]any{})
	if !strings.Contains(res.Output, "Showing 200 of 310 files, the shallowest first") || !strings.Contains(res.Output, "g049") || strings.Contains(res.Output, "g050") || strings.Contains(res.Output, "z00") {
		t.Errorf("list cap: %q", res.Output[len(res.Output)-200:])
	}
}

// BenchmarkGrepGOROOT searches Go's own source tree with grep, through the
// tool, once with ripgrep and once with the Go search, so the two can be
// compared in one run (goal: Go within 1.5× of rg).
func BenchmarkGrepGOROOT(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go env GOROOT")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	engines := []struct {
		name string
		opts tool.Options
	}{{"go", tool.Options{NoRipgrep: true}}}
	if rg, err := exec.LookPath("rg"); err == nil {
		engines = append(engines, struct {
			name string
			opts tool.Options
		}{"rg", tool.Options{Ripgrep: rg}})
	}
	patterns := map[string]string{
		"literal":      "ErrUnexpectedEOF",
		"regex":        `func \w+Error\(`,
		"ignore-case":  `(?i)deadline exceeded`,
		"weak-literal": `\d{4}-\d{2}-\d{2}`,     // "-" is everywhere; its neighbours are not
		"class-run":    `[0-9a-f]{40}`,          // no literal, but 40 bytes of one class
		"no-prefilter": `\b[a-z]+[A-Z][a-z]+\b`, // nothing to look for first: the pattern runs on every line
	}
	for _, name := range []string{"literal", "regex", "ignore-case", "weak-literal", "class-run", "no-prefilter"} {
		input, _ := json.Marshal(map[string]string{"pattern": patterns[name]})
		for _, e := range engines {
			b.Run(name+"/"+e.name, func(b *testing.B) {
				var grep tool.Tool
				for _, tl := range tool.Builtins(e.opts) {
					if tl.Info().Name == "grep" {
						grep = tl
					}
				}
				env := &tool.Env{Workspace: tool.NewDisk(src), Permit: func(context.Context, permission.Call) error { return nil }}
				// CPU time, this process's and rg's, is steadier than wall
				// time on a shared machine.
				before := cpuTime()
				for b.Loop() {
					res, err := grep.Run(context.Background(), env, input)
					if err != nil || res.IsError {
						b.Fatal(res.Output, err)
					}
				}
				b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// TestGrepSkipsLateBinary: a file whose NUL byte comes after ripgrep's
// first read is binary for both engines.
func TestGrepSkipsLateBinary(t *testing.T) {
	e := newTwoEngines(t)
	e.rg.write("late.bin.txt", "MATCH\n"+strings.Repeat("x", 100<<10)+"\n\x00\n")
	e.rg.write("text.txt", "MATCH\n"+strings.Repeat("y", 100<<10)+"\n")
	if out := e.same(t, "grep", map[string]any{"pattern": "MATCH"}); out != "Found 1 matching lines in 1 files.\ntext.txt:1: MATCH" {
		t.Errorf("output %q", out)
	}
}

// TestGlobShowsTheNewestOfMany: with far more matches than glob shows,
// spread over directories and with many equal times, glob still shows the
// 100 newest in order (newest first, then by path), through both engines.
func TestGlobShowsTheNewestOfMany(t *testing.T) {
	e := newTwoEngines(t)
	r := rand.New(rand.NewPCG(36, 1))
	type file struct {
		rel string
		ago int
	}
	var files []file
	for i := range 900 {
		rel := fmt.Sprintf("d%d/e%d/f%03d.txt", i%7, i%3, i)
		if i%5 == 0 {
			rel = fmt.Sprintf("top%03d.txt", i)
		}
		e.rg.write(rel, "x\n")
		files = append(files, file{rel, 100 + r.IntN(60)*10}) // 60 distinct times: ties
	}
	e.rg.write("d1/other.md", "not matched\n")
	now := time.Now()
	for _, f := range files {
		when := now.Add(-time.Duration(f.ago) * time.Second)
		if err := os.Chtimes(e.rg.path(f.rel), when, when); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(files, func(a, b file) int {
		if a.ago != b.ago {
			return a.ago - b.ago
		}
		return strings.Compare(a.rel, b.rel)
	})
	var want strings.Builder
	for _, f := range files[:100] {
		want.WriteString(f.rel + "\n")
	}
	want.WriteString("(Showing 100 of 900 files, newest first. Narrow the pattern or the path to see the rest.)")
	if got := e.same(t, "glob", map[string]any{"pattern": "**/*.txt"}); got != want.String() {
		t.Errorf("glob of 900 files:\n%s\nwant:\n%s", got, want.String())
	}
}

// TestGrepShowsTheNewestFilesLines: with more matching lines than grep
// shows, both engines count every line and show the first lines of the
// newest files, the last shown file's cut where the 100 end (rg counts,
// and the lines of the shown files are read apart).
func TestGrepShowsTheNewestFilesLines(t *testing.T) {
	e := newTwoEngines(t)
	now := time.Now()
	total := 0
	var want strings.Builder
	shown := 0
	for i := range 60 {
		rel := fmt.Sprintf("p%d/f%02d.txt", i%4, i)
		var body strings.Builder
		n := 3 + i%5
		for k := range n {
			fmt.Fprintf(&body, "hit %d of %s\nother line\n", k, rel)
			if shown < 100 {
				fmt.Fprintf(&want, "%s:%d: hit %d of %s\n", rel, 2*k+1, k, rel)
				shown++
			}
		}
		total += n
		e.rg.write(rel, body.String())
		when := now.Add(-time.Duration(i) * time.Minute) // f00 newest
		if err := os.Chtimes(e.rg.path(rel), when, when); err != nil {
			t.Fatal(err)
		}
	}
	head := fmt.Sprintf("Found %d matching lines in 60 files; showing 100, from the newest files first. Narrow the pattern, path or include to see the rest.\n", total)
	for _, in := range []map[string]any{{"pattern": `^hit \d+`}, {"pattern": "hit", "include": "*.txt"}} {
		if got := e.same(t, "grep", in); got != head+strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("grep %v:\n%s\nwant:\n%s", in, got, head+want.String())
		}
	}
}

// TestSearchStopsWhenCancelled: a call whose context ends stops the walk's
// workers (none is left waiting) and gives the context's error, not a
// partial listing, through both engines.
func TestSearchStopsWhenCancelled(t *testing.T) {
	e := newTwoEngines(t)
	for i := range 400 {
		e.rg.write(fmt.Sprintf("d%d/e%d/f%d.go", i%9, i%4, i), "package x // TODO\n")
	}
	for _, h := range []*harness{e.rg, e.goh} {
		for _, call := range []struct {
			name  string
			input map[string]any
		}{{"glob", map[string]any{"pattern": "**/*.go"}}, {"list", map[string]any{}}, {"grep", map[string]any{"pattern": "TODO"}}} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			res, err := h.runCtx(ctx, call.name, call.input)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s after cancel: %v, %q", call.name, err, res.Output)
			}
		}
	}
}
