package main

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/childenv"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/startup"
	"github.com/darman-dev/darman/mcp/client"
	"github.com/darman-dev/darman/server/acp"
)

func (a *app) acpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Serve the agent to an Agent Client Protocol client (Zed, JetBrains, CodeCompanion, agent-shell)",
		Long: `acp is what ACP clients start: it speaks the Agent Client Protocol
(version 1, newline-delimited JSON-RPC) on stdin and stdout. Each session
runs in the directory the client names (its cwd), with the configuration
found from there; the MCP servers the client names run for that session
only. docs/acp.md describes the protocol as built. Logs go to stderr, or
to the configured log file.

darman acp ends when stdin ends: running turns are cancelled and stored as
such, and every process darman started is stopped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serveACP(cmd.Context())
		},
	}
}

func (a *app) serveACP(ctx context.Context) error {
	log, err := a.logger()
	if err != nil {
		// A broken config file must not keep the client's agent from
		// starting: the session that loads it reports the problem.
		log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		log.Warn("darman acp: the configuration did not load", "err", err)
	}
	start := a.startACPAgent(log)
	srv, err := acp.New(acp.Options{
		Start: func(ctx context.Context, setup acp.Setup) (acp.Agent, error) {
			ag, err := start(ctx, setup)
			startup.Release(log, "darman acp")
			return ag, err
		},
		// An ACP client starts its agent with the window and may not
		// open a session for a long time.
		Initialized: func() { startup.Release(log, "darman acp") },
		BindMCP:     bindSessionMCP(log, a.children),
		Version:     readBuildInfo().Version,
		Logger:      log,
		Images:      a.defaultModelTakesImages(log),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(ctx, a.stdin, a.stdout)
}

// startACPAgent builds the agent of a session's working directory: its
// configuration, the store (one for every directory), and the session
// service wired as darman run and darman lsp wire it, with the ACP
// server's workspace and asker.
func (a *app) startACPAgent(log *slog.Logger) func(context.Context, acp.Setup) (acp.Agent, error) {
	openStore := a.frontStore(log, "this directory's configuration stores sessions in %s, but darman acp already uses %s; start another darman acp for it")
	return func(ctx context.Context, setup acp.Setup) (acp.Agent, error) {
		var trust trustOutcome
		w, err := a.frontWorkspace(ctx, log, openStore, config.Options{WorkspaceRoot: setup.Root, Trust: decideTrust(trustPolicy{}, &trust)}, &trust,
			workspaceOptions{root: setup.Root, workspace: setup.Workspace, workspaceFor: setup.WorkspaceFor, askerFor: setup.AskerFor, tasks: true})
		if err != nil {
			return nil, err
		}
		return &acpAgent{workspace: w, trust: a.acpTrust(setup.Root, w.trust), bash: w.Bash()}, nil
	}
}

// acpAgent is the workspace runtime as the ACP front drives it: the
// runtime's own methods (its models, agents, _meta, Close), with its
// sessions, store and checkpoints as the front's interfaces, the folder's
// trust as the front tells it, and one bash of the runtime's for the
// background commands of a client whose terminal runs the others.
type acpAgent struct {
	*workspace
	trust acp.Trust
	bash  tool.Tool
}

func (a *acpAgent) Sessions() acp.Sessions       { return a.workspace.Sessions() }
func (a *acpAgent) Store() acp.Store             { return a.workspace.Store() }
func (a *acpAgent) Checkpoints() acp.Checkpoints { return acpCheckpoints(a.checkpoints) }
func (a *acpAgent) Trust() acp.Trust             { return a.trust }
func (a *acpAgent) Bash() tool.Tool              { return a.bash }

// configuredModels are the models the configuration names: its model and
// every provider's listed models, as "provider/model-id".
func configuredModels(cfg config.Config) []string {
	var out []string
	if cfg.Model != "" {
		out = append(out, cfg.Model)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Provider)) {
		for _, id := range slices.Sorted(maps.Keys(cfg.Provider[name].Models)) {
			if ref := name + "/" + id; !slices.Contains(out, ref) {
				out = append(out, ref)
			}
		}
	}
	return out
}

// bindSessionMCP starts the MCP servers a client names for one session,
// with the MCP client darman uses for configured servers, and returns the
// tools of those that started. A server that fails is logged and left out,
// as an optional configured server would be.
func bindSessionMCP(log *slog.Logger, children *child.Registry) func(context.Context, string, []acp.MCPServer) ([]tool.Tool, func() error, error) {
	return func(ctx context.Context, root string, servers []acp.MCPServer) ([]tool.Tool, func() error, error) {
		defs := make([]client.Definition, len(servers))
		for i, s := range servers {
			defs[i] = client.Definition{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env,
				Environ: childenv.Filter(os.Environ(), childenv.Policy{}), URL: s.URL, Headers: s.Headers, SSE: s.SSE}
			if s.URL == "" {
				defs[i].Dir = root
			}
		}
		m := client.New(defs, client.Options{Logger: log, Children: children, Version: readBuildInfo().Version})
		stop := func() error {
			m.Close()
			return nil
		}
		m.Start()
		var se *client.StartupError
		if err := m.Wait(ctx); err != nil && !errors.As(err, &se) {
			stop()
			return nil, nil, err
		}
		if se != nil {
			for _, f := range se.Failures {
				log.Warn("a session's mcp server failed to start", "server", f.Server, "class", string(f.Class), "error", f.Message)
			}
		}
		tools, err := m.Tools(ctx)
		if err != nil {
			stop()
			return nil, nil, err
		}
		return tools, stop, nil
	}
}
