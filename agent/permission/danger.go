package permission

import (
	"slices"
	"strings"
)

// A danger is an option that makes a command do what its name does not
// say: run another program, or write a file. A command using one is asked
// as bash even when a rule allows the command, unless the allowing rule's
// pattern spells the option out itself ("go test -exec=./wrap *"), so a
// broad rule such as "go test *" or "*" never covers it. Paths these
// options take are checked like any other (see Path).
type danger struct {
	// command is the program; sub, when set, the subcommands it applies
	// to (go test, go build, …); global, that the option only counts
	// before the subcommand (git -c).
	command string
	sub     []string
	global  bool
	// flags are the option's spellings. A flag matches the word itself,
	// the word with "=value", and for one letter after one dash ("-c")
	// also a cluster holding the letter ("-lc") and a glued value ("-cx").
	// With no flags the command itself is the danger.
	flags []string
	// exact flags match only the whole word (find's -exec).
	exact bool
	why   string
}

var goBuilds = []string{"build", "test", "run", "install", "vet", "generate", "list", "get", "tool"}

// dangers is the table, documented in docs/configuration.md.
var dangers = []danger{
	{command: "go", sub: goBuilds, flags: []string{"-exec", "--exec", "-toolexec", "--toolexec", "-vettool", "--vettool"},
		why: "it runs the program given to it on every binary or tool"},

	{command: "git", global: true, flags: []string{"-c", "--config-env", "--exec-path"},
		why: "it sets git configuration for the command, and configuration (core.pager, core.fsmonitor, aliases, diff drivers) runs programs"},
	{command: "git", flags: []string{"--upload-pack", "--receive-pack"},
		why: "it names the program git runs on the other side of a fetch or push, which is a local program for a local path"},
	{command: "git", flags: []string{"--output"},
		why: "it writes the command's output to a file"},
	{command: "git", sub: []string{"rebase"}, flags: []string{"-x", "--exec"}, why: "it runs a command after each commit"},
	{command: "git", sub: []string{"grep"}, flags: []string{"-O", "--open-files-in-pager"}, why: "it runs a program on the matching files"},
	{command: "git", sub: []string{"difftool", "mergetool"}, flags: []string{"-x", "--extcmd", "-t", "--tool"}, why: "it runs a program on the files"},
	{command: "git", sub: []string{"archive", "ls-remote"}, flags: []string{"--exec"}, why: "it names a program git runs"},
	{command: "git", sub: []string{"clone"}, flags: []string{"-u"}, why: "it names the program git runs for the other side"},

	{command: "rg", flags: []string{"--pre"}, why: "it runs a program on every file searched"},

	{command: "find", exact: true, flags: []string{"-exec", "-execdir", "-ok", "-okdir"}, why: "it runs a program on every file found"},
	{command: "find", exact: true, flags: []string{"-delete"}, why: "it deletes every file found"},
	{command: "find", exact: true, flags: []string{"-fprint", "-fprint0", "-fprintf", "-fls"}, why: "it writes a file"},

	{command: "sort", flags: []string{"-o", "--output"}, why: "it writes a file"},
	{command: "sort", flags: []string{"--compress-program"}, why: "it runs a program"},

	{command: "tar", flags: []string{"--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script",
		"-F", "--new-volume-script", "--rsh-command", "--rmt-command"}, why: "it runs a program"},

	{command: "xargs", why: "it runs a program on its input, which no rule sees"},
}

// isWrapper is the set of wrappers.
var isWrapper = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range wrappers {
		m[w] = true
	}
	return m
}()

// dangersOf is the table by command, in the table's order.
var dangersOf = func() map[string][]danger {
	m := map[string][]danger{}
	for _, d := range dangers {
		m[d.command] = append(m[d.command], d)
	}
	return m
}()

