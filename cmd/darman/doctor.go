package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/samber/lo"
	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// check is one line of the doctor's report.
type check struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Status is "ok", "missing" (optional and absent), "warn" or "fail"
	// (required and broken: doctor exits 1).
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

type report struct {
	Version buildInfo `json:"version"`
	Checks  []check   `json:"checks"`
	// LanguageServers is each language server's state as the diagnostics
	// pool sees it (started ones only with --check-lsp).
	LanguageServers []diagnostics.ServerStatus `json:"languageServers,omitempty"`
}

func (r *report) add(section, name, status, detail string) {
	r.Checks = append(r.Checks, check{Section: section, Name: name, Status: status, Detail: detail})
}

func (r *report) failed() bool {
	return lo.ContainsBy(r.Checks, func(c check) bool { return c.Status == "fail" })
}

func (a *app) doctorCommand() *cobra.Command {
	var asJSON, checkModel, checkLSP, repair bool
	var checkCompletion bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, data directory, providers and language servers",
		Long: `doctor reports what darman found: the config files it merged, the data
directory and the health of the session store, which model providers have a
key (keys are never printed) and which language servers are installed.
With --check-lsp it starts the language server of each language the
workspace has files of, opens one of those files in it, and shows whether
it runs and loaded the workspace, or why not: its exit status and the last
lines of its stderr, or what it said when it could not load the workspace.
With --check-completion it asks the inline completion model
(completion.model) for one completion and shows the answer and its time.
With --repair, a damaged session store is moved aside (beside the data
directory, named after it) and what can still be read of it is copied into
a new one.
It exits with status 1 when something required is broken, or when a
language server it was asked to start failed or cannot load the
workspace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var repaired []check
			if repair {
				repaired = a.repairStore()
			}
			r := a.diagnose(cmd.Context(), checkModel, checkLSP)
			a.diagnoseCompletion(cmd.Context(), r, checkCompletion)
			r.insertBefore("data", repaired)
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else {
				printReport(a, r)
			}
			if r.failed() {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&checkModel, "check-model", false, "send the model one tiny request to check the provider, key and model")
	cmd.Flags().BoolVar(&repair, "repair", false, "move a damaged session store aside and keep what can be read of it (close every darman first)")
	cmd.Flags().BoolVar(&checkLSP, "check-lsp", false, "start the language servers of the workspace's languages and report how each one fares")
	cmd.Flags().BoolVar(&checkCompletion, "check-completion", false, "ask the inline completion model for one completion")
	return cmd
}

func (a *app) diagnose(ctx context.Context, checkModel, checkLSP bool) *report {
	r := &report{Version: readBuildInfo()}
	loaded, err := a.config()
	if err != nil {
		r.add("config", "configuration", "fail", err.Error())
		return r
	}
	projectFound := false
	for _, src := range loaded.Sources {
		switch {
		case src.Found:
			r.add("config", src.Path, "ok", src.Layer)
			projectFound = projectFound || src.Layer == "project"
		case src.Layer == "user":
			r.add("config", src.Path, "missing", "user config, not present")
		}
	}
	if !projectFound {
		if root, err := a.workspaceRoot(); err == nil {
			r.add("config", filepath.Join(root, "darman.json"), "missing",
				"project config, not present (nor .darman/config.json here or in a parent up to the repository root)")
		}
	}
	for _, w := range loaded.Warnings {
		r.add("config", "warning", "warn", w)
	}
	a.trust.diagnose(r)
	c := loaded.Config
	st := a.diagnoseStore(ctx, r)
	a.diagnoseModel(ctx, r, c, checkModel)
	diagnoseChildEnv(r, c)
	diagnoseShell(r)
	root, rootErr := a.workspaceRoot()
	log, _ := a.logger()
	if rootErr == nil {
		diagnoseCheckpoints(ctx, r, c, st, root)
		diagnoseMCPServers(ctx, r, c, root, a.children, log)
		diagnoseAgents(r, c, root)
	}
	diagnoseLanguageServers(ctx, r, c, root, checkLSP, a.children, log)
	diagnoseSandbox(r, c, root)
	diagnoseHooks(r, c, root)
	return r
}

// diagnoseStore checks the session store and returns it, nil when it
// cannot be opened.
func (a *app) diagnoseStore(ctx context.Context, r *report) *store.Store {
	s, err := a.openStoreReadOnly(ctx)
	var damage *store.DamageError
	switch {
	case errors.As(err, &damage):
		r.add("data", damage.Dir, "fail", err.Error())
		return nil
	case err != nil:
		r.add("data", "session store", "fail", err.Error())
		return nil
	}
	st, err := s.Stats(ctx)
	if err != nil {
		r.add("data", s.Dir(), "fail", err.Error())
		return s
	}
	who := "this process"
	if !s.Owner() {
		who = fmt.Sprintf("served by darman process %d", st.OwnerPID)
	}
	r.add("data", s.Dir(), "ok", fmt.Sprintf("%d sessions, %s on disk, schema %d, %s",
		st.Sessions, humanize.IBytes(uint64(st.LSMBytes+st.ValueLogBytes)), st.Schema, who))
	return s
}

// repairStore runs store.Repair on the data directory and says what it did,
// as lines of the report's data section.
func (a *app) repairStore() []check {
	loaded, err := a.config()
	if err != nil || loaded.Config.DataDir == "" {
		return nil // diagnose reports the configuration
	}
	dir := loaded.Config.DataDir
	log, _ := a.logger()
	res, err := store.Repair(dir, log)
	switch {
	case err != nil:
		return []check{{Section: "data", Name: "repair", Status: "fail", Detail: err.Error()}}
	case !res.Damaged:
		return []check{{Section: "data", Name: "repair", Status: "ok", Detail: "the session store is sound: nothing to repair"}}
	}
	detail := strings.TrimSuffix(repairReport(res, "; "), "; ")
	return []check{{Section: "data", Name: "repair", Status: "warn", Detail: detail}}
}

// insertBefore puts checks before the first check of section (at the end
// when there is none).
func (r *report) insertBefore(section string, checks []check) {
	i := slices.IndexFunc(r.Checks, func(c check) bool { return c.Section == section })
	if i < 0 {
		i = len(r.Checks)
	}
	r.Checks = slices.Insert(r.Checks, i, checks...)
}

// diagnoseModel reports the model darman would use, how it was chosen, and
// each configured or preset provider's key source (never the key).
func (a *app) diagnoseModel(ctx context.Context, r *report, c config.Config, check bool) {
	log, _ := a.logger()
	m := newModels(c, log)
	sel, err := m.selectModel(ctx)
	switch {
	case err != nil:
		// darman has nothing to talk to: required, and broken.
		r.add("model", "model", "fail", err.Error())
	case !sel.Client.Model(sel.Model).Known:
		r.add("model", sel.Ref(), "warn", fmt.Sprintf("%s; but darman knows no model %q of %s (neither its catalog nor the configuration): its limits are defaults and its cost is counted as 0. "+
			"Check the id (darman models lists the known ones; --check-model asks the server), or describe it in provider.%s.models.%s",
			sel.Reason, sel.Model, sel.Client.Name(), sel.Client.Name(), sel.Model))
	default:
		r.add("model", sel.Ref(), "ok", sel.Reason)
	}
	names := map[string]bool{}
	for _, n := range provider.PresetNames() {
		names[n] = true
	}
	for n := range c.Provider {
		names[n] = true
	}
	behaviour := map[string]string{}
	for _, p := range provider.Presets() {
		behaviour[p.Name] = presetBehaviour(p)
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		_, configured := c.Provider[name]
		client, err := m.client(name)
		about := ""
		if b := behaviour[name]; b != "" {
			about = "; " + b
		}
		switch {
		case err != nil && configured:
			r.add("providers", name, "fail", err.Error()+about)
		case err != nil:
			r.add("providers", name, "missing", err.Error()+about)
		case client.KeySource() != "":
			r.add("providers", name, "ok", fmt.Sprintf("%s, key from %s%s", client.BaseURL(), client.KeySource(), about))
		default:
			r.add("providers", name, "missing", client.BaseURL()+", no key"+about)
		}
	}
	if check && sel != nil {
		res := provider.Check(ctx, sel.Client, sel.Model)
		status := "ok"
		if !res.OK() {
			status = "fail"
		}
		r.add("model", "check", status, res.String())
	}
}

// presetBehaviour says, for doctor, what a preset speaks and what it is
// sent back: "openai-chat; reasoning_content sent back with tool-call
// turns; prompt_tokens include cached tokens (checked against
// total_tokens); 4 catalog models".
func presetBehaviour(p provider.PresetInfo) string {
	parts := []string{p.API}
	if p.Auth != "API key" && p.Auth != "none" {
		parts = append(parts, p.Auth)
	}
	parts = append(parts, "reasoning: "+p.Reasoning, "usage: "+p.Usage)
	if n := len(p.Models); n > 0 {
		parts = append(parts, fmt.Sprintf("%d catalog model%s", n, map[bool]string{true: "s"}[n > 1]))
	}
	return strings.Join(parts, "; ")
}

// lspCheckTimeout bounds doctor --check-lsp's wait for the servers'
// initialize handshakes.
const lspCheckTimeout = 20 * time.Second

// lspLoadWait bounds doctor --check-lsp's wait for each started server's
// first diagnostics of a workspace file.
const lspLoadWait = 10 * time.Second

// diagnoseLanguageServers reports each language server as the diagnostics
// pool resolves it for the workspace (a project's node_modules/.bin, then
// PATH, with the built-in fallbacks such as basedpyright). With start, the
// servers of the languages the workspace has files of are started, so a
// server that is installed but broken shows how it fails.
func diagnoseLanguageServers(ctx context.Context, r *report, c config.Config, root string, start bool, children *child.Registry, log *slog.Logger) {
	const section = "language servers"
	if root == "" {
		// No workspace (a bad --workspace, reported elsewhere): what is
		// installed can still be told, not what the workspace needs.
		root, start = "/", false
	}
	pool, err := diagnostics.New(ctx, diagnostics.Options{
		// Probe waits up to Wait for a file's diagnostics, which say the
		// server loaded the workspace (or it says why it cannot).
		Root: root, Servers: c.LSP, StartTimeout: lspCheckTimeout, Wait: lspLoadWait,
		Children: children, ClientVersion: readBuildInfo().Version, Logger: log, Env: childEnviron(c),
	})
	if err != nil {
		r.add(section, "configuration", "fail", err.Error())
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
		r.add(section, st.Name, status, detail)
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

var marks = map[string]string{"ok": "✓", "missing": "·", "warn": "!", "fail": "✗"}

func printReport(a *app, r *report) {
	v := r.Version
	fmt.Fprintf(a.stdout, "darman %s (%s, %s)\n", v.Version, v.Go, v.Platform)
	section := ""
	for _, c := range r.Checks {
		if c.Section != section {
			section = c.Section
			fmt.Fprintf(a.stdout, "\n%s\n", section)
		}
		line := fmt.Sprintf("  %s %s", marks[c.Status], c.Name)
		if c.Detail != "" {
			line += ": " + strings.ReplaceAll(c.Detail, "\n", "\n      ")
		}
		fmt.Fprintln(a.stdout, line)
	}
	if fails := lo.CountBy(r.Checks, func(c check) bool { return c.Status == "fail" }); fails > 0 {
		fmt.Fprintf(a.stdout, "\n%d problem(s) need fixing.\n", fails)
	}
}
