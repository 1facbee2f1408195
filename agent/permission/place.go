package permission

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/darman-dev/darman/internal/winpath"
)

// place is where a command line runs, for judging the paths its commands
// name. With an empty root it judges lexically, as Explain does without a
// file system: absolute paths, the home directory and paths that climb
// above the start are outside; nothing is resolved.
type place struct {
	root, realRoot string
	dir, realDir   string
	home           string   // the real home directory, "" when unknown
	gits           []string // see gitDirs
	gitsFound      bool
	cache          map[string]string                 // absolute path → real path
	dirs           map[string]map[string]fs.FileMode // a directory's names and their types, nil when too big to list
	modes          map[string]fs.FileMode            // lstat results by path
	judged         []judged                          // reused by each path's judge
	dirInside      bool                              // realDir is within realRoot
	msys           bool                              // paths are read as Git for Windows' bash reads them (see msysPath)
	wsPath         []string                          // PATH directories in the workspace (see pathShadow)
	wsPathRelative bool                              // PATH has a relative entry
}

// newPlace prepares to judge paths of a line run in dir under the real
// root realRoot; home is the real home directory ("" when unknown).
func newPlace(root, realRoot, dir, home string) *place {
	pl := &place{root: root, realRoot: filepath.Clean(realRoot), dir: dir, home: home, cache: map[string]string{}}
	if dir == root {
		pl.realDir = realRoot
	} else {
		pl.realDir = pl.resolveAbs(dir)
	}
	_, pl.dirInside = relWithin(pl.realRoot, pl.realDir)
	return pl
}

// gitDirs returns the workspace's real git directories (see gitDirs),
// found the first time a write needs them; none when judging lexically.
// From the workspace root, its listing tells that there is no .git.
func (pl *place) gitDirs() []string {
	if pl.lexical() || pl.gitsFound {
		return pl.gits
	}
	pl.gitsFound = true
	if pl.realDir == pl.realRoot {
		if _, _, ok := pl.entry(pl.realRoot, ".git"); !ok {
			return nil
		}
	}
	pl.gits = gitDirs(pl.realRoot)
	return pl.gits
}

// realHome returns the real home directory, "" when there is none.
func realHome() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		return r
	}
	return filepath.Clean(h)
}

// homeRules returns rules with the patterns of path permissions that
// start at the home directory as the shell writes it (~, ~/…, $HOME/…,
// ${HOME}/…) rewritten to the real home directory, the way the paths they
// are matched against are resolved: a rule written with ~/ then matches
// the same files as one written with the absolute home. rules is changed
// in place when one needs it; with no home directory they stay as written.
func homeRules(rules []Rule, home string) []Rule {
	if home == "" {
		return rules
	}
	copied := false
	for i, r := range rules {
		if !isPathPermission(r.Permission) && r.Permission != ProtectedPath {
			continue
		}
		rest, ok := homeRest(r.Pattern)
		if !ok {
			continue
		}
		if !copied {
			rules, copied = slices.Clone(rules), true
		}
		rules[i].Pattern = strings.TrimSuffix(escapePattern(filepath.ToSlash(home)), "/") + rest
	}
	return rules
}

// homeRest returns what follows the home directory in a pattern that
// starts with it ("" or "/…").
func homeRest(pattern string) (string, bool) {
	for _, prefix := range []string{"~", "$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(pattern, prefix); ok && (rest == "" || rest[0] == '/') {
			return rest, true
		}
	}
	return "", false
}

// maxListed bounds the directories whose names are read to look words
// up; a bigger one is looked up word by word.
const maxListed = 512

// entry looks a name up in a directory. A command line names many words
// that are no file at all, so the directory's names are read once and only
// a name it holds costs an lstat, unless the listing gave its type. ok is
// false when the name is not there. p is the name's path when it was
// built for the lstat, "" otherwise.
func (pl *place) entry(dir, name string) (p string, mode fs.FileMode, ok bool) {
	names, read := pl.dirs[dir]
	if !read && dir != pl.realDir && name != "." {
		// Deeper directories see a word or two: lstat them.
		read = true
	}
	if !read {
		names = listNames(dir, maxListed)
		if pl.dirs == nil {
			pl.dirs = map[string]map[string]fs.FileMode{}
		}
		pl.dirs[dir] = names
	}
	if names != nil {
		t, listed := names[name]
		if !listed {
			return "", 0, false
		}
		if t != typeUnknown {
			return "", t, true
		}
	}
	p = joinName(dir, name)
	if m, ok := pl.modes[p]; ok {
		return p, m, m != modeMissing
	}
	if pl.modes == nil {
		pl.modes = map[string]fs.FileMode{}
	}
	m, err := lstatType(p)
	if err != nil {
		pl.modes[p] = modeMissing
		return p, 0, false
	}
	pl.modes[p] = m
	return p, m, true
}

