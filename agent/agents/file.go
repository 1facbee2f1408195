package agents

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/config"
)

// How one definition is read: an agent file's front matter and body, or
// the configuration's agents entry.

// fromConfig applies the configuration's definition of name over base (a
// built-in agent or a file's, when exists).
func fromConfig(name string, def config.AgentConfig, base Agent, exists bool, mcpServers []string) (Agent, error) {
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
		tools, err := toolNames(def.Tools, mcpServers)
		if err != nil {
			return Agent{}, err
		}
		a.Tools = tools
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
		tools, err := toolNames(splitList(t), c.opts.MCPServers)
		if err != nil {
			return Agent{}, err
		}
		a.Tools = tools
	}
	switch m := strings.TrimSpace(fm["model"]); {
	case m == "", m == "inherit", !strings.Contains(m, "/"):
		if m != "" && m != "inherit" {
			c.opts.Logger.Debug("agents: a model alias darman does not resolve; the session's model is used", "file", path, "model", m)
		}
	default:
		a.Model = m
	}
	a.claudeSub = source == "claude" && strings.TrimSpace(fm["mode"]) == ""
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
		// sandbox_escape and protected_path are the user's to answer:
		// no agent file allows them.
		a.Permission = slices.DeleteFunc(rules, func(r permission.Rule) bool {
			if r.Action == permission.Allow && config.UserOnly(r.Permission) {
				c.opts.Logger.Warn("agents: an agent file cannot allow this permission; only you answer it", "file", path, "permission", r.Permission)
				return true
			}
			return false
		})
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

// toolNames maps names to darman's, once each. A name that is neither
// darman's tool, Claude Code's, nor an MCP tool (see checkTool) is an
// error: a misspelt name would leave the agent without the tool, and say
// nothing.
func toolNames(names []string, mcpServers []string) ([]string, error) {
	out := []string{}
	for _, n := range names {
		if msg := checkTool(n, mcpServers); msg != "" {
			return nil, errors.New("tools: " + msg)
		}
		d, _ := ToolName(n)
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
	return out, nil
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
		if msg := config.CheckPermissionName(perm); msg != "" {
			return nil, errors.New(msg)
		}
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
	for _, k := range slices.Sorted(maps.Keys(fm)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
