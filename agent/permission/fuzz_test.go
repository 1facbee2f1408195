package permission

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

var bashSeeds = []string{
	"git status; rm -rf ~",
	"echo $(rm x) `rm y` <(rm z) >(rm w)",
	"if a; then b; elif c; then d; else e; fi",
	"for i in $(seq 3); do echo $i; done > out",
	"while read l; do eval \"$l\"; done < list",
	"case $x in a) rm q;; *) ls;; esac",
	"f() { rm x; }; f",
	"sh -c 'bash -c \"eval rm x\"'",
	"FOO=1 PATH=/x env A=b timeout 5 nice -n 2 command rm x 2>&1 > f",
	"cat <<EOF\n$(rm x)\nEOF",
	"echo ${a[i]} ${!x} ${x@P} $((y+1)) ${s:n}",
	"[[ $x -eq 1 && -v 'a[$(id)]' ]]",
	"for ((i=0;i<3;i++)); do let j=i; done",
	"declare -x A=1 \"$n\"",
	"$'\\x72m' -rf x; {rm,-rf,x}",
	"coproc rm x; time ls",
	"echo 'unterminated",
	"git status --untracked-files=\"$(< ~/.ssh/id_rsa)\"",
	"rg --trace -f/etc/hostname zzz f.txt",
	"ls -la ./.. .//.. / ~",
	"go test -coverprofile=/abs -c -o /abs ./...",
	"cat a/b/../../../x {a,/b} ~/'x' /e*c",
}

// FuzzBashSplit: splitting never panics, and every command it returns has a
// subject rules can match; Evaluate agrees with Explain.
func FuzzBashSplit(f *testing.F) {
	for _, s := range bashSeeds {
		f.Add(s)
	}
	rules := []Rule{
		{Permission: Bash, Pattern: "ls *", Action: Allow},
		{Permission: Bash, Pattern: "rm *", Action: Deny},
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := SplitBash(line)
		if err != nil {
			if cmds != nil {
				t.Errorf("SplitBash(%q) returned commands with an error", line)
			}
			if got := Evaluate(rules, Bash, line); got == Allow {
				t.Errorf("unparseable line %q was allowed", line)
			}
			return
		}
		for _, c := range cmds {
			if c.Subject == "" {
				t.Errorf("SplitBash(%q) returned a command with an empty subject: %+v", line, c)
			}
			if c.Reason == "" && len(c.Args) == 0 && len(c.Writes) == 0 && len(c.Paths) == 0 {
				t.Errorf("SplitBash(%q) returned a command with nothing to decide: %+v", line, c)
			}
			for _, w := range c.Writes {
				if w == "" {
					t.Errorf("SplitBash(%q) returned an empty write target", line)
				}
			}
			if s := c.Suggest(); s != "" && !match(s, c.Subject, false) {
				t.Errorf("suggestion %q does not match its command %q", s, c.Subject)
			}
		}
		if v := Explain(rules, Bash, line); v.Action != Evaluate(rules, Bash, line) {
			t.Errorf("Explain and Evaluate disagree on %q", line)
		}
		// The differential oracle: with every command allowed, a line
		// any of whose words reaches outside, by the oracle's own reading
		// of the syntax tree, must still not be allowed.
		if why := reachesOutside(line); why != "" {
			if got := Evaluate(allowAll, Bash, line); got == Allow {
				t.Errorf("%q reaches outside (%s) but was allowed", line, why)
			}
		}
	})
}

// allowAll allows every command: only the path checks stand in the way.
var allowAll = []Rule{{Permission: "*", Pattern: "*", Action: Ask}, {Permission: Bash, Pattern: "*", Action: Allow}}

