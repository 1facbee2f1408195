package permission

import (
	"os/user"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Path is a word of a simple command that may name a file: an operand, an
// option's value in any spelling, a redirection's file. Which words are
// paths is decided without knowing the program, so every argument counts:
//
//   - the word itself, unless it is an option (-x, --long);
//   - what follows the first '=' ("--file=/x", "if=/x", "X=~/y");
//   - for a short option word ("-f/x", "-xf/x"), every tail after its
//     first letter, since any letter may take the rest as its value.
//
// A word that is not a path at all ("-la", "status", a regex) resolves
// inside the working directory and costs nothing. One that the shell
// expands is judged by what it can expand to, as bash would expand it: ~,
// ~/, $HOME and ${HOME} (bare or double-quoted, at the word's start) are
// the home directory; $PWD, $OLDPWD, ~+ and ~- the command's directory
// (see pathText); ~user that user's home; a brace list is each of its
// words, a glob is what it matches now (or itself when it matches
// nothing); anything else ($VAR, $(…)) is only known at run time and has
// Expand set.
type Path struct {
	// Text is the path as the shell sees it after quote removal; for a
	// glob, a pattern whose quoted metacharacters are escaped; with Expand
	// set, the word's source text.
	Text string
	// Expand, when set, says why the path is only known at run time.
	Expand string
	// Home is set when Text is relative to the home directory (it was
	// "~" or "~/…").
	Home bool
	// Glob is set when Text is a pattern the shell expands.
	Glob bool
	// Use is how the command uses the path.
	Use PathUse
}

// PathUse is what a command does with a path, as far as the checker knows.
type PathUse uint8

const (
	// UseOperand is any argument: read, written or not a path at all.
	UseOperand PathUse = iota
	// UseRead is the source of a read redirection (< f).
	UseRead
	// UseWrite is the target of a redirection, or of a known writer
	// (tee, cp and mv targets, git config, …; see writeTargets).
	UseWrite
)

// maxBraceWords bounds the words a brace list is expanded to; a bigger one
// is asked about as expanded at run time.
const maxBraceWords = 64

// wordPaths returns the paths word w may name, used as use.
func wordPaths(src string, w *syntax.Word, use PathUse) []Path {
	return appendWordPaths(nil, src, w, use)
}

// appendWordPaths appends to out the paths word w may name, used as use.
func appendWordPaths(out []Path, src string, w *syntax.Word, use PathUse) []Path {
	if w == nil || len(w.Parts) == 0 {
		return out
	}
	if _, ok := w.Parts[0].(*syntax.ProcSubst); ok && len(w.Parts) == 1 {
		return out // /dev/fd/N, a pipe; the commands inside are checked themselves
	}
	if hasBraces(w) {
		return append(out, bracePaths(src, w, use)...)
	}
	text, home, glob, why := pathText(w)
	if why != "" {
		return append(out, Path{Text: source(src, w), Expand: why, Use: use})
	}
	return appendCandidates(out, text, home, glob, use)
}

// candidates splits one word's text into the paths it may name (see Path).
func candidates(text string, home, glob bool, use PathUse) []Path {
	return appendCandidates(nil, text, home, glob, use)
}

// appendCandidates appends to out the paths text may name (see Path).
func appendCandidates(out []Path, text string, home, glob bool, use PathUse) []Path {
	if home {
		return appendCandidate(out, text, true, glob, use)
	}
	isOption := len(text) > 1 && text[0] == '-'
	if !isOption || use != UseOperand {
		out = appendCandidate(out, text, false, glob, use)
	}
	if _, value, ok := strings.Cut(text, "="); ok {
		out = appendCandidate(out, value, false, glob, use)
	}
	if isOption && text[1] != '-' {
		// -f/x, -xf/x, -C../y: any letter of the cluster may take the rest
		// as its value, so each tail after a leading letter is a path.
		for j := 2; j < len(text) && j <= maxCluster+1 && isLetter(text[j-1]); j++ {
			if text[j] == '=' {
				break // the value after '=' is a path already
			}
			out = appendCandidate(out, text[j:], false, glob, use)
		}
	}
	return out
}

// appendCandidate appends s, a path relative to the home directory when h.
func appendCandidate(out []Path, s string, h, glob bool, use PathUse) []Path {
	if s == "" && !h {
		return out
	}
	if len(s) > 1 && s[0] == '@' {
		out = appendCandidate(out, s[1:], h, glob, use) // curl -d @file, response files
	}
	if !h && (s == "~" || strings.HasPrefix(s, "~/")) {
		// bash expands a tilde after '=' in a word that looks like an
		// assignment; take it as home wherever it follows '='.
		s, h = strings.TrimPrefix(s, "~"), true
	}
	return append(out, Path{Text: s, Home: h, Glob: glob && hasMeta(s), Use: use})
}

// maxCluster is the most option letters a cluster is read as before its
// glued value ("-xvzf/tmp/a.tgz").
const maxCluster = 5

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// pathText returns a word's text with quotes removed, and what kind of
// path it is; why is set when the shell decides the word at run time. In a
// glob, quoted metacharacters are escaped so the pattern matches them
// literally.
func pathText(w *syntax.Word) (text string, home, glob bool, why string) {
	var b concat
	parts := w.Parts
	// A word that starts with $HOME, $PWD or $OLDPWD (bare, braced or
	// inside double quotes) names what bash would: the home directory (~
	// is $HOME), or the directory the command runs in (darman starts
	// every command with PWD and OLDPWD naming it, and a cd the line makes
	// is judged from each directory it may reach, as relative paths are).
	if dir, rest, ok := leadingDirVar(parts); ok {
		switch dir {
		case "HOME":
			home = true
		default:
			b.WriteString(".")
		}
		if len(rest) > 0 && !startsWithSlash(rest[0]) {
			return "", false, false, "the shell expands it at run time"
		}
		parts = rest
	}
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && len(parts) == len(w.Parts) && strings.HasPrefix(v, "~") {
				prefix, rest, _ := strings.Cut(v[1:], "/")
				if rest != "" || strings.Contains(v, "/") {
					rest = "/" + rest
				}
				switch {
				case prefix == "+" || prefix == "-":
					// ~+ is $PWD, ~- is $OLDPWD: the command's directory.
					b.WriteString(".")
					v = rest
				case prefix != "":
					// ~user is that user's home, as the system's user
					// database says; bash leaves it as it is when there
					// is no such user.
					if u, err := user.Lookup(prefix); err == nil && filepath.IsAbs(u.HomeDir) {
						v = filepath.ToSlash(u.HomeDir) + rest
					}
				case len(parts) > 1 && rest == "":
					// ~"x": bash does not expand a tilde followed by a
					// quote; the path is the literal "~x".
					b.WriteString("~")
					continue
				default:
					home = true
					v = rest
				}
			}
			if hasMeta(v) {
				glob = true
				b.WriteString(v) // keeps its backslash escapes, as a pattern
				continue
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			if p.Dollar && strings.IndexByte(p.Value, '\\') >= 0 {
				return "", false, false, "$'…' is only known after its escapes are decoded"
			}
			b.WriteString(escapeMeta(p.Value))
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false, false, `$"…" is translated at run time`
			}
			for _, inner := range p.Parts {
				switch q := inner.(type) {
				case *syntax.Lit:
					b.WriteString(escapeMeta(unescapeQuoted(q.Value)))
				case *syntax.ParamExp:
					if !safeParam(q) {
						return "", false, false, "the shell expands it at run time"
					}
					b.WriteString("0")
				default:
					return "", false, false, "the shell expands it at run time"
				}
			}
		case *syntax.ParamExp:
			if !safeParam(p) {
				return "", false, false, "the shell expands it at run time"
			}
			b.WriteString("0")
		case *syntax.ArithmExp:
			if !numericOnly(p.X) {
				return "", false, false, "the shell expands it at run time"
			}
			b.WriteString("0")
		default:
			return "", false, false, "the shell expands it at run time"
		}
	}
	text = b.String()
	if !glob {
		text = unescapeMeta(text)
	}
	return text, home, glob, ""
}

