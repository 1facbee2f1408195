package permission

import "testing"

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
	})
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
