package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/config"
)

// RefreshInterval is how often a front calls Refresh to follow the agent
// files: a look is a stat of the few agent directories (about 15 µs), so
// polling costs nothing worth a file-watching dependency, and it works the
// same on every OS and file system.
const RefreshInterval = 2 * time.Second

// Options say where a Catalog looks.
type Options struct {
	// Dirs are the workspace and the user's directories
	// (prompt.LocateDirs); the zero value reads no files.
	Dirs prompt.Dirs
	// Config is the configuration's "agents" key; nil defines none.
	Config config.Agents
	// Logger hears, at debug level, the keys of agent files darman does
	// not use (Claude Code's color, memory, ...); nil discards.
	Logger *slog.Logger
	// MCPServers are the configured MCP servers' names: a tools list may
	// name their tools as SERVER_TOOL.
	MCPServers []string
	// Trusted lets the workspace's agent files (.darman/agent and
	// .claude/agents in the workspace and its parents) widen: their
	// permission blocks' allow rules and their replacements of the
	// built-in agents. False keeps only what narrows (see Widening).
	Trusted bool
}

// Problem is an agent file or definition that was left out, and why.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) String() string { return p.Path + ": " + p.Err.Error() }

// Catalog is a workspace's agents. Its methods are safe for concurrent
// use; Refresh reads the files again when they changed.
type Catalog struct {
	opts Options

	mu       sync.Mutex
	agents   []Agent // built-ins first, then by name
	byName   map[string]int
	problems []Problem
	widening []config.Item // the workspace files' widening settings
	stamp    string        // the directories' and files' names, sizes and times
}

// Load reads the agents of a workspace. It does not fail: files it cannot
// use are left out and listed in Problems.
func Load(opts Options) *Catalog {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Catalog{opts: opts}
	c.stamp = c.load()
	return c
}

// List returns every agent, the built-in ones first, then by name.
func (c *Catalog) List() []Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.agents)
}

// Get returns the agent named name.
func (c *Catalog) Get(name string) (Agent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.byName[name]
	if !ok {
		return Agent{}, false
	}
	return c.agents[i], true
}

// Problems returns the files and definitions left out at the last load.
func (c *Catalog) Problems() []Problem {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.problems)
}

// ProblemOf returns why an agent named name was left out at the last
// load: the problem of its file (NAME.md) or of the configuration's
// definition of it.
func (c *Catalog) ProblemOf(name string) (Problem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		if p.Path == "config agents."+name || strings.TrimSuffix(filepath.Base(p.Path), ".md") == name {
			return p, true
		}
	}
	return Problem{}, false
}

// Widening returns what the workspace's agent files would widen at the
// last load: allow rules of their permission blocks and replacements of
// the built-in agents; applied only when Options.Trusted.
func (c *Catalog) Widening() []config.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.widening)
}

