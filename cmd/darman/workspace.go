package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/complete"
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

// workspaceOptions is what a front gives a workspace's agent besides the
// configuration: where the files are, who answers permission questions,
// and rules of its own (darman run's --allow and --deny).
type workspaceOptions struct {
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
	// records, when set, is what the agent keeps its records in in place
	// of the store (darman run's earlyStore, the store while it opens).
	records records
}

// workspace is a workspace's agent runtime, built once by openWorkspace
// for the front that serves it (darman run, lsp, acp): the session service
// and what runs beside it — models, MCP and language servers, sandbox,
// hooks, checkpoints — and, through its methods, what the fronts ask of
// them. Close stops it all.
type workspace struct {
	root     string
	cfg      config.Config
	store    *store.Store
	records  records // the store, or o.records
	children *child.Registry
	log      *slog.Logger
	// loaded and trust are what the front's configuration load found
	// (frontWorkspace); nil and zero for darman run, which reports them
	// itself.
	loaded *config.Loaded
	trust  trustOutcome

	sessions    *session.Service
	models      *models
	mcp         *client.Manager
	lsp         *languageServers
	sandbox     *sandbox.Sandbox
	guard       *tool.RootGuard
	checkpoints *checkpoint.Keeper // nil when checkpoints are off
	close       func() error

	mu     sync.Mutex
	picked string // Model's choice
}

// openWorkspace builds a workspace's agent the same way for every front:
// the sandbox, the language servers (reading files through o.workspace,
// so an editor's unsaved buffers count), the configured MCP servers, the
// hooks, the checkpoints and the session service, their children recorded
// in o.children.
func openWorkspace(ctx context.Context, cfg config.Config, st *store.Store, o workspaceOptions, log *slog.Logger) (*workspace, error) {
	w := &workspace{root: o.root, cfg: cfg, store: st, records: o.records, children: o.children, log: log}
	if w.records == nil {
		w.records = st
	}
	w.sandbox = o.sandbox
	if w.sandbox == nil {
		w.sandbox = newSandbox(cfg)
	}
	w.guard = tool.NewRootGuard(quarantineDir(cfg), w.sandbox)
	servers, err := newLanguageServers(ctx, o.root, cfg, o.workspace, o.children, log)
	if err != nil {
		w.sandbox.Close()
		return nil, err
	}
	w.lsp = servers
	w.models = newModels(cfg, log)
	gate := o.gate
	if gate == nil {
		gate = permission.DeclineElicitor{}
	}
	w.mcp, err = startMCP(ctx, cfg, o.root, mcpRuntime{children: o.children, gate: gate, sampler: modelSampler(cfg, w.models),
		notify: o.notices}, o.waitMCP, log)
	stopAround := func() error {
		if w.mcp != nil {
			w.mcp.Close()
		}
		err := servers.Close()
		w.sandbox.Close()
		return err
	}
	if err != nil {
		stopAround()
		return nil, err
	}
	hooks, problems := newHooks(cfg, o.root, w.sandbox, o.children, w.records, w.models, log)
	for _, p := range problems {
		log.Warn("hooks", "problem", p)
		if o.notices != nil {
			o.notices("warning", p)
		}
	}
	w.checkpoints = newKeeper(cfg, w.records, log)
	w.sessions, err = w.newSessions(o, hooks)
	if err != nil {
		stopAround()
		return nil, err
	}
	// The language servers' state changes reach the front as the MCP
	// servers' do.
	stopNotices := func() {}
	if o.notices != nil {
		stopNotices = servers.watch(o.notices)
	}
	w.close = func() error {
		stopNotices()
		// The sessions' jobs stop first, then the sandbox kills what its
		// commands left running: the guard's last look misses no writer.
		err := errors.Join(w.sessions.Close(), hooks.Close(), stopAround())
		for _, moved := range w.guard.Settle() {
			log.Warn("workspace root", "moved", moved)
		}
		return err
	}
	// Last: the sandbox's probe (or its record's check, started with
	// darman) runs beside the rest of the start.
	if st := w.sandbox.Status(); len(st.Missing) > 0 {
		log.Warn("sandbox: walls missing", "missing", st.Missing, "why", st.Reason)
	}
	return w, nil
}