// unnamed reports whether the relative path text, taken from the line's
// own directory inside the workspace, starts with a name that directory
// does not hold and never climbs with "..": nothing there is a link, so it
// lands below that directory, inside the workspace. Most words of a command
// line ("-n", "50", a regex) are such paths, and are settled by the one
// listing of the directory without building where they would land.
func (pl *place) unnamed(text string) bool {
	if pl.lexical() || !pl.dirInside || text == "" || text[0] == '/' || filepath.Separator != '/' {
		return false
	}
	first := ""
	for rest := text; rest != ""; {
		c, after, _ := strings.Cut(rest, "/")
		rest = after
		switch {
		case c == "..":
			return false
		case first == "" && c != "" && c != ".":
			first = c
		}
	}
	if first == "" {
		return false
	}
	_, _, found := pl.entry(pl.realDir, first)
	return !found
}

// modeMissing marks a path lstat found nothing at.
const modeMissing = fs.ModeIrregular | fs.ModeDevice | fs.ModeCharDevice

// typeUnknown marks a listed name whose type the listing did not give:
// it is lstat'ed when a path goes through it.
const typeUnknown = fs.ModeIrregular

// lexical reports whether the place judges without a file system.
func (pl *place) lexical() bool { return pl.root == "" }

// judged is where one path lands.
type judged struct {
	// real is the resolved absolute path (lexically: the cleaned path).
	real string
	// rel is real relative to the workspace root, "" when outside.
	rel string
	// why is set when the path cannot be judged (a pattern too twisted to
	// follow); it is then asked about as outside.
	why string
}

func (j judged) outside() bool { return j.rel == "" }

// judge resolves p, run from the directory sub (relative to the line's
// start, "" for the start itself), to where it lands, appended to out: one
// result, or one per match of a glob.
func (pl *place) judge(out []judged, p Path, sub string) []judged {
	text := p.Text
	if pl.msys && sub != "" && !strings.HasPrefix(sub, "~") {
		d, why := msysDir(sub)
		if why != "" || d == "" {
			return append(out, judged{real: sub + "/" + text, why: "cd goes to " + sub + ": " + why})
		}
		sub = d
	}
	base := pl.startDir(sub)
	if p.Home {
		// "~/x" reads as Text "/x": the rest is relative to the home
		// directory, never to /.
		text = strings.TrimLeft(text, "/")
		if pl.home == "" && !pl.lexical() {
			return append(out, judged{real: "~/" + text, why: "the home directory is not known"})
		}
		base = pl.home
		if pl.lexical() {
			return append(out, judged{real: path.Clean("~/" + text)})
		}
	}
	if !p.Glob {
		return append(out, pl.land(base, text))
	}
	// A pattern component that may match ".." (".*" in an older bash)
	// is also judged as "..".
	comps := strings.Split(text, "/")
	seenMeta := false
	for i, c := range comps {
		if hasMeta(c) {
			seenMeta = true
			if ok, _ := path.Match(c, ".."); ok {
				alt := append(append(append([]string(nil), comps[:i]...), ".."), comps[i+1:]...)
				out = append(out, pl.land(base, unescapeMeta(strings.Join(alt, "/"))))
			}
		} else if c == ".." && seenMeta {
			return append(out, judged{real: text, why: "a pattern followed by .. lands where the matches' links lead"})
		}
	}
	if pl.lexical() {
		return append(out, pl.land(base, unescapeMeta(text)))
	}
	// Judge where the pattern starts before listing anything there.
	prefix := []string{}
	for _, c := range comps {
		if hasMeta(c) {
			break
		}
		prefix = append(prefix, c)
	}
	if start := pl.land(base, strings.Join(prefix, "/")); start.outside() {
		return append(out, start)
	}
	if len(comps) == 1 && !path.IsAbs(text) {
		// The usual "*.go": match the entries already read.
		if _, err := path.Match(text, ""); err != nil {
			return append(out, judged{real: text, why: "the pattern is malformed: " + err.Error()})
		}
		pl.entry(base, ".")
		if names := pl.dirs[base]; names != nil {
			n := len(out)
			for name := range names {
				if ok, _ := path.Match(text, name); ok {
					out = append(out, pl.land(base, name))
				}
			}
			if len(out) == n {
				out = append(out, pl.land(base, unescapeMeta(text)))
			}
			return out
		}
	}
	full := text
	if !path.IsAbs(text) && !(pl.msys && msysAbs(text)) {
		full = base + "/" + text
	}
	matches, err := filepath.Glob(full)
	if err != nil {
		return append(out, judged{real: text, why: "the pattern is malformed: " + err.Error()})
	}
	if len(matches) == 0 {
		return append(out, pl.land(base, unescapeMeta(text)))
	}
	for _, m := range matches {
		out = append(out, pl.land("/", m))
	}
	return out
}

// startDir is the directory a command starts in: the line's own, or one
// cd took it to.
func (pl *place) startDir(sub string) string {
	if pl.lexical() {
		if sub == "" {
			return "."
		}
		if strings.HasPrefix(sub, "~") {
			return "/"
		}
		return path.Clean(sub)
	}
	if sub == "" {
		return pl.realDir
	}
	if rest, ok := strings.CutPrefix(sub, "~"); ok {
		if pl.home == "" {
			return "/"
		}
		return pl.land(pl.home, strings.TrimPrefix(rest, "/")).real
	}
	if path.IsAbs(sub) {
		return pl.resolveAbs(sub)
	}
	return pl.land(pl.realDir, sub).real
}

