package diagnostics

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Notice words a language server's new state as a notice for the editor
// of the workspace root: the level ("info" or "warning") and one line
// naming the server.
func (st ServerStatus) Notice(root string) (level, text string) {
	name := "language server " + st.Name
	if st.Root != "" && st.Root != root {
		name += " (" + displayRoot(root, st.Root) + ")"
	}
	exts := strings.Join(st.Extensions, " ")
	switch {
	case st.State == StateRunning && st.Load == LoadFailed && st.LoadError != nil:
		le := *st.LoadError
		le.RetryAt = time.Time{}
		return "warning", fmt.Sprintf("%s runs but cannot load the workspace, so %s files get no diagnostics and queries fail: %s", name, exts, le.Error())
	case st.State == StateRunning && st.Load == LoadLoaded:
		return "info", fmt.Sprintf("%s loaded the workspace: %s files get diagnostics again", name, exts)
	}
	switch st.State {
	case StateRunning:
		what := st.Server
		if what == "" && len(st.Command) > 0 {
			what = filepath.Base(st.Command[0])
		}
		return "info", fmt.Sprintf("%s is running: %s, pid %d", name, what, st.PID)
	case StateFailed:
		return "warning", fmt.Sprintf("%s failed to start, so %s files get no diagnostics: %s", name, exts, st.Reason)
	case StateCrashed:
		return "warning", fmt.Sprintf("%s crashed; it restarts when next needed: %s", name, st.Reason)
	case StateMissing:
		reason := strings.TrimPrefix(st.Reason, ErrNotInstalled.Error()+": ")
		return "info", fmt.Sprintf("%s is not installed, so %s files get no diagnostics: %s", name, exts, reason)
	case StateIdle:
		return "info", name + " was stopped after it went unused; it starts again when needed"
	case StateStopped:
		return "info", name + " stopped"
	}
	return "info", fmt.Sprintf("%s is %s", name, st.State)
}

// displayRoot is a server's root relative to the workspace when inside it.
func displayRoot(workspace, root string) string {
	if rel, err := filepath.Rel(workspace, root); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return root
}
