package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word as rules see it.
type word struct {
	// text is the word with quotes removed when lit, else its source text.
	text string
	// lit is set when the word's value is known before running: no
	// expansion, substitution or tilde.
	lit bool
	// glob is set when an unquoted part holds a pattern or brace character
	// the shell may expand.
	glob bool
}

func wordOf(src string, w *syntax.Word) word {
	if w == nil || len(w.Parts) == 0 {
		return word{lit: true}
	}
	var b concat
	out := word{lit: true}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				out.lit = false
			}
			if globOrBrace.in(p.Value) {
				out.glob = true
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar && strings.IndexByte(p.Value, '\\') >= 0 {
				out.lit = false // $'\x72m' is only known after decoding escapes
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				out.lit = false // $"…" is translated at run time
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					out.lit = false
					continue
				}
				b.WriteString(unescapeQuoted(lit.Value))
			}
		default:
			out.lit = false
		}
	}
	if !out.lit {
		out.text = source(src, w)
		return out
	}
	out.text = b.String()
	return out
}

// concat joins strings like a strings.Builder, without copying when there
// is only one: most words are a single literal, and SplitBash and the path
// checks build the text of every word of a line.
type concat struct {
	s    string
	b    []byte
	used bool
}

func (c *concat) WriteString(s string) {
	switch {
	case !c.used:
		c.s, c.used = s, true
	case c.b == nil:
		c.b = make([]byte, 0, len(c.s)+len(s)+8)
		c.b = append(append(c.b, c.s...), s...)
	default:
		c.b = append(c.b, s...)
	}
}

func (c *concat) String() string {
	if c.b == nil {
		return c.s
	}
	return string(c.b)
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes that are escapes inside double
// quotes; the others stay.
func unescapeQuoted(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unwrap drops the wrappers that only run the command after them, and
// returns the NAME=value words env passed to it. It stops at the first
// wrapper used in a way it does not recognise, which then stays the command.
func unwrap(ws []word) (rest []word, env []string) {
	for len(ws) > 1 && ws[0].lit && !ws[0].glob {
		i := 0
		switch ws[0].text {
		case "builtin", "nohup":
			i = 1
		case "command":
			i = skipOptions(ws, 1, "p", "")
		case "exec":
			i = skipOptions(ws, 1, "cl", "a")
		case "time", "/usr/bin/time":
			i = skipOptions(ws, 1, "p", "")
		case "nice":
			i = skipOptions(ws, 1, "", "n")
		case "timeout":
			i = skipOptions(ws, 1, "v", "sk")
			if i > 0 {
				i++ // the duration
			}
		case "env":
			i, env = envPrefix(ws, env)
		}
		if i <= 0 || i >= len(ws) || strings.HasPrefix(ws[i].text, "-") {
			return ws, env
		}
		ws = ws[i:]
	}
	return ws, env
}

// skipOptions returns the index of the first word after the options that
// start at i, or -1 when an option is not one of flags (taking no value) or
// valued (taking the next word, or the rest of the cluster). "--" ends the
// options; long options are not recognised.
func skipOptions(ws []word, i int, flags, valued string) int {
	for i < len(ws) {
		w := ws[i]
		if !w.lit {
			return -1
		}
		if w.text == "--" {
			return i + 1
		}
		if len(w.text) < 2 || w.text[0] != '-' {
			return i
		}
		if w.text[1] >= '0' && w.text[1] <= '9' && strings.Contains(valued, "n") {
			i++ // nice -5
			continue
		}
		i++
		for j := 1; j < len(w.text); j++ {
			c := w.text[j]
			switch {
			case strings.IndexByte(flags, c) >= 0:
			case strings.IndexByte(valued, c) >= 0:
				if j == len(w.text)-1 {
					i++ // the value is the next word
				}
				j = len(w.text)
			default:
				return -1
			}
		}
	}
	return i
}

// envPrefix reads `env [-i] [-u NAME] [NAME=value]... cmd`.
func envPrefix(ws []word, env []string) (int, []string) {
	i := skipOptions(ws, 1, "i", "u")
	if i < 0 {
		return -1, env
	}
	for ; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			return -1, env
		}
		eq := strings.IndexByte(w.text, '=')
		if eq <= 0 {
			break
		}
		env = append(env, w.text)
	}
	return i, env
}

