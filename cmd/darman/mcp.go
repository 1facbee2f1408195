package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/internal/config"
	mcpserver "github.com/darman-dev/darman/mcp/server"
)

func (a *app) mcpCommand() *cobra.Command {
	var (
		projectRoot, httpAddr, tokenFile string
		instructions                     bool
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the workspace's language intelligence to other agents over MCP",
		Long: `mcp is a Model Context Protocol server for agents such as Claude Code,
Codex or Cursor: it gives them the project's real language servers (gopls,
typescript-language-server, pyright, rust-analyzer, clangd, as installed)
through tools that take symbol names rather than cursor positions:
diagnostics, check_source, lookup_symbol, find_references, definition,
describe_symbol, outline, package_api, rename_symbol, format_source,
list_imports and explain_diagnostic.

It speaks on stdin and stdout by default. --http 127.0.0.1:PORT serves
streamable HTTP instead, on a loopback address only; --token-file makes
every request carry "Authorization: Bearer <the file's content>" (with
--http and no --token-file a token is generated and printed to stderr).
Logs go to stderr.

The project root is --project-root, else the nearest directory above the
working directory with darman.json, .darman, go.mod, package.json,
pyproject.toml, Cargo.toml or .git, else the working directory. Tools refuse
paths outside it.

--instructions prints the guidance given to models, and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if instructions {
				fmt.Fprintln(a.stdout, mcpserver.Instructions())
				return nil
			}
			return a.serveMCP(cmd.Context(), projectRoot, httpAddr, tokenFile)
		},
	}
	f := cmd.Flags()
	f.StringVar(&projectRoot, "project-root", "", "the project the tools work in (default: found from the working directory)")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	f.StringVar(&tokenFile, "token-file", "", "with --http, require the bearer token this file holds")
	f.BoolVar(&instructions, "instructions", false, "print the guidance given to models and exit")
	return cmd
}

func (a *app) serveMCP(ctx context.Context, projectRoot, httpAddr, tokenFile string) error {
	if tokenFile != "" && httpAddr == "" {
		return errors.New("--token-file needs --http: on stdio the client that starts darman is the only peer")
	}
	if httpAddr != "" {
		if err := mcpserver.CheckLoopback(httpAddr); err != nil {
			return err
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := mcpserver.DetectRoot(projectRoot, cwd)
	if err != nil {
		return err
	}
	if a.workspace == "" {
		a.workspace = root.Dir
	}
	log, err := a.logger()
	if err != nil {
		// A broken config must not keep the agent's tools from starting.
		log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		log.Warn("darman mcp: the configuration did not load; using the built-in language servers", "err", err)
	}
	// The folder's language-server commands follow the user's trust
	// records, as every front's settings do; say what was left out.
	if n := a.trust.notice(); n != "" {
		log.Warn("darman mcp: " + n)
	}
	opts := mcpserver.Options{Root: root, Version: readBuildInfo().Version, Logger: log}
	opts.Env = childEnviron(config.Config{})
	if a.loaded != nil {
		opts.Servers = a.loaded.Config.LSP
		opts.Env = childEnviron(a.loaded.Config)
	}
	opts.Children = a.children
	log.Info("darman mcp", "root", root.Dir, "rootSource", root.Source)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := mcpserver.New(ctx, opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	if httpAddr == "" {
		return srv.RunStdio(ctx, os.Stdin, a.stdout, log)
	}
	return a.serveMCPHTTP(ctx, srv, httpAddr, tokenFile)
}

func (a *app) serveMCPHTTP(ctx context.Context, srv *mcpserver.Server, addr, tokenFile string) error {
	token := ""
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(data))
		if token == "" {
			return fmt.Errorf("--token-file %s is empty: put the token in it", tokenFile)
		}
	} else {
		b := make([]byte, 24)
		rand.Read(b)
		token = hex.EncodeToString(b)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	url := "http://" + l.Addr().String() + "/mcp"
	fmt.Fprintf(a.stderr, "darman mcp: serving %s for %s\n", url, srv.Root().Dir)
	if tokenFile == "" {
		fmt.Fprintf(a.stderr, "darman mcp: send Authorization: Bearer %s\n", token)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(mcpserver.HTTPOptions{Token: token}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("--http: %w", err)
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
		<-done
		return nil
	}
}