// Names are the agents' names, for messages.
func (c *Catalog) Names(keep func(Agent) bool) []string {
	var out []string
	for _, a := range c.List() {
		if keep == nil || keep(a) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Refresh reads the agent files again when one was added, removed or
// changed since the last load (a stat of the few agent directories and
// their files), and reports whether the list of agents changed.
func (c *Catalog) Refresh() bool {
	stamp := c.scan()
	c.mu.Lock()
	same := stamp == c.stamp
	c.mu.Unlock()
	if same {
		return false
	}
	before := c.List()
	stamp = c.load()
	c.mu.Lock()
	c.stamp = stamp
	c.mu.Unlock()
	return !slices.EqualFunc(before, c.List(), equalAgents)
}

func equalAgents(a, b Agent) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Mode == b.Mode && a.claudeSub == b.claudeSub && a.Prompt == b.Prompt &&
		slices.Equal(a.Tools, b.Tools) && a.Model == b.Model && slices.Equal(a.Permission, b.Permission) &&
		a.Path == b.Path && a.MaxSteps == b.MaxSteps && equalPtr(a.Temperature, b.Temperature)
}

func equalPtr(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// place is one agent directory, with what its files are called in Source
// and whether it is the workspace's.
type place struct {
	dir       string
	source    string
	workspace bool
}

func (c *Catalog) places() []place {
	var out []place
	for _, p := range c.opts.Dirs.Places(filepath.Join(".darman", "agent"), "agent", filepath.Join(".claude", "agents")) {
		src := "project"
		switch p.Origin {
		case prompt.User:
			src = "user"
		case prompt.Claude:
			src = "claude"
		}
		home := c.opts.Dirs.Home != "" && p.Dir == filepath.Join(c.opts.Dirs.Home, ".claude", "agents")
		out = append(out, place{p.Dir, src, p.Origin == prompt.Project || p.Origin == prompt.Claude && !home})
	}
	return out
}

// scan is what Refresh compares (load makes the same while it reads): every agent directory's state and its
// Markdown files' names, sizes and modification times.
func (c *Catalog) scan() string {
	var b strings.Builder
	for _, p := range c.places() {
		entries, err := os.ReadDir(p.dir)
		if err == nil {
			stampDir(&b, p.dir, entries)
		}
	}
	return b.String()
}

func stampDir(b *strings.Builder, dir string, entries []os.DirEntry) {
	b.WriteString(dir)
	b.WriteByte('\n')
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
}

// load builds the list: built-ins, then files from the lowest precedence
// up (each file of a name replaces what a lower place defined), then the
// configuration.
func (c *Catalog) load() (stamp string) {
	list := builtins()
	byName := map[string]int{}
	for i, a := range list {
		byName[a.Name] = i
	}
	var problems []Problem
	var widening []config.Item
	set := func(a Agent) {
		if i, ok := byName[a.Name]; ok {
			old := list[i]
			if old.Path != "" {
				a.Shadowed = append(slices.Clone(old.Shadowed), old.Path)
			}
			// A file that redefines a built-in agent keeps its lock, and
			// its mode: build and plan always run a session's turns.
			a.Lock = old.Lock
			if old.Source == "builtin" {
				a.Mode = old.Mode
			}
			list[i] = a
			return
		}
		byName[a.Name] = len(list)
		list = append(list, a)
	}
	places := c.places()
	stamps := make([]string, len(places))
	for i := len(places) - 1; i >= 0; i-- {
		p := places[i]
		entries, err := os.ReadDir(p.dir)
		if err == nil {
			var b strings.Builder
			stampDir(&b, p.dir, entries)
			stamps[i] = b.String()
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				problems = append(problems, Problem{Path: p.dir, Err: err})
			}
			continue
		}
		// Within one directory, the last name wins; ReadDir sorts them.
		for j := len(entries) - 1; j >= 0; j-- {
			e := entries[j]
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(p.dir, e.Name())
			a, err := c.readFile(path, p.source)
			if err != nil {
				problems = append(problems, Problem{Path: path, Err: err})
				continue
			}
			if p.workspace {
				var keep bool
				a, keep = c.narrow(a, &widening)
				if !keep {
					continue
				}
			}
			set(a)
		}
	}
	names := slices.Sorted(maps.Keys(c.opts.Config))
	for _, name := range names {
		def := c.opts.Config[name]
		base, ok := Agent{}, false
		if i, found := byName[name]; found {
			base, ok = list[i], true
		}
		if def.Disable {
			if ok {
				list = slices.Delete(list, byName[name], byName[name]+1)
				byName = reindex(list)
			}
			continue
		}
		a, err := fromConfig(name, def, base, ok, c.opts.MCPServers)
		if err != nil {
			problems = append(problems, Problem{Path: "config agents." + name, Err: err})
			continue
		}
		set(a)
		byName = reindex(list)
	}
	// Built-ins first, the others by name.
	rank := func(a Agent) int {
		switch a.Name {
		case Build:
			return 0
		case Plan:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(list, func(a, b Agent) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	c.mu.Lock()
	c.agents, c.byName, c.problems, c.widening = list, reindex(list), problems, widening
	c.mu.Unlock()
	return strings.Join(stamps, "")
}

func reindex(list []Agent) map[string]int {
	m := make(map[string]int, len(list))
	for i, a := range list {
		m[a.Name] = i
	}
	return m
}

// narrow applies the trust rule to a workspace agent file: it records
// what the file would widen and, unless the workspace is trusted, leaves
// it out (keep false: a replacement of a built-in agent) or keeps only its
// deny and ask rules.
func (c *Catalog) narrow(a Agent, widening *[]config.Item) (_ Agent, keep bool) {
	source := a.Path
	if rel, err := filepath.Rel(c.opts.Dirs.Root, a.Path); err == nil && !strings.HasPrefix(rel, "..") {
		source = filepath.ToSlash(rel)
	}
	if a.Name == Build || a.Name == Plan {
		*widening = append(*widening, config.Item{Source: source, Key: "agent " + a.Name, Value: "replaces darman's built-in " + a.Name + " agent"})
		return a, c.opts.Trusted
	}
	var allow []string
	kept := a.Permission[:0:0]
	for _, r := range a.Permission {
		if r.Action == permission.Allow {
			allow = append(allow, r.String())
			if !c.opts.Trusted {
				continue
			}
		}
		kept = append(kept, r)
	}
	if len(allow) > 0 {
		*widening = append(*widening, config.Item{Source: source, Key: "agent " + a.Name + " permission", Value: strings.Join(allow, ", ")})
	}
	a.Permission = kept
	return a, true
}
