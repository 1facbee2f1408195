package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server/lsp"
)

// loadAgents finds the workspace's named agents: the built-in build and
// plan, the agent files, and the configuration's agents key.
func loadAgents(root string, cfg config.Config, log *slog.Logger) *agents.Catalog {
	return agents.Load(agents.Options{Dirs: prompt.LocateDirs(root, nil), Config: cfg.Agents, MCPServers: slices.Sorted(maps.Keys(cfg.MCPServers)), Logger: log, Trusted: cfg.WorkspaceTrusted})
}

// diagnoseAgents lists the agents with the file each comes from, and the
// files left out.
func diagnoseAgents(r *report, c config.Config, root string) {
	cat := loadAgents(root, c, nil)
	d := prompt.LocateDirs(root, nil)
	for _, a := range cat.List() {
		where := a.Source
		if a.Path != "" {
			where = prompt.ShortPath(d.Root, d.Home, a.Path)
		}
		detail := fmt.Sprintf("%s, %s", a.Mode, where)
		if len(a.Shadowed) > 0 {
			var hidden []string
			for _, p := range a.Shadowed {
				hidden = append(hidden, prompt.ShortPath(d.Root, d.Home, p))
			}
			detail += "; hides " + strings.Join(hidden, ", ")
		}
		r.add("agents", a.Name, "ok", detail)
	}
	for _, p := range cat.Problems() {
		r.add("agents", prompt.ShortPath(d.Root, d.Home, p.Path), "warn", p.Err.Error()+" (the agent is left out)")
	}
}

// lspAgents finds, for initialize, the agents of setup's workspace with
// the configuration darman lsp loaded (or that workspace's), without
// starting the agent.
func (a *app) lspAgents(log *slog.Logger) func(context.Context, lsp.Setup) *agents.Catalog {
	return func(_ context.Context, setup lsp.Setup) *agents.Catalog {
		cfg, ok := a.startConfig(setup)
		if !ok {
			loaded, err := config.Load(config.Options{WorkspaceRoot: setup.Root, Flags: a.flags, LookupEnv: withSettings(setup.Settings), Trust: decideTrust(lspPolicy(setup), new(trustOutcome))})
			if err != nil {
				// The agent's start reports the configuration's problem.
				return nil
			}
			cfg = loaded.Config
		}
		return loadAgents(setup.Root, cfg, log)
	}
}
