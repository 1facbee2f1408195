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
	set := checkSet{checks: make([]Check, 0, len(cmds)+len(cmds)/2+4)}
	for _, cmd := range cmds {
		switch {
		case cmd.Reason != "":
			set.add(decideOpaque(rules, Bash, cmd.Subject, cmd.Reason))
		case len(cmd.Args) > 0:
			c := decide(rules, Bash, cmd.Subject)
			c.Suggest = cmd.Suggest()
			if c.Action == Allow {
				if shadow := pl.pathShadow(cmd.Args[0]); shadow != "" {
					c.Action = Ask
					c.Reason = cmd.Args[0] + " runs " + filepath.ToSlash(shadow) + ", a file in the workspace on PATH, not the program the rule allows"
				}
			}
			set.add(c)
			for _, d := range cmd.Dangers() {
				set.add(decideDanger(rules, cmd.Subject, d))
			}
			decideReadings(&set, rules, programReadings(cmd.Args, cmd.Subject, pl))
		}
		for _, w := range cmd.Writes {
			set.addAll(writes(w))
		}
		for _, p := range cmd.Paths {
			pathWordChecks(&set, rules, pl, p, cmd.Dirs)
		}
	}
	return set.checks, nil
}

// checkSet collects checks, each (permission, subject, reason) once: a
// line names the same file or command many times over.
type checkSet struct {
	checks []Check
	// seen indexes checks once they are too many to scan; most lines
	// have a few dozen, which a scan compares faster than a map hashes.
	seen map[checkKey]struct{}
}

// maxScanned is how many checks a checkSet scans before it indexes them.
const maxScanned = 32

func (s *checkSet) add(c Check) {
	k := checkKey{c.Permission, c.Subject, c.Reason}
	if s.seen == nil {
		for i := range s.checks {
			if o := &s.checks[i]; o.Subject == c.Subject && o.Permission == c.Permission && o.Reason == c.Reason {
				return
			}
		}
		if len(s.checks) < maxScanned {
			s.checks = append(s.checks, c)
			return
		}
		s.seen = make(map[checkKey]struct{}, 2*maxScanned)
		for _, o := range s.checks {
			s.seen[checkKey{o.Permission, o.Subject, o.Reason}] = struct{}{}
		}
	} else if _, dup := s.seen[k]; dup {
		return
	}
	s.seen[k] = struct{}{}
	s.checks = append(s.checks, c)
}

func (s *checkSet) addAll(cs []Check) {
	for _, c := range cs {
		s.add(c)
	}
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
func pathWordChecks(set *checkSet, rules []Rule, pl *place, p Path, dirs []string) {
	if p.Expand != "" {
		c := decide(rules, ExternalDirectory, p.Text)
		c.Reason = p.Expand + ", so where it points is not known before it runs"
		set.add(c)
		return
	}
	if !p.Home && !p.Glob && path.IsAbs(p.Text) && harmless(path.Clean(p.Text)) {
		return
	}
	abs := path.IsAbs(p.Text)
	if pl.msys && !p.Home {
		t, why := msysPath(p.Text)
		switch {
		case why != "":
			c := decide(rules, ExternalDirectory, p.Text)
			c.Reason = why
			set.add(c)
			return
		case t == "":
			return // the null device
		}
		p.Text, abs = t, msysAbs(t)
	}
	// Judged from where the line starts, then from every directory cd
	// may have moved to (an absolute or home path lands the same from all).
	n := len(dirs)
	if p.Home || abs {
		n = 0
	}
	for i := -1; i < n; i++ {
		sub := ""
		if i >= 0 {
			sub = dirs[i]
		} else if p.Use == UseOperand && !p.Home && !p.Glob && pl.unnamed(p.Text) {
			continue // lands inside the workspace, where an operand needs no check
		}
		pl.judged = pl.judge(pl.judged[:0], p, sub)
		for _, j := range pl.judged {
			landedChecks(set, rules, pl, p, j)
		}
	}
}

func landedChecks(set *checkSet, rules []Rule, pl *place, p Path, j judged) {
	subject := filepath.ToSlash(j.real)
	switch {
	case j.why != "":
		c := decide(rules, ExternalDirectory, subject)
		c.Reason = j.why
		set.add(c)
		return
	case j.outside():
		if harmless(j.real) {
			return
		}
		c := decide(rules, ExternalDirectory, subject)
		tree := j.real
		if !pl.lexical() && !isDir(tree) {
			tree = filepath.Dir(tree)
		}
		c.Suggest = escapePattern(strings.TrimSuffix(filepath.ToSlash(tree), "/")) + "/**"
		set.add(c)
	default:
		subject = j.rel
	}
	if p.Use == UseRead {
		set.add(exact(rules, Read, subject))
	}
	if p.Use == UseWrite {
		if why := protectedWhy(rules, j.rel, j.real, pl.gitDirs()); why != "" {
			set.add(decideProtected(rules, subject, why))
		}
	}
}
