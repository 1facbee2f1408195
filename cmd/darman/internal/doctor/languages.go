package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/diagnostics"
)

// lspCheckTimeout bounds doctor --check-lsp's wait for the servers'
// initialize handshakes.
const lspCheckTimeout = 20 * time.Second

// lspLoadWait bounds doctor --check-lsp's wait for each started server's
// first diagnostics of a workspace file.
const lspLoadWait = 10 * time.Second

// LanguageServers reports each language server as the diagnostics pool
// resolves it for the workspace opts.Root (a project's node_modules/.bin,
// then PATH, with the built-in fallbacks such as basedpyright); opts are
// the pool's (servers, children, environment, logger). With start, the
// servers of the languages the workspace has files of are started, so a
// server that is installed but broken shows how it fails.
func LanguageServers(ctx context.Context, r *Report, opts diagnostics.Options, start bool) {
	const section = "language servers"
	if opts.Root == "" {
		// No workspace (a bad --workspace, reported elsewhere): what is
		// installed can still be told, not what the workspace needs.
		opts.Root, start = "/", false
	}
	root := opts.Root
	// Probe waits up to Wait for a file's diagnostics, which say the
	// server loaded the workspace (or it says why it cannot).
	opts.StartTimeout, opts.Wait = lspCheckTimeout, lspLoadWait
	pool, err := diagnostics.New(ctx, opts)
	if err != nil {
		r.Add(section, "configuration", "fail", err.Error())
		return
	}
	defer pool.Close()
	var statuses []diagnostics.ServerStatus
	if start {
		pctx, cancel := context.WithTimeout(ctx, lspCheckTimeout)
		statuses = pool.Probe(pctx)
		cancel()
	} else {
		statuses = pool.Status()
	}
	r.LanguageServers = statuses
	for _, st := range statuses {
		status, detail := languageServerCheck(st, root, start)
		r.Add(section, st.Name, status, detail)
	}
}

// languageServerCheck turns a server's state into a doctor line.
func languageServerCheck(st diagnostics.ServerStatus, root string, started bool) (status, detail string) {
	exts := strings.Join(st.Extensions, " ")
	where := ""
	if st.Root != "" && st.Root != root {
		where = " for " + st.Root
	}
	switch st.State {
	case diagnostics.StateDisabled:
		return "missing", "disabled in config"
	case diagnostics.StateMissing:
		return "missing", st.Reason + "; diagnostics for " + exts + " files are off"
	case diagnostics.StateIdle:
		detail = strings.Join(st.Command, " ")
		if started {
			detail += " (not started: the workspace has no " + exts + " files)"
		}
		return "ok", detail
	case diagnostics.StateRunning:
		if st.Load == diagnostics.LoadFailed && st.LoadError != nil {
			le := *st.LoadError
			le.RetryAt = time.Time{}
			return "fail", fmt.Sprintf("running%s but cannot load the workspace: %s", where, le.Error())
		}
		name := ""
		if st.Server != "" {
			name = st.Server + ", "
		}
		detail = fmt.Sprintf("running%s: %spid %d, %s", where, name, st.PID, strings.Join(st.Command, " "))
		switch {
		case started && st.Load == diagnostics.LoadLoading:
			detail += fmt.Sprintf(" (still loading the workspace, for %v)", time.Duration(st.LoadMillis)*time.Millisecond)
		case st.Load == diagnostics.LoadLoaded && st.LoadMillis > 0:
			detail += fmt.Sprintf(" (loaded the workspace in %v)", time.Duration(st.LoadMillis)*time.Millisecond)
		}
		return "ok", detail
	case diagnostics.StateStarting:
		return "warn", fmt.Sprintf("still starting%s after %v: %s", where, lspCheckTimeout, strings.Join(st.Command, " "))
	case diagnostics.StateFailed, diagnostics.StateCrashed:
		return "fail", fmt.Sprintf("%s%s: %s", st.State, where, st.Reason)
	}
	return "warn", string(st.State) + where
}
