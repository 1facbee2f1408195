package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Configuration comes from two kinds of sources.
//
// The user's: the user config directory's config.json, ~/.claude.json and
// ~/.claude/settings.json, DARMAN_CONFIG, DARMAN_CONFIG_CONTENT and the
// other DARMAN_* variables, the command line, and what an editor sends
// (initializationOptions, settings). They apply as written.
//
// The workspace's: everything found in the workspace root and its parents
// up to the repository root — darman.json, .darman/config.json (and
// .darman/agent, .darman/command, .darman/skill), .claude/settings.json,
// .claude/settings.local.json, .claude/agents, .claude/commands,
// .claude/skills, .mcp.json and .vscode/mcp.json. A cloned repository
// carries them, so they may narrow what darman does at any time and widen
// it only once the user trusted the folder (see [Options.Trust]).
//
// WorkspaceSources lists the workspace's files and directories, relative
// to each project directory, for doctor and the docs.
func WorkspaceSources() []string {
	return []string{"darman.json", ".darman/config.json", ".darman/agent/", ".darman/command/", ".darman/skill/",
		HookFileClaudeProject, HookFileClaudeLocal, ".claude/agents/", ".claude/commands/", ".claude/skills/",
		MCPFileProject, MCPFileVSCode}
}

// Item is one thing a workspace configures that would widen what darman
// does: an allow rule, a hook, an MCP server, a provider endpoint...
type Item struct {
	// Source names the file, relative to the workspace root when inside it.
	Source string
	// Key is what it sets: a key path (permission.bash, hooks.PreToolUse,
	// mcpServers.db) or, for other files, what the file defines.
	Key string
	// Value is what it is set to, as written (JSON for config values, a
	// command line for hooks and servers); it is part of the hash.
	Value string
}

// String is the item as the trust question and the notices show it.
func (it Item) String() string {
	v := it.Value
	if len(v) > 160 {
		v = v[:157] + "..."
	}
	return it.Source + ": " + it.Key + " = " + v
}

// Workspace is what Load hands to [Options.Trust]: a workspace and what it
// would widen.
type Workspace struct {
	// Root is the workspace root as given to Load (absolute).
	Root string
	// Items are the workspace's widening settings, in file order.
	Items []Item
}

