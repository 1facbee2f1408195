package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/darman-dev/darman/internal/config"
)

// Command is a prompt template the user runs by name: /review, or
// /git:commit for command/git/commit.md.
type Command struct {
	// Name is the file's path under its command directory, without ".md",
	// with ":" between directories.
	Name string
	// Description, Agent, Model and ArgumentHint come from the front
	// matter keys description, agent, model and argument-hint; "" when
	// absent.
	Description  string
	Agent        string
	Model        string
	ArgumentHint string
	// Fields holds every front matter key, the ones above included, for
	// keys other tools define (allowed-tools, ...). Nil when the file has no
	// front matter.
	Fields Frontmatter
	// Template is the body after the front matter; see Expand.
	Template string
	// Path is the file, absolute.
	Path   string
	Origin Origin
	// Workspace says the file is the workspace's (found in the workspace
	// or a parent up to the repository root), not the user's.
	Workspace bool
	// Untrusted says its folder is not trusted (see Commands.Distrust):
	// its !`cmd` lines do not run, and Expand fails with ErrUntrusted.
	Untrusted bool
}

// ErrUntrusted is returned (wrapped) by Expand for a !`cmd` of a
// workspace's command in a folder the user has not trusted: a cloned
// repository's command file must not run a shell command for the user
// who typed its name.
var ErrUntrusted = errors.New("the folder is not trusted, and a workspace's command runs its shell commands only in a folder you trust")

// Commands is the set of commands found for a workspace. It does not change
// after LoadCommands returns and is safe for concurrent use; load again to
// see files changed since.
type Commands struct {
	byName map[string]Command
	names  []string
	// Shadowed lists the commands hidden by another of the same name.
	Shadowed []Shadowed
	// Problems lists the files that were skipped and why.
	Problems []Problem
}

// LoadCommands finds the commands of a workspace, in this order of
// precedence when two share a name: .darman/command/ in the project
// directories (nearest first), command/ in the user directory, then
// .claude/commands/ in the project directories and the home directory.
// Every *.md file under those directories is a command; subdirectories
// give "dir:name" names; files and directories whose name starts with "."
// are skipped. A file that cannot be read or whose front matter does not
// parse is reported in Problems, not loaded.
func LoadCommands(d Dirs) *Commands {
	c := &Commands{byName: map[string]Command{}}
	for _, p := range d.places(filepath.Join(".darman", "command"), "command", filepath.Join(".claude", "commands")) {
		walkMarkdown(p.dir, &c.Problems, func(path, rel string) {
			cmd, err := readCommand(path, rel, p.origin)
			cmd.Workspace = p.workspace
			if err != nil {
				c.Problems = append(c.Problems, Problem{Path: path, Err: err})
				return
			}
			if prev, ok := c.byName[cmd.Name]; ok {
				c.Shadowed = append(c.Shadowed, Shadowed{Name: cmd.Name, Path: path, By: prev.Path})
				return
			}
			c.byName[cmd.Name] = cmd
			c.names = append(c.names, cmd.Name)
		})
	}
	slices.Sort(c.names)
	return c
}

// With returns the commands of c and then extra (darman's built-in
// commands, Origin Builtin), a command of c taking the place of an extra
// one of its name. c is not changed; a nil c has only extra.
func (c *Commands) With(extra ...Command) *Commands {
	out := &Commands{byName: map[string]Command{}}
	if c != nil {
		maps.Copy(out.byName, c.byName)
		out.names = slices.Clone(c.names)
		out.Shadowed, out.Problems = slices.Clone(c.Shadowed), slices.Clone(c.Problems)
	}
	for _, e := range extra {
		if prev, ok := out.byName[e.Name]; ok {
			out.Shadowed = append(out.Shadowed, Shadowed{Name: e.Name, Path: "darman's built-in /" + e.Name, By: prev.Path})
			continue
		}
		out.byName[e.Name] = e
		out.names = append(out.names, e.Name)
	}
	slices.Sort(out.names)
	return out
}

// Distrust returns the commands with the workspace's marked Untrusted:
// what a front uses when the folder is not trusted.
func (c *Commands) Distrust() *Commands {
	out := &Commands{byName: make(map[string]Command, len(c.byName)), names: c.names, Shadowed: c.Shadowed, Problems: c.Problems}
	for n, cmd := range c.byName {
		cmd.Untrusted = cmd.Workspace
		out.byName[n] = cmd
	}
	return out
}

// Widening lists the workspace's commands whose templates run shell
// commands (!`cmd`), for the trust question: running them widens what
// a folder does, so they wait for trust. Sources are relative to root.
func (c *Commands) Widening(root string) []config.Item {
	var items []config.Item
	for _, n := range c.names {
		cmd := c.byName[n]
		if !cmd.Workspace {
			continue
		}
		lines := shellLines(cmd.Template)
		if len(lines) == 0 {
			continue
		}
		source := cmd.Path
		if rel, err := filepath.Rel(root, cmd.Path); err == nil && filepath.IsLocal(rel) {
			source = filepath.ToSlash(rel)
		}
		items = append(items, config.Item{Source: source, Key: "command /" + cmd.Name, Value: "runs !`" + strings.Join(lines, "`, !`") + "`"})
	}
	return items
}

// Get returns the command called name, without its leading "/".
func (c *Commands) Get(name string) (Command, bool) {
	cmd, ok := c.byName[name]
	return cmd, ok
}

// List returns the commands sorted by name.
func (c *Commands) List() []Command {
	out := make([]Command, len(c.names))
	for i, n := range c.names {
		out[i] = c.byName[n]
	}
	return out
}

func readCommand(path, rel string, origin Origin) (Command, error) {
	name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ".md")), "/", ":")
	if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return Command{}, fmt.Errorf("the command name %q has white space, so it cannot be typed; rename the file", name)
	}
	text, err := readText(path, maxMarkdownFile)
	if err != nil {
		return Command{}, err
	}
	fm, body, err := splitFrontmatter(text)
	if err != nil {
		return Command{}, err
	}
	return Command{
		Name:         name,
		Description:  oneLine(fm["description"]),
		Agent:        strings.TrimSpace(fm["agent"]),
		Model:        strings.TrimSpace(fm["model"]),
		ArgumentHint: oneLine(fm["argument-hint"]),
		Fields:       fm,
		Template:     strings.TrimLeft(body, "\r\n"),
		Path:         path,
		Origin:       origin,
	}, nil
}

// Limits on a command or skill directory, against a home directory full of
// unrelated Markdown.
const (
	maxWalkDepth = 6
	maxWalkFiles = 2000
)

// walkMarkdown calls f for every *.md file under dir, in lexical order,
// with its path relative to dir. A missing dir is no problem.
func walkMarkdown(dir string, problems *[]Problem, f func(path, rel string)) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			*problems = append(*problems, Problem{Path: dir, Err: err})
		}
		return
	}
	seen := 0
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			*problems = append(*problems, Problem{Path: path, Err: err})
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= maxWalkDepth-1 {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".md") {
			return nil
		}
		if seen++; seen > maxWalkFiles {
			*problems = append(*problems, Problem{Path: dir, Err: fmt.Errorf("more than %d Markdown files; the rest are skipped", maxWalkFiles)})
			return filepath.SkipAll
		}
		f(path, rel)
		return nil
	})
	if err != nil {
		*problems = append(*problems, Problem{Path: dir, Err: err})
	}
}

// oneLine collapses white space, for descriptions and hints shown on one
// line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