// wrappers run the program in their arguments. SplitBash drops the ones
// it understands (see unwrap); one left as the command was used in a way
// it did not follow, so what it runs is not seen by any rule.
var wrappers = []string{"env", "nohup", "timeout", "nice", "command", "exec", "builtin", "time", "sudo", "doas", "su",
	"watch", "strace", "ltrace", "flock", "setsid", "chroot", "unshare", "nsenter", "busybox", "parallel", "stdbuf",
	"taskset", "ionice", "chrt", "script"}

// Danger is a command's use of an option from the table, or of a wrapper.
type Danger struct {
	// Flag is the option as the table spells it, or the command's name
	// when the command itself is the danger.
	Flag string
	// Why says what it does.
	Why string
}

// Dangers returns what in the command the table flags.
func (c Command) Dangers() []Danger {
	args := c.Args
	if len(args) == 0 {
		return nil
	}
	var out []Danger
	name := args[0]
	if len(args) > 1 && isWrapper[name] {
		out = append(out, Danger{Flag: name, Why: "it runs the program named in its arguments, which no rule sees"})
	}
	for _, d := range dangersOf[name] {
		if d.flags == nil {
			out = append(out, Danger{Flag: name, Why: d.why})
			continue
		}
		words := args[1:]
		if d.sub != nil || d.global {
			sub, i := subcommand(args)
			switch {
			case d.global:
				words = args[1:i]
			case !slices.Contains(d.sub, sub):
				continue
			default:
				words = args[i+1:]
			}
		}
		if d.global && name == "git" {
			words = withoutHarmlessConfig(words)
		}
		if f, ok := findFlag(words, d.flags, d.exact); ok {
			out = append(out, Danger{Flag: f, Why: d.why})
		}
	}
	return out
}

// harmlessConfig are git configuration keys that run nothing and write
// nothing beyond what the command itself does, so "git -c user.name=x
// commit" is judged as git commit: who the commit is from, colours,
// advice, how paths are quoted. A key ending in "." is a section.
var harmlessConfig = []string{"user.", "color.", "advice.", "core.quotepath", "init.defaultbranch", "column.ui", "i18n.", "log.date"}

// harmlessOff are keys harmless when they turn signing off (on, they run
// gpg.program).
var harmlessOff = []string{"commit.gpgsign", "tag.gpgsign"}

// withoutHarmlessConfig drops git's "-c key=value" options whose key is
// harmless; every other option stays for the table to judge.
func withoutHarmlessConfig(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		kv, glued := strings.CutPrefix(w, "-c")
		switch {
		case w == "-c" && i+1 < len(words):
			if harmlessSetting(words[i+1]) {
				i++
				continue
			}
		case glued && kv != "" && !strings.HasPrefix(w, "--") && harmlessSetting(kv):
			continue
		}
		out = append(out, w)
	}
	return out
}

func harmlessSetting(kv string) bool {
	key, value, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	for _, h := range harmlessConfig {
		if key == h || strings.HasSuffix(h, ".") && strings.HasPrefix(key, h) && len(key) > len(h) {
			return true
		}
	}
	return slices.Contains(harmlessOff, key) && slices.Contains([]string{"false", "no", "off", "0"}, strings.ToLower(value))
}

// subcommand finds the first word after a command's options.
func subcommand(args []string) (string, int) {
	if args[0] == "git" {
		return gitSubcommand(args)
	}
	for i := 1; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			return args[i], i
		}
	}
	return "", len(args)
}

func findFlag(words, flags []string, exact bool) (string, bool) {
	for _, w := range words {
		if w == "--" {
			return "", false
		}
		for _, f := range flags {
			if w == f || exact {
				if w == f {
					return f, true
				}
				continue
			}
			if len(w) > len(f) && w[len(f)] == '=' && strings.HasPrefix(w, f) {
				return f, true
			}
			if len(f) == 2 && f[0] == '-' && len(w) > 1 && w[0] == '-' && w[1] != '-' {
				// A cluster: the letter among the leading letters, which
				// may end with a glued value ("-lc", "-cfoo", "-Izstd").
				for _, r := range w[1:] {
					if r == rune(f[1]) {
						return f, true
					}
					if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
						break
					}
				}
			}
		}
	}
	return "", false
}