// Hash is the hash of items, the trust record's key to "nothing changed":
// a hook, server, endpoint or rule added, removed or changed changes it.
func Hash(items []Item) string {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b Item) int {
		return strings.Compare(a.Source+"\x00"+a.Key+"\x00"+a.Value, b.Source+"\x00"+b.Key+"\x00"+b.Value)
	})
	h := sha256.New()
	for _, it := range sorted {
		fmt.Fprintf(h, "%d:%s%d:%s%d:%s", len(it.Source), it.Source, len(it.Key), it.Key, len(it.Value), it.Value)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// TrustState is what the loaded configuration made of the workspace.
type TrustState struct {
	// Trusted reports whether the workspace's widening settings applied.
	Trusted bool
	// Items are the widening settings found in the workspace's config
	// files (agent and command files are their packages' business):
	// applied when Trusted, ignored otherwise.
	Items []Item
	// Never lists what no workspace file grants, trusted or not (allow
	// rules on sandbox_escape and protected_path), left out either way.
	Never []Item
}

// The permissions only the user grants: no workspace rule, agent file or
// hook answers them.
const (
	PermissionSandboxEscape = "sandbox_escape"
	PermissionProtectedPath = "protected_path"
)

// UserOnly reports whether permission is one only the user grants.
func UserOnly(permission string) bool {
	return permission == PermissionSandboxEscape || permission == PermissionProtectedPath
}

// narrower filters a workspace file's tree down to what narrows or changes
// nothing of consequence, collecting what it leaves out.
type narrower struct {
	source  string
	trusted bool
	items   []Item // widening settings, kept only when trusted
	never   []Item // allow rules on user-only permissions, never kept
}

func (nw *narrower) widen(key string, n *node) {
	nw.items = append(nw.items, Item{Source: nw.source, Key: key, Value: string(n.rawJSON())})
}

// filter returns the tree to apply: the whole tree (less the user-only
// allow rules) when trusted, the narrowing part otherwise.
func (nw *narrower) filter(tree *node) *node {
	if tree == nil || tree.kind != kindObject {
		return tree
	}
	out := &node{kind: kindObject}
	for _, m := range tree.fields {
		v := nw.member(m.key, m.value)
		if v != nil {
			out.fields = append(out.fields, member{m.key, v})
		}
	}
	return out
}

// member filters one top-level member; nil leaves it out.
func (nw *narrower) member(key string, n *node) *node {
	switch key {
	case "$schema", "retry", "agent", "codeActions", "transcript", "checkpoints":
		return nw.plain(key, n)
	case "model", "smallModel":
		// A model among the providers the user's configuration reaches.
		return nw.plain(key, n)
	case "permission":
		return nw.rules(key, n)
	case "provider", "mcpServers", "hooks", "completion", "webfetch":
		return nw.perEntry(key, n)
	case "dataDir":
		return nw.whole(key, n)
	case "log":
		return nw.keep(key, n, "level")
	case "sandbox":
		return nw.sandbox(key, n)
	case "shell":
		return nw.shell(key, n)
	case "lsp":
		return nw.lsp(key, n)
	case "agents":
		return nw.agents(key, n)
	}
	// An unknown key goes on to the decoder, which reports it.
	return n
}

// whole keeps n only when trusted.
func (nw *narrower) whole(key string, n *node) *node {
	nw.widen(key, n)
	if nw.trusted {
		return n
	}
	return nil
}

// perEntry is whole for each entry of an object, so each hook event,
// server or provider is its own item.
func (nw *narrower) perEntry(key string, n *node) *node {
	if n.kind != kindObject {
		return nw.whole(key, n)
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		if v := nw.whole(keyPath(key, m.key), m.value); v != nil {
			out.fields = append(out.fields, member{m.key, v})
		}
	}
	if len(out.fields) == 0 && len(n.fields) > 0 {
		return nil
	}
	return out
}

// plain keeps a value that widens nothing, unless it asks for ${...}
// expansion, which reads the user's files and variables.
func (nw *narrower) plain(key string, n *node) *node {
	if hasSubst(n) {
		return nw.whole(key, n)
	}
	return n
}

// keep keeps the named members of an object and treats the rest as
// widening.
func (nw *narrower) keep(key string, n *node, names ...string) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		p := keyPath(key, m.key)
		if slices.Contains(names, m.key) {
			if v := nw.plain(p, m.value); v != nil {
				out.fields = append(out.fields, member{m.key, v})
			}
			continue
		}
		if v := nw.whole(p, m.value); v != nil {
			out.fields = append(out.fields, member{m.key, v})
		}
	}
	return out
}

// rules keeps deny and ask rules; allow rules widen. An allow rule on a
// user-only permission is never kept.
func (nw *narrower) rules(key string, n *node) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	isAllow := func(v *node) bool { return v.kind == kindString && v.text == string(Allow) }
	for _, m := range n.fields {
		p := keyPath(key, m.key)
		switch {
		case m.value.kind == kindString && isAllow(m.value):
			if UserOnly(m.key) {
				nw.never = append(nw.never, Item{Source: nw.source, Key: p, Value: string(m.value.rawJSON())})
				continue
			}
			if v := nw.whole(p, m.value); v != nil {
				out.fields = append(out.fields, member{m.key, v})
			}
		case m.value.kind == kindObject:
			obj := &node{kind: kindObject}
			for _, pm := range m.value.fields {
				pp := keyPath(p, pm.key)
				switch {
				case isAllow(pm.value) && UserOnly(m.key):
					nw.never = append(nw.never, Item{Source: nw.source, Key: pp, Value: string(pm.value.rawJSON())})
				case isAllow(pm.value):
					if v := nw.whole(pp, pm.value); v != nil {
						obj.fields = append(obj.fields, pm)
					}
				default:
					obj.fields = append(obj.fields, pm)
				}
			}
			if len(obj.fields) > 0 || len(m.value.fields) == 0 {
				out.fields = append(out.fields, member{m.key, obj})
			}
		default:
			out.fields = append(out.fields, m)
		}
	}
	return out
}

