package checkpoint

import (
	"fmt"
	"strings"
)

// Text is the report for a person: what was (or would be) restored, the
// conflicts with their diffs, the files that could not be kept, and, for
// a preview, the combined diff.
func (r *Report) Text() string {
	var b strings.Builder
	verb := r.Action
	done := map[string]string{"revert": "reverted", "redo": "redid"}[verb]
	if !r.Applied {
		done = "would " + verb
	}
	others := ""
	if n := len(r.Turns) - 1; n > 0 {
		others = fmt.Sprintf(" and %d later turn(s)", n)
	}
	fmt.Fprintf(&b, "%s turn %s%s of session %s: %d file(s)\n", done, r.Turn, others, r.Session, len(r.Files))
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %-8s %s\n", f.Action, f.Path)
	}
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "conflict %s: %s\n", c.Path, c.Reason)
		for _, l := range strings.SplitAfter(c.Diff, "\n") {
			if l != "" {
				b.WriteString("    " + l)
			}
		}
	}
	for _, l := range r.NotRestorable {
		fmt.Fprintf(&b, "not restorable %s (%d bytes: over checkpoints.maxFileBytes, or unreadable)\n", l.Path, l.Size)
	}
	if !r.Applied && r.Diff != "" {
		b.WriteString(r.Diff)
	}
	return b.String()
}
