package hook

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
)

// toolName is one of darman's tools as hooks see it: the name Claude Code
// gives its counterpart (tool_name) and other names matchers may use.
type toolName struct {
	darman, claude string
	also           []string
}

// toolNames maps darman's built-in tools to Claude Code's names; the
// table in docs/configuration.md is this one. A tool not in it (an MCP
// server's) is known to hooks by darman's name alone.
var toolNames = []toolName{
	{darman: "bash", claude: "Bash"},
	{darman: "bash_output", claude: "BashOutput"},
	{darman: "bash_kill", claude: "KillShell", also: []string{"KillBash"}},
	{darman: "read", claude: "Read"},
	{darman: "write", claude: "Write"},
	{darman: "edit", claude: "Edit"},
	{darman: "multiedit", claude: "MultiEdit"},
	{darman: "apply_patch", claude: "ApplyPatch", also: []string{"Edit"}},
	{darman: "glob", claude: "Glob"},
	{darman: "grep", claude: "Grep"},
	{darman: "list", claude: "LS"},
	{darman: "webfetch", claude: "WebFetch"},
	{darman: "todo", claude: "TodoWrite"},
	{darman: "task", claude: "Task", also: []string{"Agent"}},
	{darman: "skill", claude: "Skill"},
	{darman: "diagnostics", claude: "Diagnostics"},
}

// ToolName is the name a hook reads in tool_name for darman's tool name:
// Claude Code's for the built-in tools, name itself for the others.
func ToolName(name string) string {
	for _, t := range toolNames {
		if t.darman == name {
			return t.claude
		}
	}
	return name
}

// matchNames are the names a matcher may use for darman's tool name.
func matchNames(name string) []string {
	for _, t := range toolNames {
		if t.darman == name {
			return append([]string{t.darman, t.claude}, t.also...)
		}
	}
	return []string{name}
}

// ToolNames returns the table of darman's tool names and Claude Code's, in
// order, for docs and doctor: each row darman's name, Claude's, then the
// other names matchers may use.
func ToolNames() [][]string {
	out := make([][]string, len(toolNames))
	for i, t := range toolNames {
		out[i] = append([]string{t.darman, t.claude}, t.also...)
	}
	return out
}

// claudeKeys are darman's input keys and the keys Claude Code's tools use
// for the same thing.
var claudeKeys = map[string]string{
	"oldString":  "old_string",
	"newString":  "new_string",
	"replaceAll": "replace_all",
}

// fileTools take a file in "path", which Claude Code's call "file_path"
// (absolute).
var fileTools = map[string]bool{"read": true, "write": true, "edit": true, "multiedit": true}

// toolInput is a call's input as a hook reads it: darman's keys, and
// Claude Code's beside them (file_path absolute, old_string, ...), so a
// hook written for either finds what it looks for. Input that is not a
// JSON object is passed as it is.
func toolInput(name, root string, input json.RawMessage) json.RawMessage {
	if len(input) == 0 {
		return json.RawMessage("{}")
	}
	var m map[string]any
	if json.Unmarshal(input, &m) != nil || m == nil {
		return input
	}
	addClaudeKeys(m)
	if fileTools[name] {
		if p, ok := m["path"].(string); ok && p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			m["file_path"] = filepath.Clean(p)
		}
	}
	if edits, ok := m["edits"].([]any); ok {
		for _, e := range edits {
			if em, ok := e.(map[string]any); ok {
				addClaudeKeys(em)
			}
		}
	}
	b, err := marshal(m)
	if err != nil {
		return input
	}
	return b
}

func addClaudeKeys(m map[string]any) {
	for from, to := range claudeKeys {
		if v, ok := m[from]; ok {
			if _, taken := m[to]; !taken {
				m[to] = v
			}
		}
	}
}

// darmanInput is a hook's updatedInput in darman's keys. shown is the
// input as the hook read it (toolInput): a Claude Code key whose value the
// hook changed, or that the hook gave alone, takes the place of darman's
// key (file_path becomes path), and Claude's keys are then dropped, as
// darman's tools do not read them. Input that is not a JSON object is
// returned as it is.
func darmanInput(name, root string, shown, updated json.RawMessage) json.RawMessage {
	var m, before map[string]any
	if json.Unmarshal(updated, &m) != nil || m == nil {
		return updated
	}
	json.Unmarshal(shown, &before)
	pairs := maps.Clone(claudeKeys)
	if fileTools[name] {
		pairs["path"] = "file_path"
	}
	translate(m, before, pairs)
	if edits, ok := m["edits"].([]any); ok {
		prior, _ := before["edits"].([]any)
		for i, e := range edits {
			em, ok := e.(map[string]any)
			if !ok {
				continue
			}
			var pm map[string]any
			if i < len(prior) {
				pm, _ = prior[i].(map[string]any)
			}
			translate(em, pm, claudeKeys)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return updated
	}
	return b
}

// translate moves m's Claude Code keys to darman's (pairs: darman's key →
// Claude's), the Claude key winning where the hook changed it from
// before or gave it without darman's.
func translate(m, before map[string]any, pairs map[string]string) {
	for ours, theirs := range pairs {
		v, ok := m[theirs]
		if !ok {
			continue
		}
		_, hasOurs := m[ours]
		if !hasOurs || !reflect.DeepEqual(v, before[theirs]) {
			m[ours] = v
		}
		delete(m, theirs)
	}
}
