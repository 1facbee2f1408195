package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/sandbox"
	"github.com/darman-dev/darman/mcp/client"
)

// agentWiring is what every front gives the session service besides the
// configuration: where the files are, who answers permission questions,
// and rules of its own (darman run's --allow and --deny).
type agentWiring struct {
	root      string
	workspace tool.Workspace
	asker     permission.Asker
	// workspaceFor and askerFor, when set, choose a session's own
	// (darman acp: its client's); see session.Options.
	workspaceFor func(agent.ID) tool.Workspace
	askerFor     func(agent.ID) permission.Asker
	rules        []permission.Rule
	// tasks offers the task tool (sub-agents); only fronts that render
	// events with a ParentCallID nested set it.
	tasks bool
	// waitMCP waits for every MCP server to be ready or failed before the
	// agent starts, and fails when a required one failed: darman run's
	// one turn. The editor fronts start at once; their turns see the
	// servers as they come up.
	waitMCP bool
	// gate takes MCP servers' elicitations to a human (the terminal, the
	// editor); nil declines every elicitation (no human is reachable).
	gate permission.Elicitor
	// refused hears the questions refused for want of an asker (darman
	// run without a terminal); see session.Options.Refused.
	refused func(agent.ID, permission.Request)
	// notices, when set, hears the MCP and language servers' state
	// changes (the editor's messages).
	notices func(level, text string)
	// children records every process the agent starts (the app's one
	// registry, which stops what is left when darman exits); nil records
	// nothing. Closing the agent stops its own children either way.
	children *child.Registry

	// agents are the named agents turns run; nil loads the workspace's.
	agents *agents.Catalog
	// sandbox, when set, is the sandbox made (and probing) before the
	// store opened; nil makes one from the configuration.
	sandbox *sandbox.Sandbox
	// git, when set, is the workspace's git status started with darman,
	// for the first prompt.
	git *earlyGit

	// Set by startAgent.
	diagnostics tool.Diagnostics // the language servers' view after edits
	mcp         *client.Manager  // the MCP servers, asked for tools at every turn
	models      *models          // shared with the MCP servers' sampling
	hooks       *hook.Engine     // the user's hooks; nil when none

	// checkpoints snapshots before steps; nil when off.
	checkpoints *checkpoint.Keeper
}

// agentRuntime is a workspace's agent and what runs beside it.
type agentRuntime struct {
	svc    *session.Service
	models *models
	mcp    *client.Manager
	// lsp are the language servers, for a front's status and notices.
	lsp *languageServers
	// sandbox confines the model's commands; fronts report its status.
	sandbox *sandbox.Sandbox
	// checkpoints reverts turns; nil when checkpoints are off.
	checkpoints *checkpoint.Keeper
	// close stops the session service (and with it the sessions'
	// commands), the MCP servers, the language servers and the sandbox.
	close func() error
}

// startAgent builds a workspace's agent the same way for every front: the
// language servers (reading files through w.workspace, so an editor's
// unsaved buffers count), the configured MCP servers, and the session
// service, their children recorded in w.children.
func startAgent(ctx context.Context, cfg config.Config, st *store.Store, w agentWiring, log *slog.Logger) (*agentRuntime, error) {
	if w.sandbox == nil {
		w.sandbox = newSandbox(cfg)
	}
	if st := w.sandbox.Status(); len(st.Missing) > 0 {
		log.Warn("sandbox: walls missing", "missing", st.Missing, "why", st.Reason)
	}
	servers, err := newLanguageServers(ctx, w.root, cfg, w.workspace, w.children, log)
	if err != nil {
		w.sandbox.Close()
		return nil, err
	}
	m := newModels(cfg, log)
	if w.gate == nil {
		w.gate = permission.DeclineElicitor{}
	}
	mcpServers, err := startMCP(ctx, cfg, w.root, mcpRuntime{children: w.children, gate: w.gate, sampler: modelSampler(cfg, m),
		notify: w.notices}, w.waitMCP, log)
	stopAround := func() error {
		if mcpServers != nil {
			mcpServers.Close()
		}
		err := servers.Close()
		w.sandbox.Close()
		return err
	}
	if err != nil {
		stopAround()
		return nil, err
	}
	w.diagnostics, w.mcp = servers, mcpServers
	w.models = m
	hooks, problems := newHooks(cfg, w.root, w.sandbox, w.children, st, m, log)
	for _, p := range problems {
		log.Warn("hooks", "problem", p)
		if w.notices != nil {
			w.notices("warning", p)
		}
	}
	w.hooks = hooks
	w.checkpoints = newKeeper(cfg, st, log)
	svc, m, err := newSessionService(cfg, st, w, log)
	if err != nil {
		stopAround()
		return nil, err
	}
	// The language servers' state changes reach the front as the MCP
	// servers' do.
	stopNotices := func() {}
	if w.notices != nil {
		stopNotices = servers.watch(w.notices)
	}
	return &agentRuntime{svc: svc, models: m, mcp: mcpServers, lsp: servers, sandbox: w.sandbox, checkpoints: w.checkpoints,
		close: func() error {
			stopNotices()
			return errors.Join(svc.Close(), hooks.Close(), stopAround())
		}}, nil
}

// newSessionService builds a workspace's session service the same way for
// every front: the configured models, the built-in tools with the
// workspace's skills, the system prompt, the permission rules and the
// stored grants.
func newSessionService(cfg config.Config, st *store.Store, w agentWiring, log *slog.Logger) (*session.Service, *models, error) {
	m := w.models
	if m == nil {
		m = newModels(cfg, log)
	}
	skills := prompt.LoadSkills(prompt.LocateDirs(w.root, nil), log)
	if w.agents == nil {
		w.agents = loadAgents(w.root, cfg, log)
	}
	svc, err := session.New(session.Options{
		Store:        st,
		Models:       m.resolve,
		Workspace:    w.workspace,
		WorkspaceFor: w.workspaceFor,
		AskerFor:     w.askerFor,
		Refused:      w.refused,
		Tools:        tool.Builtins(tool.Options{Skills: skills, Diagnostics: w.diagnostics, Children: w.children, Environ: childEnviron(cfg), Sandbox: w.sandbox, Network: networkFor(cfg), WebFetch: tool.WebFetchOptions{AllowPrivate: cfg.WebFetch.AllowPrivate, Allow: cfg.WebFetch.Allow}}),
		ToolSource:   mcpToolSource(cfg, w.mcp, st),
		System:       systemPrompt(w.root, skills, w.git, log),
		Rules:        rules(cfg, w.rules),
		Grants:       grantStore{st},
		Asker:        w.asker,
		MaxSteps:     cfg.Agent.MaxSteps,
		Logger:       log,

		Diagnostics: w.diagnostics,
		Tasks:       w.tasks,
		Hooks:       sessionHooks(w.hooks),
		Checkpoints: sessionCheckpoints(w.checkpoints),
		Agents:      w.agents,
		Commands:    func() *prompt.Commands { return workspaceCommands(w.root, cfg.WorkspaceTrusted) },
	})
	if err != nil {
		return nil, nil, err
	}
	return svc, m, nil
}