// sandbox keeps what makes the sandbox stricter whatever the user set:
// mode required, network and Unix sockets off, more protected paths.
func (nw *narrower) sandbox(key string, n *node) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		p := keyPath(key, m.key)
		stricter := m.key == "protect" ||
			m.key == "mode" && m.value.kind == kindString && m.value.text == string(SandboxRequired) ||
			(m.key == "network" || m.key == "unixSockets") && m.value.kind == kindBool && m.value.text == "false"
		if stricter {
			if v := nw.plain(p, m.value); v != nil {
				out.fields = append(out.fields, member{m.key, v})
			}
			continue
		}
		if v := nw.whole(p, m.value); v != nil {
			out.fields = append(out.fields, member{m.key, v})
		}
	}
	return out
}

// shell keeps what gives children less: more excluded variables, a
// smaller starting set.
func (nw *narrower) shell(key string, n *node) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		p := keyPath(key, m.key)
		if m.key != "env" || m.value.kind != kindObject {
			if v := nw.whole(p, m.value); v != nil {
				out.fields = append(out.fields, member{m.key, v})
			}
			continue
		}
		env := &node{kind: kindObject}
		for _, em := range m.value.fields {
			ep := keyPath(p, em.key)
			stricter := em.key == "exclude" ||
				em.key == "inherit" && em.value.kind == kindString && (em.value.text == string(EnvInheritCore) || em.value.text == string(EnvInheritNone))
			if stricter {
				if v := nw.plain(ep, em.value); v != nil {
					env.fields = append(env.fields, member{em.key, v})
				}
			} else if v := nw.whole(ep, em.value); v != nil {
				env.fields = append(env.fields, member{em.key, v})
			}
		}
		out.fields = append(out.fields, member{m.key, env})
	}
	return out
}

// lsp keeps only switching a language server off: its command, its
// environment and its settings (some servers run what their settings
// name) widen.
func (nw *narrower) lsp(key string, n *node) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		v := nw.keep(keyPath(key, m.key), m.value, "disabled")
		if v != nil && (v.kind != kindObject || len(v.fields) > 0) {
			out.fields = append(out.fields, member{m.key, v})
		}
	}
	return out
}

// agents keeps an agent's prompt, tools and limits; its permission block
// keeps only deny and ask rules; a definition that changes a built-in
// agent (build, plan), or makes one primary, widens.
func (nw *narrower) agents(key string, n *node) *node {
	if n.kind != kindObject {
		return n
	}
	out := &node{kind: kindObject}
	for _, m := range n.fields {
		p := keyPath(key, m.key)
		if m.key == "build" || m.key == "plan" {
			if v := nw.whole(p, m.value); v != nil {
				out.fields = append(out.fields, member{m.key, nw.agentRules(p, v)})
			}
			continue
		}
		if m.value.kind != kindObject {
			out.fields = append(out.fields, m)
			continue
		}
		def := &node{kind: kindObject}
		for _, am := range m.value.fields {
			ap := keyPath(p, am.key)
			switch {
			case am.key == "permission":
				def.fields = append(def.fields, member{am.key, nw.rules(ap, am.value)})
			case am.key == "mode" && am.value.kind == kindString && am.value.text != string(AgentSubagent):
				if v := nw.whole(ap, am.value); v != nil {
					def.fields = append(def.fields, member{am.key, v})
				}
			default:
				if v := nw.plain(ap, am.value); v != nil {
					def.fields = append(def.fields, member{am.key, v})
				}
			}
		}
		out.fields = append(out.fields, member{m.key, def})
	}
	return out
}

// agentRules takes the user-only allow rules out of a trusted definition
// of a built-in agent (its items were already counted as a whole).
func (nw *narrower) agentRules(path string, def *node) *node {
	if def.kind != kindObject {
		return def
	}
	out := &node{kind: kindObject}
	for _, m := range def.fields {
		if m.key != "permission" {
			out.fields = append(out.fields, m)
			continue
		}
		saved := nw.items
		out.fields = append(out.fields, member{m.key, nw.rules(keyPath(path, m.key), m.value)})
		nw.items = saved
	}
	return out
}