// innerScript recognises `eval args...`, `trap script SIGNAL...` and
// `sh -c script` (also bash, zsh, dash). It returns the script, or nil when it
// is only known at run time, and the name of the construct.
func innerScript(ws []word) (script *string, what string, ok bool) {
	if !ws[0].lit || ws[0].glob {
		return nil, "", false
	}
	name := ws[0].text
	if name == "trap" {
		i := 1
		if len(ws) > i && ws[i].lit && ws[i].text == "--" {
			i++
		}
		// trap -p, trap -l and trap - SIGNAL run nothing; a lone argument
		// is a signal to reset.
		if len(ws) < i+2 || (ws[i].lit && strings.HasPrefix(ws[i].text, "-")) {
			return nil, "", false
		}
		if !ws[i].lit {
			return nil, "trap", true
		}
		s := ws[i].text
		return &s, "trap", true
	}
	if name == "eval" {
		if len(ws) == 1 {
			return nil, "", false
		}
		for _, w := range ws[1:] {
			if !w.lit {
				return nil, "eval", true
			}
		}
		s := strings.Join(texts(ws[1:]), " ")
		return &s, "eval", true
	}
	switch name {
	case "sh", "bash", "zsh", "dash",
		"/bin/sh", "/bin/bash", "/bin/zsh", "/bin/dash",
		"/usr/bin/sh", "/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/dash":
	default:
		return nil, "", false
	}
	i, dashC := shellOptions(ws)
	if !dashC || i >= len(ws) {
		return nil, "", false
	}
	what = name + " -c"
	if !ws[i].lit {
		return nil, what, true
	}
	s := ws[i].text
	return &s, what, true
}

// shellOptions reads the options of a shell invocation and reports whether
// -c was among them; i is the index of the script. Options other than
// -c -e -u -x -v -f -n -l and -o NAME, or long ones, end the reading without
// -c, so the invocation stays a plain command.
func shellOptions(ws []word) (i int, dashC bool) {
	for i = 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit || len(w.text) < 2 || (w.text[0] != '-' && w.text[0] != '+') {
			return i, dashC
		}
		if w.text == "--" || w.text == "-" {
			return i + 1, dashC
		}
		for _, c := range w.text[1:] {
			switch c {
			case 'c':
				dashC = true
			case 'e', 'u', 'x', 'v', 'f', 'n', 'l':
			case 'o':
				i++ // -o pipefail
			default:
				return i, false
			}
		}
	}
	return i, dashC
}

// hijackVar reports whether setting a variable changes which program a
// command runs, or makes it load or run something else: the dynamic loader,
// the shell's own start-up and lookup, git's configuration and hooks, home
// and config directories, pagers and editors, and the build tools' exec
// hooks. It is a best effort for the commands allowed by Defaults and the
// usual toolchains; an allow rule trusts its command with other variables.
func hijackVar(name string) bool {
	switch name {
	case "PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS", "ZDOTDIR",
		"BASH_ENV", "ENV", "SHELL", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH",
		"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE",
		"SSH_ASKPASS", "SUDO_ASKPASS", "RIPGREP_CONFIG_PATH", "GREP_OPTIONS",
		"GOFLAGS", "GOENV", "GOTOOLCHAIN", "CC", "CXX", "AR", "LD",
		"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOC", "RUSTFLAGS",
		"NODE_OPTIONS", "NODE_PATH",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"MAKEFLAGS", "MFLAGS", "MAKEFILES":
		return true
	}
	for _, prefix := range []string{"GIT_", "LD_", "DYLD_", "BASH_FUNC_", "CARGO_", "NPM_CONFIG_"} {
		if strings.HasPrefix(strings.ToUpper(name), prefix) {
			return true
		}
	}
	return false
}