// reachesOutside is the fuzz oracle, written apart from the splitter: it
// walks every word of the line (heredoc bodies and assignments aside) and
// says which one is absolute, starts at home, climbs above the start, or
// is expanded by the shell, in the word itself, after an '=', or glued
// to a short option's letter.
func reachesOutside(line string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return ""
	}
	why := ""
	skip := map[*syntax.Word]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Hdoc != nil {
				skip[n.Hdoc] = true
			}
			if n.Op == syntax.WordHdoc || n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
				skip[n.Word] = true
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				skip[n.Args[0]] = true // the command's name
			}
		case *syntax.Assign:
			return false
		case *syntax.Word:
			if skip[n] || why != "" {
				return false
			}
			lit, ok := oracleLit(n)
			if !ok {
				return true
			}
			for _, c := range oracleCandidates(lit) {
				if c == "/dev/null" || c == "/dev/stdout" || c == "/dev/stderr" {
					continue
				}
				if strings.HasPrefix(c, "/") || c == "~" || strings.HasPrefix(c, "~/") || path.Clean(c) == ".." || strings.HasPrefix(path.Clean(c), "../") {
					why = c
				}
			}
		}
		return why == ""
	})
	return why
}

// oracleLit returns a word made only of plain literals and single quotes.
func oracleLit(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `\*?[{$`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func oracleCandidates(w string) []string {
	out := []string{}
	if !strings.HasPrefix(w, "-") {
		out = append(out, w)
	}
	if i := strings.IndexByte(w, '='); i >= 0 {
		out = append(out, w[i+1:])
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' && isLetter(w[1]) {
		out = append(out, w[2:])
	}
	return out
}

// FuzzMatch: matching never panics, its shortcuts agree with the automaton,
// and an escaped string matches itself.
func FuzzMatch(f *testing.F) {
	f.Add("src/**/*.go", "src/a/b.go", true)
	f.Add("git status *", "git statusx", false)
	f.Add("docs/**", "docs", true)
	f.Add("src*", "src/a", true)
	f.Add(`a\*b?**`, "a*bc/d", false)
	f.Fuzz(func(t *testing.T, pattern, subject string, path bool) {
		if got, want := match(pattern, subject, path), matchAutomaton(pattern, subject, path); got != want {
			t.Errorf("match(%q, %q, path=%v) = %v, but the automaton says %v", pattern, subject, path, got, want)
		}
		if !match(escapePattern(subject), subject, path) {
			t.Errorf("escapePattern(%q) does not match itself (path=%v)", subject, path)
		}
	})
}

// FuzzBashChecker is the differential oracle on a real workspace, whose
// links lead out: with every command allowed, a line any of whose words,
// resolved by Outside (not the checker's own resolution), lands outside
// the workspace must not run unasked.
func FuzzBashChecker(f *testing.F) {
	for _, s := range bashSeeds {
		f.Add(s)
	}
	for _, s := range []string{"cat out/etc/passwd", "ls -la up/..", "cat -fout/x", "grep --file=up/y z", "cd in && cat ../../x", "cat in/../out"} {
		f.Add(s)
	}
	root := f.TempDir()
	os.MkdirAll(filepath.Join(root, "in"), 0o755)
	os.Symlink("/", filepath.Join(root, "out"))
	os.Symlink(filepath.Dir(root), filepath.Join(root, "up"))
	c, err := New(f.Context(), Options{Root: root, Rules: append(allowAll, Rule{Permission: Edit, Pattern: "*", Action: Allow})})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words := literalWords(line)
		if words == nil {
			return
		}
		why := ""
		for _, w := range words {
			for _, cand := range oracleCandidates(w) {
				if cand == "" || strings.HasPrefix(cand, "~") || cand == "/dev/null" || cand == "/dev/stdout" || cand == "/dev/stderr" {
					continue
				}
				if out, err := Outside(root, cand); err == nil && out {
					why = cand
				}
			}
		}
		if why == "" {
			return
		}
		if err := c.Check(t.Context(), Call{Permission: Bash, Subjects: []string{line}}); err == nil {
			t.Errorf("%q names %q, outside the workspace once resolved, but ran unasked", line, why)
		}
	})
}

// literalWords returns the plain words of a line the way reachesOutside
// reads them, nil when it does not parse.
func literalWords(line string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil
	}
	words := []string{}
	skip := map[*syntax.Word]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Hdoc != nil {
				skip[n.Hdoc] = true
			}
			if n.Op == syntax.WordHdoc || n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
				skip[n.Word] = true
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				skip[n.Args[0]] = true
			}
		case *syntax.Assign:
			return false
		case *syntax.Word:
			if skip[n] {
				return false
			}
			if w, ok := oracleLit(n); ok {
				words = append(words, w)
			}
		}
		return true
	})
	return words
}
