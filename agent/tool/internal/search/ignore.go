package search

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Which files glob, grep and list skip, the same with ripgrep and without:
//
//   - any entry named .git, and symbolic links (not followed);
//   - what ignore files say, in every directory from the filesystem root
//     down to the file: .rgignore, then .ignore, then .gitignore, the
//     nearest file of a kind deciding first and the kinds in that order;
//     .gitignore files are read up to and including the directory holding
//     the repository (.git), not above it;
//   - last, .darmanignore at the workspace root, for paths inside it.
//
// Patterns follow gitignore: "#" comments, "!" re-includes, a trailing "/"
// matches directories only, a "/" elsewhere anchors the pattern to the
// file's directory, and a pattern without one matches at any depth. An
// ignored directory is not entered, so nothing under it can be re-included.
// Hidden files are searched. Git's global excludes and .git/info/exclude
// are not read.

// ignoreRule is one line of an ignore file.
type ignoreRule struct {
	w       *Wildcard
	negate  bool
	dirOnly bool
}

// ignoreFile is the rules of one ignore file, matched against paths
// relative to its directory.
type ignoreFile struct {
	rules []ignoreRule
}

// parseIgnore reads gitignore-style rules. Lines that do not compile are
// skipped, as git and ripgrep skip them.
func parseIgnore(data []byte) *ignoreFile {
	f := &ignoreFile{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if r, ok := parseIgnoreLine(line); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	// Trailing spaces go, unless quoted with a backslash.
	trimmed := strings.TrimRight(line, " ")
	if len(trimmed) < len(line) && strings.HasSuffix(trimmed, `\`) && !strings.HasSuffix(trimmed, `\\`) {
		trimmed += " "
	}
	line = trimmed
	var r ignoreRule
	anchored := false
	switch {
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	default:
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		if strings.HasPrefix(line, "/") {
			line = line[1:]
			anchored = true
		}
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		// An escaped final slash ("dir\/") loses its escape too.
		line = strings.TrimSuffix(strings.TrimSuffix(line, "/"), `\`)
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") {
		line = "**/" + line
	}
	if strings.HasSuffix(line, "/**") {
		line += "/*"
	}
	w, err := CompileWildcard(line)
	if err != nil {
		return ignoreRule{}, false
	}
	r.w = w
	return r, true
}

// match reports whether some rule matches rel (a path relative to the
// file's directory), and if so whether the last such rule ignores it.
func (f *ignoreFile) match(rel string, isDir bool) (matched, ignored bool) {
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.w.Match(rel) {
			return true, !r.negate
		}
	}
	return false, false
}

// ignoreFrame is the ignore files of one directory.
type ignoreFrame struct {
	dir            string // absolute, clean
	rg, dot, git   *ignoreFile
	hasGit         bool // the directory holds a repository
	parent         *ignoreFrame
	anyIgnoreFiles bool // this frame or one above has an ignore file
}

// loadFrame reads dir's ignore files into a frame below parent. names,
// when not nil, says which of the ignore files and .git the directory has
// (the walk knows from listing it), sparing the lookups of the others.
func loadFrame(dir string, parent *ignoreFrame, names map[string]bool) *ignoreFrame {
	f := &ignoreFrame{dir: dir, parent: parent}
	read := func(name string) *ignoreFile {
		if names != nil && !names[name] {
			return nil
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		return parseIgnore(data)
	}
	f.rg, f.dot, f.git = read(".rgignore"), read(".ignore"), read(".gitignore")
	if names != nil {
		f.hasGit = names[".git"]
	} else if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		f.hasGit = true
	}
	f.anyIgnoreFiles = f.rg != nil || f.dot != nil || f.git != nil || parent != nil && parent.anyIgnoreFiles
	return f
}

// ancestorFrames loads the frames of every directory above dir, from the
// filesystem root down; it returns the frame of dir's parent (nil for /).
func ancestorFrames(dir string) *ignoreFrame {
	var dirs []string
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if dir == filepath.Dir(dir) {
		return nil
	}
	var f *ignoreFrame
	for i := len(dirs) - 1; i >= 0; i-- {
		f = loadFrame(dirs[i], f, nil)
	}
	return f
}

// ignorer decides what the walk skips: the frames of the directories above
// a path, and the workspace's .darmanignore.
type ignorer struct {
	root   string      // the workspace root
	darman *ignoreFile // nil when there is none
}

func newIgnorer(root string) *ignorer {
	ig := &ignorer{root: root}
	if data, err := os.ReadFile(filepath.Join(root, ".darmanignore")); err == nil {
		ig.darman = parseIgnore(data)
	}
	return ig
}

// ignored decides the entry at abs, in the directory whose frame is f.
func (ig *ignorer) ignored(f *ignoreFrame, abs string, isDir bool) bool {
	if f.anyIgnoreFiles {
		kinds := [...]func(*ignoreFrame) *ignoreFile{
			func(f *ignoreFrame) *ignoreFile { return f.rg },
			func(f *ignoreFrame) *ignoreFile { return f.dot },
		}
		for _, kind := range kinds {
			for fr := f; fr != nil; fr = fr.parent {
				if file := kind(fr); file != nil {
					if m, ign := file.match(relTo(fr.dir, abs), isDir); m {
						return ign
					}
				}
			}
		}
		for fr := f; fr != nil; fr = fr.parent {
			if fr.git != nil {
				if m, ign := fr.git.match(relTo(fr.dir, abs), isDir); m {
					return ign
				}
			}
			if fr.hasGit {
				break
			}
		}
	}
	if ig.darman != nil {
		if rel, ok := strings.CutPrefix(abs, ig.root+"/"); ok {
			if m, ign := ig.darman.match(rel, isDir); m {
				return ign
			}
		}
	}
	return false
}

// relTo returns abs relative to dir, which lies above it.
func relTo(dir, abs string) string {
	if dir == "/" {
		return abs[1:]
	}
	return abs[len(dir)+1:]
}
