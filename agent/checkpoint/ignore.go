package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Which new names a snapshot leaves out is decided here, in the process,
// by the rules git check-ignore --no-index applies for the shadow (whose
// configuration is its own file alone): the .gitignore files of the
// workspace from its root down to the name's directory (a deeper file
// deciding first), then the shadow's copy of the workspace's info/exclude,
// then git's default global exclude file ($XDG_CONFIG_HOME/git/ignore or
// ~/.config/git/ignore); within one file the last matching line decides,
// and a name under an ignored directory is ignored whatever a "!" line
// says. Patterns are git's wildmatch with WM_PATHNAME. A shadow whose
// configuration could change the answer (core.ignoreCase, an
// excludesFile, an include) asks git instead (shadow.checkIgnore).
// TestIgnoreMatchesGit compares the two on a tree of tricky patterns.

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	pat    string // without its "!", its trailing "/"
	prefix int    // the length of pat's leading part with no wildcard
	base   string // the directory of the file it came from, "" at the root
	negate bool
	dirs   bool // a trailing "/": matches directories only
	name   bool // no "/" in pat: matched against the last element only
	suffix bool // "*" then no wildcard: a match of the name's end
}

// parseIgnorePatterns reads an ignore file's lines, as git's
// add_patterns_from_buffer does: a UTF-8 byte order mark skipped, CR LF
// line ends, "#" comments, trailing unquoted spaces dropped.
func parseIgnorePatterns(data []byte, base string) []ignorePattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []ignorePattern
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if p, ok := parseIgnorePattern(trimIgnoreSpaces(string(line)), base); ok {
			out = append(out, p)
		}
	}
	return out
}

// trimIgnoreSpaces drops the spaces ending a line unless a backslash
// quotes them; a line ending in a lone backslash keeps its spaces.
func trimIgnoreSpaces(s string) string {
	last := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if last < 0 {
				last = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			last = -1
		default:
			last = -1
		}
	}
	if last >= 0 {
		return s[:last]
	}
	return s
}