// land resolves text taken from base (a real directory, or "." lexically).
func (pl *place) land(base, text string) judged {
	if pl.lexical() {
		var p string
		switch {
		case path.IsAbs(text):
			p = path.Clean(text)
		case strings.HasPrefix(base, "~"):
			p = path.Clean(base + "/" + text)
		default:
			p = path.Clean(base + "/" + text)
		}
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "~") {
			return judged{real: p}
		}
		return judged{real: p, rel: p}
	}
	var real string
	switch {
	case filepath.IsAbs(text):
		real = pl.resolveAbs(filepath.Clean(text))
	case pl.msys && climbsAboveVolume(base, text):
		return judged{real: text, why: "Git bash takes .. above a drive's root to its own root (/), outside the workspace"}
	default:
		real = pl.walk(base, text)
	}
	j := judged{real: real}
	if rel, ok := relWithin(pl.realRoot, real); ok {
		j.rel = rel
	}
	return j
}

// climbsAboveVolume reports whether the relative path text, taken from
// the absolute directory base, uses ".." above base's volume root (C:\
// or a share), where Windows stays at the root but Git bash's MSYS goes
// on into its own root.
func climbsAboveVolume(base, text string) bool {
	b := winpath.Clean(base)
	depth := 0
	for _, c := range strings.Split(b[len(winpath.Volume(b)):], `\`) {
		if c != "" {
			depth++
		}
	}
	for _, c := range strings.FieldsFunc(text, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch c {
		case ".":
		case "..":
			if depth == 0 {
				return true
			}
			depth--
		default:
			depth++
		}
	}
	return false
}

// walk resolves a relative path from a real directory one component at a
// time, so that a word that names nothing costs one lstat.
func (pl *place) walk(cur, rel string) string {
	for rest := rel; rest != ""; {
		c, after, more := strings.Cut(rest, "/")
		rest = after
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next, mode, ok := pl.entry(cur, c)
		if !ok {
			// Nothing there, so nothing below it is a link.
			switch {
			case more:
				return filepath.Join(cur, c, rest)
			case next != "":
				return next
			}
			return joinName(cur, c)
		}
		if next == "" {
			next = joinName(cur, c)
		}
		if mode&fs.ModeSymlink != 0 {
			real := pl.resolveAbs(next)
			if more {
				// What follows the link (.. included) is resolved from
				// where it leads.
				return pl.walk(real, rest)
			}
			return real
		}
		cur = next
	}
	return cur
}

// joinName is filepath.Join(dir, name) for a clean directory, without
// cleaning again when name is a plain name in it, as the names of a path
// split at '/' mostly are.
func joinName(dir, name string) string {
	if filepath.Separator != '/' || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return filepath.Join(dir, name)
	}
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// isCleanAbs reports whether p is an absolute slash-separated path that
// filepath.Clean leaves as it is: no empty, "." or ".." element and no
// trailing slash.
func isCleanAbs(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	if p == "/" {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	// Every element starts after a '/': it must not be empty, "." or "..".
	for i := 0; i < len(p)-1; i++ {
		if p[i] != '/' {
			continue
		}
		switch next := p[i+1:]; {
		case next[0] == '/':
			return false
		case next[0] == '.' && (len(next) == 1 || next[1] == '/'):
			return false
		case next[0] == '.' && next[1] == '.' && (len(next) == 2 || next[2] == '/'):
			return false
		}
	}
	return true
}

// relWithin returns the slash-separated path of p relative to the clean
// root and whether p is within root (see within); a clean absolute p,
// as resolving yields, is judged by its prefix.
func relWithin(root, p string) (string, bool) {
	if filepath.Separator != '/' || !isCleanAbs(p) {
		if !within(root, p) {
			return "", false
		}
		rel, _ := filepath.Rel(root, p)
		return filepath.ToSlash(rel), true
	}
	switch {
	case p == root:
		return ".", true
	case root == "/":
		return p[1:], true
	case len(p) > len(root) && p[len(root)] == '/' && strings.HasPrefix(p, root):
		return p[len(root)+1:], true
	}
	return "", false
}

// resolveAbs resolves the symlinks of an absolute path; the part that does
// not exist is appended as it is.
func (pl *place) resolveAbs(p string) string {
	if r, ok := pl.cache[p]; ok {
		return r
	}
	prefix, rest := p, ""
	for {
		real, err := filepath.EvalSymlinks(prefix)
		if err == nil {
			r := filepath.Join(real, rest)
			pl.cache[p] = r
			return r
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			r := filepath.Clean(p)
			pl.cache[p] = r
			return r
		}
		dir, base := splitLast(prefix)
		if dir == prefix {
			r := filepath.Clean(p)
			pl.cache[p] = r
			return r
		}
		prefix, rest = dir, filepath.Join(base, rest)
	}
}

// harmless are the files outside the workspace that reading or writing
// gives nothing away and changes nothing.
func harmless(real string) bool {
	switch real {
	case "/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/urandom", "/dev/random":
		return true
	}
	return false
}