// hasSubst reports whether a value uses ${env:...} or ${file:...}.
func hasSubst(n *node) bool {
	switch n.kind {
	case kindString:
		return strings.Contains(strings.ReplaceAll(n.text, "$${", ""), "${")
	case kindObject:
		return slices.ContainsFunc(n.fields, func(m member) bool { return hasSubst(m.value) })
	case kindArray:
		return slices.ContainsFunc(n.items, hasSubst)
	}
	return false
}

// projectFile is a workspace config file, read and parsed before the
// trust decision and applied after it.
type projectFile struct {
	path, source string
	found        bool
	err          error
	tree         *node
	syntax       *syntaxError
}

func (ld *loader) readProject(path string) projectFile {
	pf := projectFile{path: path, source: ld.display("project", path)}
	ld.projectSource[pf.source] = true
	data, err := readFile(path)
	pf.found = err == nil || !errors.Is(err, fs.ErrNotExist)
	pf.err = err
	if err == nil {
		pf.tree, pf.syntax = parse(data)
	}
	return pf
}

// projectItems are the widening settings of the workspace's config files.
func (ld *loader) projectItems(files []projectFile) []Item {
	var items []Item
	for _, pf := range files {
		if pf.tree != nil {
			nw := &narrower{source: pf.source}
			nw.filter(pf.tree)
			items = append(items, nw.items...)
		}
	}
	return items
}

// applyProject applies a workspace config file as file does, narrowed to
// what the trust decision lets through.
func (ld *loader) applyProject(pf projectFile) {
	ld.sources = append(ld.sources, Source{Path: pf.path, Layer: "project", Found: pf.found})
	switch {
	case pf.syntax != nil:
		ld.ps.add(Problem{Source: pf.source, Line: pf.syntax.line, Column: pf.syntax.column, Message: "invalid JSON: " + pf.syntax.msg})
	case pf.tree != nil:
		nw := &narrower{source: pf.source, trusted: ld.trusted}
		tree := nw.filter(pf.tree)
		ld.trust.Never = append(ld.trust.Never, nw.never...)
		l := ld.layer(pf.source, filepath.Dir(pf.path))
		l.substitute("", tree)
		l.decode("", tree, ld.target, fieldOpts{})
	case !pf.found:
	default:
		ld.ps.add(Problem{Source: pf.source, Message: fmt.Sprintf("cannot read the file: %v", pathErrCause(pf.err)), Err: pf.err})
	}
}

// workspaceForeign are the other tools' files of the workspace darman
// reads: Claude Code's settings (hooks) and the MCP files.
func (ld *loader) workspaceForeign(path string) bool {
	home, err := ld.dirs.home()
	if err == nil && filepath.Dir(filepath.Dir(path)) == filepath.Clean(home) && filepath.Base(filepath.Dir(path)) == ".claude" {
		// The workspace is the home directory: ~/.claude/settings.json
		// is the user's file.
		return false
	}
	return true
}

// foreignItems are the hooks and MCP servers the workspace's files of
// other tools would add.
func (ld *loader) foreignItems() []Item {
	var items []Item
	add := func(path, key string, servers *node) {
		if servers == nil || servers.kind != kindObject {
			return
		}
		for _, m := range servers.fields {
			items = append(items, Item{Source: ld.display("project", path), Key: keyPath(key, m.key), Value: string(m.value.rawJSON())})
		}
	}
	for _, f := range []struct{ rel, key, field string }{
		{HookFileClaudeLocal, "hooks", "hooks"},
		{HookFileClaudeProject, "hooks", "hooks"},
		{MCPFileVSCode, "mcpServers", "servers"},
		{MCPFileProject, "mcpServers", "mcpServers"},
	} {
		path := filepath.Join(ld.root, filepath.FromSlash(f.rel))
		if !ld.workspaceForeign(path) {
			continue
		}
		data, err := readForeign(path)
		if err != nil {
			continue
		}
		if tree, serr := parse(data); serr == nil {
			add(path, f.key, tree.field(f.field))
		}
	}
	return items
}
