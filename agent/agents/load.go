package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/config"
)

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
	stamp    string // the directories' and files' names, sizes and times
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
	return a.Name == b.Name && a.Description == b.Description && a.Mode == b.Mode && a.Prompt == b.Prompt &&
		slices.Equal(a.Tools, b.Tools) && a.Model == b.Model && slices.Equal(a.Permission, b.Permission) &&
		a.Path == b.Path && a.MaxSteps == b.MaxSteps && equalPtr(a.Temperature, b.Temperature)
}

func equalPtr(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// place is one agent directory, with what its files are called in Source.
type place struct {
	dir    string
	source string
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
		out = append(out, place{p.Dir, src})
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
	set := func(a Agent) {
		if i, ok := byName[a.Name]; ok {
			old := list[i]
			if old.Path != "" {
				a.Shadowed = append(slices.Clone(old.Shadowed), old.Path)
			}
			// A file that redefines a built-in agent keeps its lock.
			a.Lock = old.Lock
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
			set(a)
		}
	}
	names := slices.Sorted(mapKeys(c.opts.Config))
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
		a, err := fromConfig(name, def, base, ok)
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
	c.agents, c.byName, c.problems = list, reindex(list), problems
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

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fromConfig applies the configuration's definition of name over base (a
// built-in agent or a file's, when exists).
func fromConfig(name string, def config.AgentConfig, base Agent, exists bool) (Agent, error) {
	if err := checkName(name); err != nil {
		return Agent{}, err
	}
	a := base
	if !exists {
		a = Agent{Name: name, Mode: All}
	}
	a.Source = "config"
	if def.Description != "" {
		a.Description = def.Description
	}
	if def.Mode != "" {
		a.Mode = Mode(def.Mode)
	}
	if def.Model != "" {
		a.Model = def.Model
	}
	if def.Prompt != "" {
		a.Prompt = def.Prompt
	}
	if def.Tools != nil {
		a.Tools = toolNames(def.Tools, nil)
	}
	for _, r := range def.Permission {
		a.Permission = append(slices.Clip(a.Permission), permission.Rule{Permission: r.Permission, Pattern: r.Pattern, Action: permission.Action(r.Action)})
	}
	if def.Temperature != nil {
		t := *def.Temperature
		a.Temperature = &t
	}
	if def.MaxSteps > 0 {
		a.MaxSteps = def.MaxSteps
	}
	if !exists && a.Description == "" {
		return Agent{}, errors.New("a new agent needs a description (what it is for)")
	}
	return a, nil
}

// checkName accepts the names Claude Code's files use: letters, digits,
// '-', '_' and '.'.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("the name %q must be 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("the name %q may hold only letters, digits, '-', '_' and '.'", name)
		}
	}
	return nil
}

// known are the front matter keys darman reads; Claude Code's others
// (color, memory, hooks, ...) are logged and left alone.
var known = []string{"name", "description", "tools", "model", "mode", "permission", "temperature", "maxSteps"}

