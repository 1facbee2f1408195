package permission

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A command is its program however the line spells it. Deny and ask rules
// name programs ("rm *"), so a command is also judged as the program it
// runs when the line names it another way: by a path (/bin/rm, /usr/bin/rm,
// ./rm, a link whose target is rm), or through a program that runs the
// command in its arguments (busybox rm, xargs rm, find -exec rm, sudo rm;
// command, env, nice, timeout and the like are dropped by SplitBash
// already). These other readings are only for denying and asking: allow
// rules still see the command as written, and a wrapper is asked whatever
// allows it (see Command.Dangers).
//
// The reverse holds too: an allow rule for a name allows the program the
// name means, not a file of that name in a workspace directory on PATH
// (see pathShadow).

// programReading is one other reading of a command.
type programReading struct {
	subject, why string
}

// maxReadings bounds the readings of one command (wrappers in wrappers).
const maxReadings = 8

// programReadings returns the other readings of a command with args and
// subject (see Command), resolving a path-qualified name from pl.
func programReadings(args []string, subject string, pl *place) []programReading {
	if len(args) == 0 {
		return nil
	}
	if _, wraps := commandWrappers[args[0]]; !wraps && args[0] != "find" && !strings.Contains(args[0], "/") {
		return nil // the usual command: its name is its program
	}
	var out []programReading
	var walk func(args []string, subject, via string, depth int)
	walk = func(args []string, subject, via string, depth int) {
		if len(args) == 0 || depth > 4 || len(out) >= maxReadings {
			return
		}
		name := args[0]
		rest := strings.TrimPrefix(subject, name)
		if !strings.HasPrefix(subject, name) {
			rest = " " + strings.Join(args[1:], " ")
			if len(args) == 1 {
				rest = ""
			}
		}
		add := func(prog, why string) {
			if prog == "" || prog == "." || prog == "/" || prog == name && depth == 0 {
				return
			}
			s := prog + rest
			for _, o := range out {
				if o.subject == s {
					return
				}
			}
			out = append(out, programReading{subject: s, why: why})
			walk(append([]string{prog}, args[1:]...), s, why, depth+1)
		}
		if depth > 0 && via != "" {
			// An inner command is itself a reading.
			found := false
			for _, o := range out {
				found = found || o.subject == subject
			}
			if !found {
				out = append(out, programReading{subject: subject, why: via})
			}
		}
		if strings.Contains(name, "/") {
			base := path.Base(name)
			add(base, name+" is the program "+base)
			if !pl.lexical() {
				j := pl.land(pl.realDir, name)
				if target := filepath.Base(j.real); target != base && j.why == "" {
					add(target, name+" leads to "+filepath.ToSlash(j.real))
				}
			}
		}
		if inner := innerCommand(args); len(inner) > 0 {
			why := name + " runs " + inner[0]
			walk(inner, strings.Join(inner, " "), why, depth+1)
		}
		if name == "find" {
			for _, inner := range findExecs(args) {
				walk(inner, strings.Join(inner, " "), "find runs "+inner[0]+" on what it finds", depth+1)
			}
		}
	}
	walk(args, subject, "", 0)
	return out
}

// innerCommand returns the command a program runs from its arguments:
// multi-call binaries (busybox rm), and programs whose arguments end in a
// command (xargs, sudo, nohup, stdbuf, setsid, flock FILE, chroot DIR, …).
// Options are skipped (with the next word for those known to take one);
// nil when there is no such command.
func innerCommand(args []string) []string {
	if len(args) < 2 {
		return nil
	}
	w, ok := commandWrappers[path.Base(args[0])]
	if !ok {
		return nil
	}
	i := 1
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' || w.noOptions {
			break
		}
		i++
		if !strings.Contains(a, "=") && strings.ContainsRune(w.valued, rune(a[len(a)-1])) && (len(a) == 2 || a[1] != '-') {
			i++ // the option's value is the next word
		}
	}
	i += w.operands
	if i >= len(args) || args[i] == "" {
		return nil
	}
	return args[i:]
}

