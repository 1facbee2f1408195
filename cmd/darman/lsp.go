package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/startup"
	"github.com/darman-dev/darman/server/lsp"
)

func (a *app) lspCommand() *cobra.Command {
	var (
		stdio  bool
		listen string
	)
	cmd := &cobra.Command{
		Use:   "lsp",
		Short: "Serve the agent to an editor over the Language Server Protocol",
		Long: `lsp is what editors start: it speaks the Language Server Protocol on stdin
and stdout (--stdio is accepted, and implied), so any editor that can start a
language server gets the agent. docs/protocol.md describes the commands, the
custom messages a client may opt into, and the fallbacks for clients that
do not. Logs go to stderr, or to the configured log file.

The workspace is the first workspace folder the editor names. Settings from
the editor (initializationOptions.darman, or the darman section of
workspace/didChangeConfiguration) apply over the config files.

--listen 127.0.0.1:PORT serves one connection on a loopback TCP port
instead, for debugging with a client started by hand.

Exit status: 0 after the editor's shutdown and exit, 1 when the connection
ended without them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serveLSP(cmd.Context(), listen)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&stdio, "stdio", false, "speak LSP on stdin and stdout (the default; editors add this flag)")
	f.StringVar(&listen, "listen", "", "serve one connection on this loopback address (127.0.0.1:PORT) instead of stdio")
	return cmd
}

func (a *app) serveLSP(ctx context.Context, listen string) error {
	log, err := a.logger()
	if err != nil {
		// A broken config file must not keep the editor's server from
		// starting: it reports the problem to the user once the agent
		// starts with the same configuration.
		log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		log.Warn("darman lsp: the configuration did not load", "err", err)
	}
	dataDir := ""
	if a.loaded != nil {
		dataDir = a.loaded.Config.DataDir
	}
	start := a.startLSPAgent(log)
	srv, err := lsp.New(lsp.Options{
		Start: func(ctx context.Context, setup lsp.Setup) (*lsp.Agent, error) {
			ag, err := start(ctx, setup)
			// The agent is up and the server waits for the editor.
			startup.Release(log, "darman lsp")
			return ag, err
		},
		Models: a.lspModels(log),
		// darman.model.list asks the servers.
		ServedModels: a.lspServedModels(log),
		Agents:       a.lspAgents(log),
		Root:         a.workspace,
		Version:      readBuildInfo().Version,
		DataDir:      dataDir,
		Logger:       log,

		Completion: a.lspCompletion(log),
		Trust: func(_ context.Context, root string, never bool) error {
			_, _, err := a.recordTrust(root, never)
			return err
		},
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	var rwc io.ReadWriteCloser = stdioConn{}
	if listen != "" {
		conn, err := acceptOne(ctx, listen, a.stderr)
		if err != nil {
			return err
		}
		rwc = conn
	}
	if code := srv.Serve(ctx, rwc); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// stdioConn is the editor's end of the pipes: stdin and stdout.
type stdioConn struct{}

func (stdioConn) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdioConn) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdioConn) Close() error                { return errors.Join(os.Stdin.Close(), os.Stdout.Close()) }

// acceptOne listens on a loopback address and returns the first
// connection.
func acceptOne(ctx context.Context, addr string, stderr io.Writer) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v (expected 127.0.0.1:PORT)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--listen %q: only a loopback address is allowed (127.0.0.1:PORT): the protocol has no authentication", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	defer l.Close()
	fmt.Fprintf(stderr, "darman lsp: listening on %s\n", l.Addr())
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	conn, err := l.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("--listen: %w", err)
	}
	return conn, nil
}

// startLSPAgent builds the agent for the workspace initialize names: the
// configuration of that workspace with the editor's settings over it, the
// store, and the session service wired as darman run wires it, with the
// server's editor-aware workspace and permission asker.
func (a *app) startLSPAgent(log *slog.Logger) func(context.Context, lsp.Setup) (*lsp.Agent, error) {
	// The store outlives the agents: new settings start a new agent while
	// the previous one finishes its turns, on the same store. It is closed
	// with the app.
	openStore := a.frontStore(log, "dataDir changed to %s while darman lsp runs on %s; restart the language server to move")
	return func(ctx context.Context, setup lsp.Setup) (*lsp.Agent, error) {
		var trust trustOutcome
		w, err := a.frontWorkspace(ctx, log, openStore, lspConfigOptions(setup, &trust), &trust,
			workspaceOptions{root: setup.Root, workspace: setup.Workspace, asker: setup.Asker, gate: setup.Elicitor, notices: setup.Notices, tasks: true,
				agents: setup.Agents})
		if err != nil {
			return nil, err
		}
		cfg := w.cfg
		return &lsp.Agent{
			Sessions:      w.Sessions(),
			Store:         w.Store(),
			Runtime:       w,
			PromptActions: promptActions(cfg.CodeActions),
			NoTranscript:  cfg.Transcript != nil && !*cfg.Transcript,
			Checkpoints:   serverCheckpoints(w.checkpoints),
			Trust:         lspTrust(w.trust),
		}, nil
	}
}

// withSettings makes the editor's settings the DARMAN_CONFIG_CONTENT
// layer of the configuration, so they are checked, and reported by key,
// exactly like a config file.
func withSettings(settings json.RawMessage) func(string) (string, bool) {
	if len(settings) == 0 || string(settings) == "null" {
		return nil
	}
	return func(name string) (string, bool) {
		if name == config.EnvConfigContent {
			return string(settings), true
		}
		return os.LookupEnv(name)
	}
}

func sources(l *config.Loaded) []string {
	var out []string
	for _, s := range l.Sources {
		if s.Found {
			out = append(out, s.Path)
		}
	}
	return out
}

// promptActions are the configuration file's code actions, nil when it has
// none.
func promptActions(cfg []config.CodeAction) []lsp.PromptAction {
	if cfg == nil {
		return nil
	}
	out := make([]lsp.PromptAction, len(cfg))
	for i, a := range cfg {
		out[i] = lsp.PromptAction{Title: a.Title, Prompt: a.Prompt}
	}
	return out
}