// readFile reads one agent file: front matter, then the prompt.
func (c *Catalog) readFile(path, source string) (Agent, error) {
	text, err := prompt.ReadText(path)
	if err != nil {
		return Agent{}, err
	}
	fm, body, err := prompt.SplitFrontmatter(text)
	if err != nil {
		return Agent{}, err
	}
	a := Agent{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Mode: All, Prompt: strings.TrimSpace(body), Path: path, Source: source}
	if source == "claude" {
		// Claude Code's sub-agents run only through its Task tool.
		a.Mode = Subagent
	}
	if n := strings.TrimSpace(fm["name"]); n != "" {
		a.Name = n
	}
	if err := checkName(a.Name); err != nil {
		return Agent{}, err
	}
	a.Description = strings.TrimSpace(fm["description"])
	if a.Description == "" {
		return Agent{}, errors.New("the front matter has no description: say what the agent is for (description: ...)")
	}
	if t, ok := fm["tools"]; ok {
		a.Tools = toolNames(splitList(t), func(name string) {
			c.opts.Logger.Debug("agents: a tool darman does not have; kept for MCP tools of that name", "file", path, "tool", name)
		})
	}
	switch m := strings.TrimSpace(fm["model"]); {
	case m == "", m == "inherit", !strings.Contains(m, "/"):
		if m != "" && m != "inherit" {
			c.opts.Logger.Debug("agents: a model alias darman does not resolve; the session's model is used", "file", path, "model", m)
		}
	default:
		a.Model = m
	}
	if m := strings.TrimSpace(fm["mode"]); m != "" {
		switch Mode(m) {
		case Primary, Subagent, All:
			a.Mode = Mode(m)
		default:
			return Agent{}, fmt.Errorf("mode: %q is not primary, subagent or all", m)
		}
	}
	if t := strings.TrimSpace(fm["temperature"]); t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || v < 0 {
			return Agent{}, fmt.Errorf("temperature: %q is not a number of 0 or more", t)
		}
		a.Temperature = &v
	}
	if s := strings.TrimSpace(fm["maxSteps"]); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return Agent{}, fmt.Errorf("maxSteps: %q is not a whole number of 1 or more", s)
		}
		a.MaxSteps = v
	}
	if p, ok := fm["permission"]; ok {
		rules, err := permissionRules(p)
		if err != nil {
			return Agent{}, fmt.Errorf("permission: %w", err)
		}
		a.Permission = rules
	}
	for k := range fm {
		if !slices.Contains(known, k) {
			c.opts.Logger.Debug("agents: a front matter key darman does not use; ignored", "file", path, "key", k)
		}
	}
	return a, nil
}

// splitList reads a tools value: "Read, Grep", "[Read, Grep]" or a YAML
// list ("- Read" lines).
func splitList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "-"))
		for _, f := range strings.Split(line, ",") {
			f = strings.Trim(strings.TrimSpace(f), `"'`)
			if f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// toolNames maps names to darman's, once each; unknown hears names of
// neither darman's nor Claude Code's tools.
func toolNames(names []string, unknown func(string)) []string {
	out := []string{}
	for _, n := range names {
		d, ok := ToolName(n)
		if !ok && unknown != nil {
			unknown(n)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
		// Claude Code's Bash includes reading and stopping its shells.
		if d == "bash" {
			for _, extra := range []string{"bash_output", "bash_kill"} {
				if !slices.Contains(out, extra) {
					out = append(out, extra)
				}
			}
		}
	}
	return out
}

// permissionRules reads a permission block as the configuration's
// permission key: "edit: deny", or a permission mapped to patterns
// ("bash:" then "  \"git *\": allow").
func permissionRules(block string) ([]permission.Rule, error) {
	fm, err := prompt.ParseNested(block)
	if err != nil {
		return nil, err
	}
	var rules []permission.Rule
	for _, perm := range inOrder(block, fm) {
		v := strings.TrimSpace(fm[perm])
		if a := permission.Action(v); a == permission.Allow || a == permission.Ask || a == permission.Deny {
			rules = append(rules, permission.Rule{Permission: perm, Pattern: "*", Action: a})
			continue
		}
		nested, err := prompt.ParseNested(v)
		if err != nil || len(nested) == 0 {
			return nil, fmt.Errorf("%s: expected allow, ask or deny, or patterns mapped to them, got %q", perm, v)
		}
		for _, pat := range inOrder(v, nested) {
			a := permission.Action(strings.TrimSpace(nested[pat]))
			if a != permission.Allow && a != permission.Ask && a != permission.Deny {
				return nil, fmt.Errorf("%s.%s: expected allow, ask or deny, got %q", perm, pat, nested[pat])
			}
			rules = append(rules, permission.Rule{Permission: perm, Pattern: pat, Action: a})
		}
	}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

// inOrder are fm's keys in the order block writes them: the last matching
// permission rule wins, so the order is the meaning.
func inOrder(block string, fm prompt.Frontmatter) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		k := line
		if i := strings.LastIndex(line, ":"); i >= 0 {
			k = strings.TrimSpace(line[:i])
			// "git *": allow — the key is up to the colon after the quote.
			if q := line[0]; q == '"' || q == '\'' {
				if e := strings.IndexByte(line[1:], q); e >= 0 {
					k = line[1 : e+1]
				}
			} else if c := strings.Index(line, ":"); c >= 0 {
				k = strings.TrimSpace(line[:c])
			}
		}
		if _, ok := fm[k]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(mapKeys(fm)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
