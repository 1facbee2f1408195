package main

import (
	"context"
	"log/slog"
	"maps"
	"slices"

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

// lspAgents finds, for initialize, the agents of setup's workspace with
// the configuration darman lsp loaded (or that workspace's), without
// starting the agent.
func (a *app) lspAgents(log *slog.Logger) func(context.Context, lsp.Setup) *agents.Catalog {
	return func(_ context.Context, setup lsp.Setup) *agents.Catalog {
		cfg, err := a.setupConfig(setup, false)
		if err != nil {
			// The agent's start reports the configuration's problem;
			// meanwhile the agent files alone count, untrusted.
			cfg = config.Config{}
		}
		return loadAgents(setup.Root, cfg, log)
	}
}
