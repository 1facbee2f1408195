package main

import (
	"log/slog"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// agentWiring is what every front gives the session service besides the
// configuration: where the files are, who answers permission questions,
// and rules of its own (darman run's --allow and --deny).
type agentWiring struct {
	root      string
	workspace tool.Workspace
	asker     permission.Asker
	rules     []permission.Rule
	// diagnostics reports the language servers' view after edits; nil
	// leaves it out.
	diagnostics tool.Diagnostics
	// tasks offers the task tool (sub-agents); only fronts that render
	// events with a ParentCallID nested set it.
	tasks bool
	// children records the process groups the tools start; nil records
	// nothing.
	children *child.Registry
	// mcpTools are the MCP servers' tools (see startMCP); nil offers none.
	mcpTools []tool.Tool
}

// newSessionService builds a workspace's session service the same way for
// every front: the configured models, the built-in tools with the
// workspace's skills, the system prompt, the permission rules and the
// stored grants.
func newSessionService(cfg config.Config, st *store.Store, w agentWiring, log *slog.Logger) (*session.Service, *models, error) {
	m := newModels(cfg, log)
	skills := prompt.LoadSkills(prompt.LocateDirs(w.root, nil), log)
	svc, err := session.New(session.Options{
		Store:     st,
		Models:    m.resolve,
		Workspace: w.workspace,
		Tools:     append(tool.Builtins(tool.Options{Skills: skills, Diagnostics: w.diagnostics, Children: w.children}), w.mcpTools...),
		System:    systemPrompt(w.root, skills, log),
		Rules:     rules(cfg, w.rules),
		Grants:    grantStore{st},
		Asker:     w.asker,
		MaxSteps:  cfg.Agent.MaxSteps,
		Logger:    log,

		Diagnostics: w.diagnostics,
		Tasks:       w.tasks,
	})
	if err != nil {
		return nil, nil, err
	}
	return svc, m, nil
}
