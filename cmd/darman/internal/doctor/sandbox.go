package doctor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/sandbox"
)

// Sandbox reports what the sandbox sb of the model's commands does
// here: on (and how), or off and why.
func Sandbox(r *Report, sb *sandbox.Sandbox, c config.Config, root string) {
	const section = "sandbox"
	st := sb.Status()
	status := "ok"
	switch {
	case !st.Active() && st.Mode == sandbox.Required:
		status = "fail"
	case !st.Active() && st.Mode != sandbox.Off:
		status = "warn"
	case st.Active() && st.Reason != "":
		status = "warn"
	case !st.Active():
		status = "missing" // turned off on purpose
	}
	r.Add(section, "commands", status, st.Summary())
	if !st.Active() || root == "" {
		return
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(root, home); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			r.Add(section, "home", "warn", "the workspace "+root+" contains your home directory, so commands can read and write everything in it, secrets included: open a project directory instead")
		}
	}
	pol := sb.Policy(sandbox.Request{Root: root}, "")
	r.Add(section, "writable", "ok", strings.Join(pol.WriteDirs, ", ")+" and a temp dir per session ($TMPDIR)")
	if len(pol.ReadOnly) > 0 {
		r.Add(section, "read-only", "ok", strings.Join(pol.ReadOnly, ", "))
	}
	net := "off"
	switch {
	case pol.Network:
		net = "on (sandbox.network)"
	case len(c.Sandbox.NetworkCommands) > 0:
		net = "off, except for " + strings.Join(c.Sandbox.NetworkCommands, ", ")
	}
	r.Add(section, "network", "ok", net)
}
