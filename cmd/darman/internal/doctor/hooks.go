package doctor

import (
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/hook"
)

// Hooks lists the hooks of e that run, each with its file, and the
// ones left out (problems).
func Hooks(r *Report, e *hook.Engine, problems []string) {
	const section = "hooks"
	for _, p := range problems {
		r.Add(section, "hook", "warn", p)
	}
	if e == nil {
		if len(problems) == 0 {
			r.Add(section, "hooks", "ok", "none configured (the hooks key of darman's config, .claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json)")
		}
		return
	}
	for _, h := range e.Hooks() {
		name := string(h.Event)
		if m := strings.TrimSpace(h.Matcher); m != "" && m != "*" {
			name += " " + m
		}
		if h.Type == "prompt" {
			r.Add(section, name, "ok", fmt.Sprintf("prompt %q (from %s; timeout %s; asked of the small model)", h.Prompt, h.Origin, h.Timeout))
			continue
		}
		where := "yours: run outside the sandbox, with the scrubbed environment"
		if h.Workspace {
			where = "the workspace's: run like bash, in its sandbox"
		}
		r.Add(section, name, "ok", fmt.Sprintf("%s (from %s; timeout %s; %s)", h.Command, h.Origin, h.Timeout, where))
	}
}