// newSessions builds the workspace's session service: its models, the
// built-in tools with the workspace's skills, the system prompt, the
// permission rules and the stored grants.
func (w *workspace) newSessions(o workspaceOptions, hooks *hook.Engine) (*session.Service, error) {
	cfg := w.cfg
	skills := prompt.LoadSkills(prompt.LocateDirs(w.root, nil), w.log)
	catalog := o.agents
	if catalog == nil {
		catalog = loadAgents(w.root, cfg, w.log)
	}
	return session.New(session.Options{
		Store:        w.records,
		Models:       w.models.resolve,
		Workspace:    o.workspace,
		WorkspaceFor: o.workspaceFor,
		AskerFor:     o.askerFor,
		Refused:      o.refused,
		Tools:        tool.Builtins(tool.Options{Skills: skills, Diagnostics: w.lsp, Children: o.children, Environ: childEnviron(cfg), Sandbox: w.sandbox, Guard: w.guard, Network: networkFor(cfg), WebFetch: tool.WebFetchOptions{AllowPrivate: cfg.WebFetch.AllowPrivate, Allow: cfg.WebFetch.Allow}}),
		ToolSource:   mcpToolSource(cfg, w.mcp, w.records),
		System:       systemPrompt(w.root, skills, o.git, w.log),
		Rules:        rules(cfg, o.rules),
		Grants:       grantStore{w.records},
		Asker:        o.asker,
		MaxSteps:     cfg.Agent.MaxSteps,
		Logger:       w.log,

		Diagnostics: w.lsp,
		Tasks:       o.tasks,
		Hooks:       sessionHooks(hooks),
		Checkpoints: sessionCheckpoints(w.checkpoints),
		Agents:      catalog,
		Commands:    w.Commands,
	})
}

// Sessions runs the workspace's turns.
func (w *workspace) Sessions() *session.Service { return w.sessions }

// Store is the session store the workspace's sessions are kept in.
func (w *workspace) Store() *store.Store { return w.store }

// Model is the model the workspace's new sessions get: chosen the first
// time it is asked and kept, unless the choice failed (a provider may
// come up later).
func (w *workspace) Model(ctx context.Context) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.picked != "" {
		return w.picked, nil
	}
	sel, err := w.models.selectModel(ctx)
	if err != nil {
		return "", err
	}
	w.picked = sel.Ref()
	return w.picked, nil
}

// Models are the models the configuration names (configuredModels).
func (w *workspace) Models(context.Context) []string { return configuredModels(w.cfg) }

// CheckModel says whether ref names a model a session can talk to.
func (w *workspace) CheckModel(ref string) error {
	_, _, err := w.models.resolve(ref)
	return err
}

// Commands are the workspace's commands (.darman/command/*.md, …), found
// again at each call so that a file added since the agent started counts;
// an untrusted folder's own command files run no shell commands
// (workspaceCommands).
func (w *workspace) Commands() *prompt.Commands {
	return workspaceCommands(w.root, w.cfg.WorkspaceTrusted)
}

// Agents are the named agents the workspace's turns run.
func (w *workspace) Agents() *agents.Catalog { return w.sessions.Agents() }

// Meta is the sandbox and the trust of the folder, as a front shows them
// beside a session (ACP's _meta; a part of Status).
func (w *workspace) Meta() map[string]any {
	return map[string]any{"sandbox": sandboxStatus(w.sandbox), "trust": w.trust.status()}
}

// Status describes the workspace's agent for darman.status: the data
// directory, the configuration files, the MCP and language servers, the
// sandbox and the trust.
func (w *workspace) Status(context.Context) map[string]any {
	st := w.Meta()
	st["dataDir"], st["storeOwner"] = w.cfg.DataDir, w.store.Owner()
	st["mcpServers"], st["languageServers"] = w.mcp.Status(), w.lsp.Status()
	if w.loaded != nil {
		st["configFiles"] = sources(w.loaded)
	}
	return st
}

// Bash is a bash tool of the workspace's (its sandbox, environment and
// children) outside any session: the commands a client's terminal does
// not run.
func (w *workspace) Bash() tool.Tool {
	return tool.Bash(tool.Options{Children: w.children, Environ: childEnviron(w.cfg), Sandbox: w.sandbox, Guard: w.guard, Network: networkFor(w.cfg)})
}

// Deleted removes what the workspace keeps of a session deleted from the
// store: its snapshots and its MCP servers' state.
func (w *workspace) Deleted(id agent.ID) error {
	collectCheckpoints(context.Background(), w.checkpoints, w.root, id, w.log)
	return forgetMCPSession(w.cfg, id)
}

// Definitions answers definition lookups from the workspace's language
// servers (the inline completions' context).
func (w *workspace) Definitions() complete.Definer { return poolDefiner{w.lsp.pool} }

// Close stops the session service (and with it the sessions' commands),
// the hooks, the MCP servers, the language servers and the sandbox.
func (w *workspace) Close() error { return w.close() }
