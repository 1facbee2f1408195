package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Hooks are the commands run on the agent's events, in Claude Code's
// shape: an event name mapped to its matchers, in order.
type Hooks map[string][]HookMatcher

// HookMatcher is one matcher of an event and the hooks it runs.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty" jsonschema:"Which tool calls (PreToolUse, PostToolUse), sources (SessionStart), triggers (PreCompact) or notification types run the hooks: a name, names separated by |, a regular expression, or * (also empty or absent) for all. Tool names are Claude Code's (Bash, Edit, Read, ...) or darman's (bash, edit, read, ...)."`
	Hooks   []HookCommand `json:"hooks" jsonschema:"The hooks run when the matcher matches, all at once."`

	// Origin is the file the matcher came from; Workspace reports that
	// it is one of the workspace's files (see WorkspaceSources), not the
	// user's. Set by Load.
	Origin    string `json:"-"`
	Workspace bool   `json:"-"`
}

// HookCommand is one hook: a command, or a prompt for the small model.
type HookCommand struct {
	Type    string  `json:"type" jsonschema:"command (a shell command) or prompt (a question to the small model, as Claude Code's prompt hooks)."`
	Command string  `json:"command,omitempty" jsonschema:"For type command: the shell command, run with bash -c in the workspace root with the event's JSON on its standard input; $CLAUDE_PROJECT_DIR and $DARMAN_PROJECT_DIR are the workspace root."`
	Prompt  string  `json:"prompt,omitempty" jsonschema:"For type prompt: what the small model (smallModel, else model) is asked; $ARGUMENTS is replaced by the event's JSON (appended when absent). It answers {\"ok\": true} or {\"ok\": false, \"reason\": ...}."`
	Timeout float64 `json:"timeout,omitempty" config:"min=0" jsonschema:"Seconds before the hook is stopped, with every process it started. Default 60 for a command, 30 for a prompt."`
}

// HookEvents are the events hooks may name.
func HookEvents() []string {
	return []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact",
		"SessionStart", "SessionEnd", "Notification"}
}

// Claude Code's settings files whose hooks darman runs, besides its own:
// the user's (in the home directory) and the project's two (at the
// workspace root).
const (
	HookFileClaudeUser    = ".claude/settings.json"
	HookFileClaudeProject = ".claude/settings.json"
	HookFileClaudeLocal   = ".claude/settings.local.json"
)

// checkHooks reports darman's own hooks that cannot run as written and
// records the file each matcher came from.
func (ld *loader) checkHooks(cfg *Config) {
	for _, event := range slices.Sorted(maps.Keys(cfg.Hooks)) {
		entry := keyPath("hooks", event)
		src, ok := ld.origins[entry]
		if !ok {
			src = "defaults"
		}
		if !slices.Contains(HookEvents(), event) {
			msg := "unknown hook event"
			if s := suggest(event, HookEvents()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (expected " + quoteList(HookEvents(), "or") + ")"
			}
			ld.ps.add(Problem{Source: src, Path: entry, Message: msg})
			continue
		}
		for i, m := range cfg.Hooks[event] {
			cfg.Hooks[event][i].Origin = src
			cfg.Hooks[event][i].Workspace = ld.projectSource[src]
			for j, h := range m.Hooks {
				path := indexPath(keyPath(indexPath(entry, i), "hooks"), j)
				switch {
				case h.Type == "prompt" && h.Prompt == "":
					ld.ps.add(Problem{Source: src, Path: keyPath(path, "prompt"), Message: "required: what the model is asked"})
				case h.Type == "prompt":
				case h.Type != "command":
					ld.ps.add(Problem{Source: src, Path: keyPath(path, "type"), Message: fmt.Sprintf(`%q: darman runs "command" and "prompt" hooks`, h.Type)})
				case h.Command == "":
					ld.ps.add(Problem{Source: src, Path: keyPath(path, "command"), Message: "required: the shell command to run"})
				}
			}
		}
	}
}

// claudeSettings is what darman reads of a Claude Code settings file.
type claudeSettings struct {
	Hooks           map[string][]HookMatcher `json:"hooks"`
	DisableAllHooks bool                     `json:"disableAllHooks"`
}

// foreignHooks adds the hooks of Claude Code's settings files after
// darman's own, lowest precedence last: the project's local file, the
// project's, the user's. A file that cannot be read or parsed, an unknown
// event or a kind of hook darman does not run is a warning: it is not
// darman's file. A file with disableAllHooks set turns Claude's files'
// hooks off, as in Claude Code.
func (ld *loader) foreignHooks(cfg *Config) {
	var paths []string
	for _, rel := range []string{HookFileClaudeLocal, HookFileClaudeProject} {
		// The workspace's hooks run only once it is trusted.
		if path := filepath.Join(ld.root, filepath.FromSlash(rel)); ld.trusted || !ld.workspaceForeign(path) {
			paths = append(paths, path)
		}
	}
	if home, err := ld.dirs.home(); err == nil {
		if user := filepath.Join(home, filepath.FromSlash(HookFileClaudeUser)); !slices.Contains(paths, user) {
			paths = append(paths, user)
		}
	}
	found := map[string][]HookMatcher{}
	for _, path := range paths {
		data, err := readForeign(path)
		if err != nil {
			if !os.IsNotExist(err) {
				ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: cannot read its hooks: %v", path, pathErrCause(err)))
			}
			continue
		}
		var s claudeSettings
		if err := json.Unmarshal(data, &s); err != nil {
			ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: not a settings file darman can read (%v); its hooks are ignored", path, err))
			continue
		}
		if s.DisableAllHooks {
			ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: disableAllHooks is set; Claude Code's hooks are not run", path))
			return
		}
		for event, matchers := range s.Hooks {
			if !slices.Contains(HookEvents(), event) {
				ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: hook event %q is not one darman runs; ignored", path, event))
				continue
			}
			for _, m := range matchers {
				m.Origin = path
				m.Workspace = ld.workspaceForeign(path)
				// A hook of another type stays in the list, for the hook
				// engine and doctor to report as unsupported; it never runs.
				m.Hooks = slices.DeleteFunc(slices.Clone(m.Hooks), func(h HookCommand) bool {
					switch {
					case (h.Type == "command" || h.Type == "") && h.Command != "", h.Type == "prompt" && h.Prompt != "":
						return false
					case h.Type == "command" || h.Type == "" || h.Type == "prompt":
						ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: a %s hook has no %s; ignored", path, event, map[bool]string{true: "prompt", false: "command"}[h.Type == "prompt"]))
						return true
					}
					ld.ps.warnings = append(ld.ps.warnings, fmt.Sprintf("%s: a %s hook of type %q is not supported: darman runs command and prompt hooks; this hook does not run", path, event, h.Type))
					return false
				})
				if len(m.Hooks) > 0 {
					found[event] = append(found[event], m)
				}
			}
		}
	}
	if len(found) == 0 {
		return
	}
	if cfg.Hooks == nil {
		cfg.Hooks = Hooks{}
	}
	for _, event := range slices.Sorted(maps.Keys(found)) {
		cfg.Hooks[event] = append(slices.Clip(cfg.Hooks[event]), found[event]...)
	}
}
