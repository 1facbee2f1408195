package config_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// darman's hooks come first, then Claude Code's files' (the project's
// local file, the project's, the user's), each matcher with its file;
// Claude's files are read as Claude writes them, and what darman cannot
// run in them is a warning.
func TestHooksFromDarmanAndClaude(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "darman-guard", "timeout": 5}]}]}}`)
	local := f.write(".claude/settings.local.json", `{"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "local-guard"}]}]}}`)
	project := f.write(".claude/settings.json", `{
		"permissions": {"allow": ["Bash(npm test)"]},
		"hooks": {
			"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "claude-guard"}, {"type": "prompt", "prompt": "is it safe?"}, {"type": "http", "url": "http://localhost:9"}]}],
			"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "x"}]}]
		}
	}`)
	user := f.write(filepath.Join(f.home, ".claude", "settings.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`)

	l := f.mustLoad()
	pre := l.Config.Hooks["PreToolUse"]
	if len(pre) != 3 || pre[0].Hooks[0].Command != "darman-guard" || pre[0].Hooks[0].Timeout != 5 || pre[0].Origin != "darman.json" ||
		pre[1].Origin != local || pre[2].Origin != project || len(pre[2].Hooks) != 3 || pre[2].Hooks[0].Command != "claude-guard" || pre[2].Hooks[1].Prompt != "is it safe?" || pre[2].Hooks[2].Type != "http" {
		t.Fatalf("PreToolUse: %+v", pre)
	}
	if stop := l.Config.Hooks["Stop"]; len(stop) != 1 || stop[0].Origin != user {
		t.Fatalf("Stop: %+v", stop)
	}
	warnings := strings.Join(l.Warnings, "\n")
	for _, want := range []string{`a PreToolUse hook of type "http" is not supported: darman runs command and prompt hooks`, `"PostToolUseFailure" is not one darman runs`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
}

// disableAllHooks in a Claude Code settings file turns Claude's hooks
// off; darman's own still run.
func TestClaudeDisableAllHooks(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`)
	f.write(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "theirs"}]}]}}`)
	f.write(".claude/settings.local.json", `{"disableAllHooks": true}`)
	l := f.mustLoad()
	if stop := l.Config.Hooks["Stop"]; len(stop) != 1 || stop[0].Hooks[0].Command != "mine" {
		t.Fatalf("Stop: %+v", stop)
	}
}

// In darman's own file a hook that cannot run is an error that says
// where and why.
func TestDarmanHookProblems(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"hooks": {
		"PreTooluse": [{"hooks": [{"type": "command", "command": "x"}]}],
		"Stop": [{"hooks": [{"type": "http", "command": "x"}, {"type": "command"}]}]
	}}`)
	_, err := f.load()
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{`hooks.PreTooluse: unknown hook event (did you mean "PreToolUse"?)`, `hooks.Stop[0].hooks[0].type: "http": darman runs "command" and "prompt" hooks`,
		`hooks.Stop[0].hooks[1].command: required`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}
