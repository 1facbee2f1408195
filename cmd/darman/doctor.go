package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/cmd/darman/internal/doctor"
	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/sandbox"
	"github.com/darman-dev/darman/mcp/client"
)

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
			// A person reads it: what a language server or the store
			// said is in the report; log records only when asked for.
			a.quietLogs = true
			var repaired []doctor.Check
			if repair {
				repaired = a.repairStore()
			}
			r := a.diagnose(cmd.Context(), checkModel, checkLSP, checkCompletion)
			r.InsertBefore("data", repaired)
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else {
				v := readBuildInfo()
				r.Print(a.stdout, fmt.Sprintf("darman %s (%s, %s)", v.Version, v.Go, v.Platform))
			}
			if r.Failed() {
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

// diagnose builds each part of the workspace's agent as the fronts do and
// has the doctor package judge it.
func (a *app) diagnose(ctx context.Context, checkModel, checkLSP, checkCompletion bool) *doctor.Report {
	r := &doctor.Report{Version: readBuildInfo()}
	loaded, err := a.config()
	if err != nil {
		r.Add("config", "configuration", "fail", err.Error())
		return r
	}
	projectFound := false
	for _, src := range loaded.Sources {
		switch {
		case src.Found:
			r.Add("config", src.Path, "ok", src.Layer)
			projectFound = projectFound || src.Layer == "project"
		case src.Layer == "user":
			r.Add("config", src.Path, "missing", "user config, not present")
		}
	}
	if !projectFound {
		if root, err := a.workspaceRoot(); err == nil {
			r.Add("config", filepath.Join(root, "darman.json"), "missing",
				"project config, not present (nor .darman/config.json here or in a parent up to the repository root)")
		}
	}
	for _, w := range loaded.Warnings {
		r.Add("config", "warning", "warn", w)
	}
	a.trust.diagnose(r)
	c := loaded.Config
	s, err := a.openStoreReadOnly(ctx)
	doctor.Store(ctx, r, s, err)
	log, _ := a.logger()
	m := newModels(c, log)
	sel, selErr := m.selectModel(ctx)
	doctor.Model(ctx, r, c, sel, selErr, m.client, checkModel)
	doctor.ChildEnv(r, envPolicy(c))
	doctor.Shell(r)
	root, rootErr := a.workspaceRoot()
	if rootErr == nil {
		doctor.Checkpoints(ctx, r, c, s, root)
		if len(c.MCPServers) > 0 {
			doctor.MCPServers(r, mcpStatus(ctx, c, root, a.children, log))
		}
		doctor.Agents(r, loadAgents(root, c, nil), root)
	}
	doctor.LanguageServers(ctx, r, diagnostics.Options{Root: root, Servers: c.LSP, Children: a.children,
		ClientVersion: readBuildInfo().Version, Logger: log, Env: childEnviron(c)}, checkLSP)
	// Doctor looks for itself rather than believe the probe's record, and
	// records what it found for the next darman.
	sbOpts := sandboxOptions(c)
	sbOpts.FreshProbe = true
	sb := sandbox.New(sbOpts)
	doctor.Sandbox(r, sb, c, root)
	sb.Close()
	hooks, problems := newHooks(c, root, nil, nil, nil, newModels(c, slog.New(slog.DiscardHandler)), nil)
	doctor.Hooks(r, hooks, problems)
	cc, why, err := completionSetup(c, nil, completionHTTPClient(), log)
	var opts *complete.Options
	items := false
	if cc != nil {
		opts, items = &cc.Options, cc.Items
	}
	doctor.Completion(ctx, r, c.Completion, opts, items, why, err, root, checkCompletion)
	return r
}

// mcpStatus starts every configured MCP server, waits for each to be
// ready or failed, and stops them again: doctor's view of them.
func mcpStatus(ctx context.Context, c config.Config, root string, children *child.Registry, log *slog.Logger) []client.Status {
	m := client.New(mcpDefinitions(c, root), client.Options{Logger: log, Children: children, Sampler: modelSampler(c, newModels(c, log)), Gate: client.DeclineGate{}})
	defer m.Close()
	m.Start()
	_ = m.Wait(ctx)
	return m.Status()
}

// repairStore runs store.Repair on the data directory and says what it did,
// as lines of the report's data section.
func (a *app) repairStore() []doctor.Check {
	loaded, err := a.config()
	if err != nil || loaded.Config.DataDir == "" {
		return nil // diagnose reports the configuration
	}
	dir := loaded.Config.DataDir
	log, _ := a.logger()
	res, err := store.Repair(dir, log)
	switch {
	case err != nil:
		return []doctor.Check{{Section: "data", Name: "repair", Status: "fail", Detail: err.Error()}}
	case !res.Damaged:
		return []doctor.Check{{Section: "data", Name: "repair", Status: "ok", Detail: "the session store is sound: nothing to repair"}}
	}
	detail := strings.TrimSuffix(repairReport(res, "; "), "; ")
	return []doctor.Check{{Section: "data", Name: "repair", Status: "warn", Detail: detail}}
}
