package prompt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/darman-dev/darman/internal/config"
)

// Dirs says where darman looks for instruction files, commands and skills.
// The zero value looks nowhere.
type Dirs struct {
	// Root is the workspace root, an absolute path. The project directories
	// are Root and its parents up to the first one that holds .git (all of
	// them up to / when none does), as for configuration files.
	Root string
	// User is darman's per-user config directory (config.UserDir:
	// ~/.config/darman on Linux); "" means none.
	User string
	// Home is the user's home directory, for ~/.claude; "" means none.
	Home string
}

// LocateDirs fills Dirs from the environment: User from config.UserDir and
// Home from HOME (USERPROFILE on Windows). lookupEnv nil means
// os.LookupEnv. A directory the environment does not give is left "".
func LocateDirs(root string, lookupEnv func(string) (string, bool)) Dirs {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	d := Dirs{Root: root}
	if u, err := config.UserDir(lookupEnv); err == nil {
		d.User = u
	}
	d.Home = home(lookupEnv)
	return d
}

func home(lookupEnv func(string) (string, bool)) string {
	name := "HOME"
	if runtime.GOOS == "windows" {
		name = "USERPROFILE"
	}
	if h, ok := lookupEnv(name); ok && filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	return ""
}

// projectDirs returns Root and its parents up to the first directory that
// holds .git (a directory, or a file for worktrees and submodules), nearest
// first.
func (d Dirs) projectDirs() []string {
	if d.Root == "" {
		return nil
	}
	var dirs []string
	for dir := filepath.Clean(d.Root); ; {
		dirs = append(dirs, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dirs
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dirs
		}
		dir = parent
	}
}

// Origin says which kind of place a command or skill came from. Lower
// values win when names collide.
type Origin int

const (
	// Project is .darman/ in the workspace or a parent up to the repository
	// root; the nearest directory wins.
	Project Origin = iota
	// User is darman's per-user config directory.
	User
	// Claude is the common .claude/ layout: the project's, then ~/.claude.
	Claude
	// Builtin is a command darman runs itself (agent/session's /help,
	// /new, ...): it has no file and no template, and a file of its name
	// takes its place.
	Builtin
)

func (o Origin) String() string {
	switch o {
	case Project:
		return "project"
	case User:
		return "user"
	case Claude:
		return "claude"
	case Builtin:
		return "built-in"
	}
	return fmt.Sprintf("Origin(%d)", int(o))
}

// place is one directory to search, in precedence order.
type place struct {
	dir    string
	origin Origin
	// workspace: a project directory's (the workspace or a parent up to
	// the repository root), not the user's own.
	workspace bool
}

// places lists where commands or skills live: projectSub under each project
// directory, userSub under User, claudeSub under each project directory and
// Home. A directory reached twice (the home directory is also a project
// directory) is searched once, at its first place.
func (d Dirs) places(projectSub, userSub, claudeSub string) []place {
	var ps []place
	project := d.projectDirs()
	for _, dir := range project {
		ps = append(ps, place{filepath.Join(dir, projectSub), Project, true})
	}
	if d.User != "" {
		ps = append(ps, place{filepath.Join(d.User, userSub), User, false})
	}
	claudeDirs := project
	if d.Home != "" && !slices.Contains(project, d.Home) {
		claudeDirs = append(slices.Clip(claudeDirs), d.Home)
	}
	for _, dir := range claudeDirs {
		ps = append(ps, place{filepath.Join(dir, claudeSub), Claude, slices.Contains(project, dir)})
	}
	var out []place
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.dir] {
			seen[p.dir] = true
			out = append(out, p)
		}
	}
	return out
}

// Problem is a file that was skipped, or read only in part, and why.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) String() string { return p.Path + ": " + p.Err.Error() }

// Shadowed is a command or skill hidden by another of the same name.
type Shadowed struct {
	Name string
	// Path is the hidden file; By is the file used instead.
	Path, By string
}

// maxMarkdownFile bounds the command, skill and instruction files read.
const maxMarkdownFile = 1 << 20

var errTooLarge = errors.New("file too large")

// readText reads a text file, refusing what could hang or flood the prompt:
// named pipes, devices, directories, files over limit bytes, and binary
// files.
func readText(path string, limit int64) (string, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", err
	case fi.IsDir():
		return "", errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return "", errors.New("not a regular file")
	case fi.Size() > limit:
		return "", fmt.Errorf("%w: %d bytes, more than the %d read", errTooLarge, fi.Size(), limit)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if int64(len(data)) > limit {
		return "", fmt.Errorf("%w: more than the %d bytes read", errTooLarge, limit)
	}
	if isBinary(data) {
		return "", errors.New("binary file, not text")
	}
	return string(data), nil
}

// isBinary looks for a NUL byte near the start, as git does.
func isBinary(data []byte) bool {
	return slices.Contains(data[:min(len(data), 8000)], 0)
}

// shortPath names a file for the model and for people: relative to root
// when inside it, ~/... under home, absolute otherwise. It always uses
// forward slashes inside the relative forms.
func shortPath(root, home, path string) string {
	if rel, ok := within(root, path); ok {
		return filepath.ToSlash(rel)
	}
	if rel, ok := within(home, path); ok {
		return "~/" + filepath.ToSlash(rel)
	}
	return path
}

// within returns path relative to dir when path is dir or below it, by
// their names alone (symbolic links are not followed).
func within(dir, path string) (string, bool) {
	if dir == "" {
		return "", false
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}