// leadingDirVar reports whether parts start with $HOME, $PWD or $OLDPWD
// with no operator ($HOME, ${PWD}, "$HOME/…"), and returns its name and
// the parts after it.
func leadingDirVar(parts []syntax.WordPart) (name string, rest []syntax.WordPart, ok bool) {
	if len(parts) == 0 {
		return "", nil, false
	}
	switch p := parts[0].(type) {
	case *syntax.ParamExp:
		if name, ok := plainDirParam(p); ok {
			return name, parts[1:], true
		}
	case *syntax.DblQuoted:
		if p.Dollar || len(p.Parts) == 0 {
			return "", nil, false
		}
		pe, isParam := p.Parts[0].(*syntax.ParamExp)
		if !isParam {
			return "", nil, false
		}
		name, ok := plainDirParam(pe)
		if !ok {
			return "", nil, false
		}
		// The quoted rest is literal text.
		var quoted strings.Builder
		for _, q := range p.Parts[1:] {
			lit, isLit := q.(*syntax.Lit)
			if !isLit {
				return "", nil, false
			}
			quoted.WriteString(unescapeQuoted(lit.Value))
		}
		rest = parts[1:]
		if quoted.Len() > 0 {
			rest = append([]syntax.WordPart{&syntax.SglQuoted{Value: quoted.String()}}, rest...)
		}
		return name, rest, true
	}
	return "", nil, false
}

