package session

import (
	"encoding/json"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/prompt"
)

// dirInstructions is what to add to a completed tool call's output: the
// instruction files (AGENTS.md, or CLAUDE.md where a directory has no
// AGENTS.md) of the directories between the workspace root and each file
// the call touched — its locations, and the path in its input — that this
// session has not been given yet. The root's own file is in the system
// prompt. The session remembers the files it was given in memory, and
// forgets them when the conversation is compacted, since the summary does
// not carry them: a resumed or compacted session is given them again.
func (t *turn) dirInstructions(input json.RawMessage, locs []agent.Location) string {
	var paths []string
	for _, l := range locs {
		if l.Path != "" {
			paths = append(paths, l.Path)
		}
	}
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(input, &in) == nil && in.Path != "" {
		paths = append(paths, in.Path)
	}
	if len(paths) == 0 {
		return ""
	}
	root := t.svc.opts.Workspace.Root()
	var found []prompt.Instruction
	for _, p := range paths {
		found = append(found, prompt.DirInstructions(root, p)...)
	}
	if len(found) == 0 {
		return ""
	}
	var fresh []string
	t.svc.mu.Lock()
	for _, in := range found {
		if !t.live.instructed[in.Path] {
			t.live.instructed[in.Path] = true
			fresh = append(fresh, in.Text)
		}
	}
	t.svc.mu.Unlock()
	if len(fresh) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(fresh, "\n\n")
}