// commandWrapper is how a program that runs a command takes it.
type commandWrapper struct {
	valued    string // short options whose value is the next word
	operands  int    // words between the options and the command
	noOptions bool   // the command follows at once (busybox rm -f)
}

var commandWrappers = map[string]commandWrapper{
	"busybox": {noOptions: true}, "toybox": {noOptions: true},
	"xargs": {valued: "adEeIiLlnPs"}, "parallel": {valued: "jS"},
	"sudo": {valued: "CDghpRrTtUu"}, "doas": {valued: "Cu"},
	"nohup": {}, "setsid": {}, "stdbuf": {valued: "ioe"}, "strace": {valued: "abeEIoOpPsSuX"}, "ltrace": {valued: "aenopsSu"},
	"watch": {valued: "dnq"}, "unshare": {}, "ionice": {valued: "cnp"}, "chrt": {operands: 1}, "taskset": {operands: 1},
	"flock": {valued: "Ew", operands: 1}, "chroot": {operands: 1}, "nsenter": {valued: "tSG"},
	"time": {valued: "fo"}, "nice": {valued: "n"}, "timeout": {valued: "ks", operands: 1}, "env": {valued: "uSC"},
	"command": {}, "exec": {valued: "a"}, "builtin": {},
}

// findExecs returns the commands find runs: each -exec, -execdir, -ok and
// -okdir up to its ";" or "+".
func findExecs(args []string) [][]string {
	var out [][]string
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, args[i+1:j])
			}
			i = j
		}
	}
	return out
}

// decideReadings adds what the deny and ask rules say of a command's other
// readings: a deny denies it; an ask rule of the user's own (not darman's
// defaults, not a catch-all "*") asks.
func decideReadings(set *checkSet, rules []Rule, readings []programReading) {
	for _, r := range readings {
		c := decide(rules, Bash, r.subject)
		switch {
		case c.Action == Deny:
		case c.Action == Ask && c.Rule != nil && !c.Rule.Default && c.Rule.Pattern != "*":
		default:
			continue
		}
		c.Reason = r.why
		c.Suggest = escapePattern(r.subject)
		set.add(c)
	}
}

// workspacePath returns the directories of the PATH list that lie in the
// workspace (real paths), and whether a relative entry ("", ".", "bin")
// makes the command's own directory one: a program found there is the
// workspace's file, whatever its name.
func workspacePath(list, realRoot string) (dirs []string, relative bool) {
	for _, d := range filepath.SplitList(list) {
		if d == "" || !filepath.IsAbs(d) {
			relative = true
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			// A directory that does not exist yet may be made by a command.
			real = filepath.Clean(d)
		}
		if _, ok := relWithin(realRoot, real); ok {
			dirs = append(dirs, real)
		}
	}
	return dirs, relative
}

// pathShadow says which workspace file a bare command name runs instead
// of the program an allow rule means, "" when none: the first PATH
// directory in the workspace holding an entry of that name. Bash's
// builtins are not looked up on PATH.
func (pl *place) pathShadow(name string) string {
	if pl.lexical() || (len(pl.wsPath) == 0 && !pl.wsPathRelative) || name == "" || strings.Contains(name, "/") || shellBuiltins[name] {
		return ""
	}
	dirs := pl.wsPath
	if pl.wsPathRelative {
		dirs = append([]string{pl.realDir}, dirs...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// shellBuiltins are the bash builtins a command name runs before any
// program on PATH.
var shellBuiltins = map[string]bool{
	"echo": true, "printf": true, "cd": true, "pwd": true, "test": true, "[": true, "true": true, "false": true,
	"read": true, "export": true, "set": true, "unset": true, "shift": true, "source": true, ".": true,
	"type": true, "hash": true, "alias": true, "let": true, "local": true, "declare": true, "eval": true,
	"exec": true, "exit": true, "return": true, "trap": true, "wait": true, "kill": true, "jobs": true,
	"umask": true, "ulimit": true, "getopts": true, "command": true, "builtin": true, "pushd": true, "popd": true,
}