func parseIgnorePattern(s, base string) (ignorePattern, bool) {
	p := ignorePattern{base: base}
	if strings.HasPrefix(s, "!") {
		p.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirs = true
		s = s[:len(s)-1]
	}
	if s == "" {
		return p, false // matches no name
	}
	p.name = !strings.Contains(s, "/")
	p.pat = s
	p.prefix = strings.IndexAny(s, `*?[\`)
	if p.prefix < 0 {
		p.prefix = len(s)
	}
	p.suffix = s[0] == '*' && !strings.ContainsAny(s[1:], `*?[\`)
	return p, true
}

// matches reports whether the pattern matches path (relative to the
// workspace; its last element is at name), a directory or not.
func (p *ignorePattern) matches(path string, name int, dir bool) bool {
	if p.dirs && !dir {
		return false
	}
	if p.name {
		base := path[name:]
		switch {
		case p.prefix == len(p.pat):
			return base == p.pat
		case p.suffix:
			return strings.HasSuffix(base, p.pat[1:])
		}
		return wildmatch(p.pat, base) == wmMatch
	}
	pat, prefix := p.pat, p.prefix
	if pat[0] == '/' {
		pat, prefix = pat[1:], prefix-1
	}
	rel := path
	if p.base != "" {
		if !strings.HasPrefix(path, p.base) || len(path) <= len(p.base) || path[len(p.base)] != '/' {
			return false
		}
		rel = path[len(p.base)+1:]
	}
	// The part with no wildcard is compared as it is; only the rest is
	// matched (so a "**" right after it counts as leading, as in git).
	if prefix > 0 {
		if prefix > len(rel) || rel[:prefix] != pat[:prefix] {
			return false
		}
		pat, rel = pat[prefix:], rel[prefix:]
		if pat == "" && rel == "" {
			return true
		}
	}
	return wildmatch(pat, rel) == wmMatch
}

// wildmatch's answers: a match, none, none for any shorter text either
// (the caller's "*" need not try further), none at all.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch matches text against a pattern as git's wildmatch does with
// WM_PATHNAME: "?", "*" and classes never match "/"; "**" matches across
// directories where it is a whole element ("**/", "/**/", "/**");
// elsewhere it is "*". Classes: "[!…]" and "[^…]" negated, ranges,
// "[:alpha:]" and the other POSIX names, "\" quoting. Bytes, not runes.
func wildmatch(p, text string) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		if ti == len(text) && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if ti < len(text) {
			tc = text[ti]
		}
		switch pc {
		case '\\':
			pi++
			if pi == len(p) || tc != p[pi] {
				return wmNoMatch
			}
		case '?':
			if tc == '/' {
				return wmNoMatch
			}
		case '*':
			slash := false
			if pi+1 < len(p) && p[pi+1] == '*' {
				start := pi
				for pi+1 < len(p) && p[pi+1] == '*' {
					pi++
				}
				rest := p[pi+1:]
				if (start == 0 || p[start-1] == '/') && (rest == "" || rest[0] == '/' || strings.HasPrefix(rest, `\/`)) {
					if rest != "" && rest[0] == '/' && wildmatch(rest[1:], text[ti:]) == wmMatch {
						return wmMatch
					}
					slash = true
				}
			}
			rest := p[pi+1:]
			if rest == "" {
				if !slash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			if !slash && rest[0] == '/' {
				// One "*" then "/": the rest of this element.
				j := strings.IndexByte(text[ti:], '/')
				if j < 0 {
					return wmNoMatch
				}
				ti += j - 1
				continue
			}
			for ; ti < len(text); ti++ {
				r := wildmatch(rest, text[ti:])
				if r != wmNoMatch {
					if !slash || r != wmAbortToStarStar {
						return r
					}
				} else if !slash && text[ti] == '/' {
					return wmAbortToStarStar
				}
			}
			return wmAbortAll
		case '[':
			end, ok, abort := wildClass(p, pi, tc)
			if abort {
				return wmAbortAll
			}
			if !ok || tc == '/' {
				return wmNoMatch
			}
			pi = end
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// wildClass matches c against the class opening at p[i] == '['; end is
// the index of its "]"; abort, a class that does not close (or names an
// unknown "[:class:]"), which matches nothing.
func wildClass(p string, i int, c byte) (end int, ok, abort bool) {
	at := func(k int) byte {
		if k < len(p) {
			return p[k]
		}
		return 0
	}
	i++
	pc := at(i)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		i++
		pc = at(i)
	}
	var prev byte
	matched := false
	for {
		switch {
		case pc == 0:
			return 0, false, true
		case pc == '\\':
			i++
			pc = at(i)
			if pc == 0 {
				return 0, false, true
			}
			if c == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && at(i+1) != 0 && at(i+1) != ']':
			i++
			pc = at(i)
			if pc == '\\' {
				i++
				pc = at(i)
				if pc == 0 {
					return 0, false, true
				}
			}
			if c <= pc && c >= prev {
				matched = true
			}
			pc = 0
		case pc == '[' && at(i+1) == ':':
			s := i + 2
			k := s
			for at(k) != 0 && at(k) != ']' {
				k++
			}
			if at(k) == 0 {
				return 0, false, true
			}
			if k-s-1 < 0 || p[k-1] != ':' {
				// No ":]": an ordinary "[" in the class.
				if c == '[' {
					matched = true
				}
				break
			}
			is, known := posixClass(p[s:k-1], c)
			if !known {
				return 0, false, true
			}
			if is {
				matched = true
			}
			i, pc = k, 0
		default:
			if c == pc {
				matched = true
			}
		}
		prev = pc
		i++
		pc = at(i)
		if pc == ']' {
			break
		}
	}
	return i, matched != negated, false
}

// posixClass reports whether c is in the named class, by git's (ASCII)
// character types; known is false for a name git does not know.
func posixClass(name string, c byte) (is, known bool) {
	alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
	printable := c >= 0x20 && c < 0x7f
	switch name {
	case "alnum":
		return alpha || digit, true
	case "alpha":
		return alpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return printable && c != ' ', true
	case "lower":
		return c >= 'a' && c <= 'z', true
	case "print":
		return printable, true
	case "punct":
		return printable && c != ' ' && !alpha && !digit, true
	case "space":
		return space, true
	case "upper":
		return c >= 'A' && c <= 'Z', true
	case "xdigit":
		return digit || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F', true
	}
	return false, false
}

// ignoreFrame is what one directory of the workspace contributes: its
// .gitignore's patterns, and whether it is itself ignored.
type ignoreFrame struct {
	parent   *ignoreFrame
	pats     []ignorePattern
	excluded bool
}

// ignoreMatcher answers for one batch of paths; it reads each directory's
// .gitignore at most once.
type ignoreMatcher struct {
	root   string
	global []ignorePattern // the global exclude file's, then info/exclude's
	frames map[string]*ignoreFrame
}

func newIgnoreMatcher(root, infoExclude, globalFile string) *ignoreMatcher {
	m := &ignoreMatcher{root: root, frames: map[string]*ignoreFrame{}}
	if globalFile != "" {
		if b, err := os.ReadFile(globalFile); err == nil {
			m.global = parseIgnorePatterns(b, "")
		}
	}
	if b, err := os.ReadFile(infoExclude); err == nil {
		m.global = append(m.global, parseIgnorePatterns(b, "")...)
	}
	return m
}

// frame returns the frame of dir (relative to the root, "" for it).
func (m *ignoreMatcher) frame(dir string) *ignoreFrame {
	if f := m.frames[dir]; f != nil {
		return f
	}
	f := &ignoreFrame{}
	if dir != "" {
		parent, name := "", dir
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			parent, name = dir[:i], dir[i+1:]
		}
		f.parent = m.frame(parent)
		f.excluded = f.parent.excluded || m.decide(f.parent, dir, len(dir)-len(name), true)
	}
	if !f.excluded {
		// An in-tree .gitignore that is a symbolic link is not read (git
		// opens it with O_NOFOLLOW).
		p := filepath.Join(m.root, dir, ".gitignore")
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				f.pats = parseIgnorePatterns(b, dir)
			}
		}
	}
	m.frames[dir] = f
	return f
}

// decide is the last matching pattern's verdict for path, whose directory
// has the frame f: the deepest .gitignore first, then the exclude files.
func (m *ignoreMatcher) decide(f *ignoreFrame, path string, name int, dir bool) bool {
	for ; f != nil; f = f.parent {
		for i := len(f.pats) - 1; i >= 0; i-- {
			if f.pats[i].matches(path, name, dir) {
				return !f.pats[i].negate
			}
		}
	}
	for i := len(m.global) - 1; i >= 0; i-- {
		if m.global[i].matches(path, name, dir) {
			return !m.global[i].negate
		}
	}
	return false
}

// ignored reports whether path (relative to the root) is ignored: a
// directory of it, or it.
func (m *ignoreMatcher) ignored(path string, dir bool) bool {
	parent, name := "", 0
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent, name = path[:i], i+1
	}
	f := m.frame(parent)
	return f.excluded || m.decide(f, path, name, dir)
}

// configNeedsGit reports whether a git configuration file sets something
// that changes what git ignores beyond the matcher above: core.ignoreCase
// true, core.excludesFile, or an include that could set either. Read
// loosely, erring towards asking git.
func configNeedsGit(config []byte) bool {
	for line := range strings.Lines(strings.ToLower(string(config))) {
		line = strings.Join(strings.Fields(line), "")
		switch {
		case strings.HasPrefix(line, "[include"):
			return true
		case strings.HasPrefix(line, "excludesfile"):
			return true
		case strings.HasPrefix(line, "ignorecase"):
			v := strings.TrimPrefix(strings.TrimPrefix(line, "ignorecase"), "=")
			if v != "false" && v != "no" && v != "off" && v != "0" {
				return true
			}
		}
	}
	return false
}
