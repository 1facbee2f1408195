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
}

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
