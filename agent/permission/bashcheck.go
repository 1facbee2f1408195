package permission

import (
	"path"
	"path/filepath"
	"strings"
)

func newLexicalPlace() *place { return &place{cache: map[string]string{}} }

// bashChecks decides every simple command of a command line as bash, its
// dangerous options (see Command.Dangers), every path it names (see Path)
// as pl judges it, and each file it writes through redirection with
// writes.
func bashChecks(rules []Rule, line string, pl *place, writes func(path string) []Check) ([]Check, error) {
	cmds, err := SplitBash(line)
	if err != nil {
		return []Check{decideOpaque(rules, Bash, line, err.Error())}, err
	}
	var checks []Check
	seen := map[checkKey]bool{}
	add := func(cs ...Check) {
		for _, c := range cs {
			k := checkKey{c.Permission, c.Subject, c.Reason}
			if !seen[k] {
				seen[k] = true
				checks = append(checks, c)
			}
		}
	}
	for _, cmd := range cmds {
		switch {
		case cmd.Reason != "":
			add(decideOpaque(rules, Bash, cmd.Subject, cmd.Reason))
		case len(cmd.Args) > 0:
			c := decide(rules, Bash, cmd.Subject)
			c.Suggest = cmd.Suggest()
			add(c)
			for _, d := range cmd.Dangers() {
				add(decideDanger(rules, cmd.Subject, d))
			}
		}
		for _, w := range cmd.Writes {
			add(writes(w)...)
		}
		for _, p := range cmd.Paths {
			add(pathWordChecks(rules, pl, p, cmd.Dirs)...)
		}
	}
	return checks, nil
}

type checkKey struct{ permission, subject, reason string }

// decideDanger decides a command that uses a dangerous option: a rule may
// allow it only by spelling the option out in its pattern.
func decideDanger(rules []Rule, subject string, d Danger) Check {
	c := decide(rules, Bash, subject)
	if c.Action == Allow && (c.Rule == nil || !strings.Contains(c.Rule.Pattern, d.Flag)) {
		c.Action = Ask
	}
	c.Reason = d.Flag + ": " + d.Why + "; only a rule that names " + d.Flag + " allows it"
	c.Suggest = escapePattern(subject)
	return c
}

// pathWordChecks decides one path a command names: external_directory
// where it lands outside the workspace (or cannot be known before the
// command runs), read for a read redirection, protected_path for a write
// to a protected file.
func pathWordChecks(rules []Rule, pl *place, p Path, dirs []string) []Check {
	if p.Expand != "" {
		c := decide(rules, ExternalDirectory, p.Text)
		c.Reason = p.Expand + ", so where it points is not known before it runs"
		return []Check{c}
	}
	if !p.Home && !p.Glob && harmless(path.Clean(p.Text)) {
		return nil
	}
	subs := []string{""}
	if !p.Home && !path.IsAbs(p.Text) {
		subs = append(subs, dirs...)
	}
	var out []Check
	for _, sub := range subs {
		for _, j := range pl.judge(p, sub) {
			out = append(out, landedChecks(rules, pl, p, j)...)
		}
	}
	return out
}

func landedChecks(rules []Rule, pl *place, p Path, j judged) []Check {
	var out []Check
	subject := filepath.ToSlash(j.real)
	switch {
	case j.why != "":
		c := decide(rules, ExternalDirectory, subject)
		c.Reason = j.why
		return []Check{c}
	case j.outside():
		if harmless(j.real) {
			return nil
		}
		c := decide(rules, ExternalDirectory, subject)
		tree := j.real
		if !pl.lexical() && !isDir(tree) {
			tree = filepath.Dir(tree)
		}
		c.Suggest = escapePattern(strings.TrimSuffix(filepath.ToSlash(tree), "/")) + "/**"
		out = append(out, c)
	default:
		subject = j.rel
	}
	if p.Use == UseRead {
		out = append(out, exact(rules, Read, subject))
	}
	if p.Use == UseWrite {
		if why := protectedWhy(rules, j.rel, j.real, pl.gits); why != "" {
			out = append(out, decideProtected(rules, subject, why))
		}
	}
	return out
}