// startsWithSlash reports whether a literal or single-quoted part starts
// with '/'.
func startsWithSlash(part syntax.WordPart) bool {
	switch p := part.(type) {
	case *syntax.Lit:
		return strings.HasPrefix(p.Value, "/")
	case *syntax.SglQuoted:
		return !p.Dollar && strings.HasPrefix(p.Value, "/")
	}
	return false
}

// plainDirParam reports whether p is $HOME, $PWD or $OLDPWD with no
// operator, and which.
func plainDirParam(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return "", false
	}
	switch p.Param.Value {
	case "HOME", "PWD", "OLDPWD":
		return p.Param.Value, true
	}
	return "", false
}

// safeParam reports whether a parameter expansion can only be a number or
// a few flag letters: $?, $#, $$, $!, $-, with no operator.
func safeParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return false
	}
	switch p.Param.Value {
	case "?", "#", "$", "!", "-":
		return true
	}
	return false
}

// hasBraces reports whether an unquoted part of w holds a brace list.
func hasBraces(w *syntax.Word) bool {
	for _, part := range w.Parts {
		if lit, ok := part.(*syntax.Lit); ok && strings.IndexByte(lit.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// bracePaths expands a brace list and returns the paths of each word.
func bracePaths(src string, w *syntax.Word, use PathUse) []Path {
	copied := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(copied) {
		text, home, glob, why := pathText(w)
		if why != "" {
			return []Path{{Text: source(src, w), Expand: why, Use: use}}
		}
		return candidates(text, home, glob, use)
	}
	var out []Path
	n := 0
	for ew, err := range expand.BracesSeq(nil, copied) {
		n++
		if err != nil || n > maxBraceWords {
			return append(out, Path{Text: source(src, w), Expand: "the brace list expands to too many words to check", Use: use})
		}
		text, home, glob, why := pathText(ew)
		if why != "" {
			out = append(out, Path{Text: source(src, w), Expand: why, Use: use})
			continue
		}
		out = append(out, candidates(text, home, glob, use)...)
	}
	return out
}

func hasMeta(s string) bool { return globMeta.in(s) }

// byteSet is a set of bytes: strings.ContainsAny for a fixed set of ASCII
// characters, by table instead of a rune search per character, for the
// short words every command line is made of.
type byteSet [256]bool

func newByteSet(chars string) *byteSet {
	var b byteSet
	for i := 0; i < len(chars); i++ {
		b[chars[i]] = true
	}
	return &b
}

// in reports whether s holds a byte of the set.
func (b *byteSet) in(s string) bool {
	for i := 0; i < len(s); i++ {
		if b[s[i]] {
			return true
		}
	}
	return false
}

var (
	globMeta    = newByteSet("*?[")
	globOrBrace = newByteSet("*?[{")
	quotedMeta  = newByteSet(`*?[\`)
	patternMeta = newByteSet(`*?\`)
)

// escapeMeta escapes glob metacharacters (and backslashes) for text that
// was quoted, so a pattern built around it matches it literally.
func escapeMeta(s string) string {
	if !quotedMeta.in(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unescapeMeta undoes escapeMeta for a word that turned out not to be a
// pattern.
func unescapeMeta(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`*?[\`, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
