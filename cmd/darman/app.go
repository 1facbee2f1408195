package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/logging"
)

// app is the composition root and the process's one runtime: what it is
// given (the standard streams; the arguments go to cobra, which fills
// flags and workspace) and what it builds on first use — config, logger,
// store — so that commands which need none of them (version, completion)
// start fast. Everything built registers its cleanup in one list, which
// close runs in reverse order; the registry of child processes is first
// in it, so it is stopped last.
type app struct {
	stdin          *os.File
	stdout, stderr io.Writer
	flags          config.Flags
	workspace      string

	// children is the process's one registry of child processes: every
	// command's tools, language servers and MCP servers record theirs in
	// it, and close stops what their owners left, last of all.
	children *child.Registry

	// quietLogs: a person reads stderr (darman run, doctor), so the logger
	// there writes errors only unless a level or a log file was asked for.
	quietLogs bool

	loaded *config.Loaded
	// trustPolicy is how config decides the workspace's trust (darman
	// run sets it); trust is what it decided.
	trustPolicy trustPolicy
	trust       trustOutcome
	log         *slog.Logger
	closers     []func() error
}

// newApp is the runtime of one darman process over its standard streams.
func newApp(stdin *os.File, stdout, stderr io.Writer) *app {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, children: &child.Registry{}}
	a.cleanup(func() error {
		a.children.Close(2 * time.Second)
		return nil
	})
	return a
}

// cleanup adds f to what close runs, before everything added earlier.
func (a *app) cleanup(f func() error) { a.closers = append(a.closers, f) }

// exitError ends the process with a code, after its message (if any) is
// printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == sandboxExecCommand {
		return sandboxExec(args[1:], stderr)
	}
	a := newApp(stdin, stdout, stderr)
	defer a.close()
	root := a.rootCommand()
	leanCompletion(root, args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return 0
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err != nil {
			fmt.Fprintln(stderr, "darman:", exit.err)
		}
		return exit.code
	}
	fmt.Fprintln(stderr, "darman:", err)
	return 1
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "darman",
		Short: "An AI coding agent inside your editor, over the Language Server Protocol",
		Long: `darman is an AI coding agent that lives in the editor. It speaks the
Language Server Protocol, so any editor that can start a language server
gets it; it keeps its sessions in a local store shared by every darman
process of the user.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&a.workspace, "workspace", "", "the workspace root (default: the current directory)")
	f.StringVar(&a.flags.Model, "model", "", `the model, as "provider/model-id"`)
	f.StringVar(&a.flags.DataDir, "data-dir", "", "where sessions are stored")
	f.StringVar(&a.flags.LogLevel, "log-level", "", "debug, info, warn or error")
	f.StringVar(&a.flags.LogFile, "log-file", "", "append logs to this file instead of stderr")
	root.RegisterFlagCompletionFunc("model", a.completeModels)
	root.RegisterFlagCompletionFunc("log-level", completeWords("debug", "info", "warn", "error"))
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print darman's version (as darman version does)")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			return a.printVersion(false)
		}
		return cmd.Help()
	}
	root.AddCommand(
		a.versionCommand(),
		a.modelsCommand(),
		a.doctorCommand(),
		a.sessionsCommand(),
		a.configCommand(),
		a.runCommand(),
		a.lspCommand(),
		a.mcpCommand(),
		a.acpCommand(),
		a.trustCommand(),
	)
	return root
}

// workspaceRoot is the absolute workspace root.
func (a *app) workspaceRoot() (string, error) {
	dir := a.workspace
	if dir == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--workspace %s: not a directory", dir)
	}
	return abs, nil
}

// config loads the configuration once.
func (a *app) config() (*config.Loaded, error) {
	if a.loaded != nil {
		return a.loaded, nil
	}
	root, err := a.workspaceRoot()
	if err != nil {
		return nil, err
	}
	loaded, err := config.Load(config.Options{WorkspaceRoot: root, Flags: a.flags, Trust: decideTrust(a.trustPolicy, &a.trust)})
	if err != nil {
		return nil, err
	}
	a.loaded = loaded
	return loaded, nil
}

// logger builds the logger from the configuration once. Logs never go to
// stdout, which carries the protocol in lsp and mcp modes.
func (a *app) logger() (*slog.Logger, error) {
	if a.log != nil {
		return a.log, nil
	}
	loaded, err := a.config()
	if err != nil {
		return nil, err
	}
	redactor := &logging.Redactor{}
	redactor.Add(loaded.Config.Secrets()...)
	level := loaded.Config.Log.Level
	if _, env := os.LookupEnv(config.EnvLogLevel); a.quietLogs && level == config.LevelInfo && loaded.Config.Log.File == "" && a.flags.LogLevel == "" && !env {
		level = config.LevelError
	}
	log, closer, err := logging.New(logging.Options{
		Level:    string(level),
		File:     loaded.Config.Log.File,
		Stderr:   a.stderr,
		Redactor: redactor,
	})
	if err != nil {
		return nil, err
	}
	a.cleanup(closer.Close)
	a.log = log
	return log, nil
}

// openStore opens the session store in the configured data directory.
func (a *app) openStore(ctx context.Context) (*store.Store, error) {
	return a.openStoreWith(ctx, false)
}

// openStoreReadOnly opens it for a command that only reads (see
// openStoreIn).
func (a *app) openStoreReadOnly(ctx context.Context) (*store.Store, error) {
	return a.openStoreWith(ctx, true)
}

func (a *app) openStoreWith(ctx context.Context, readOnly bool) (*store.Store, error) {
	loaded, err := a.config()
	if err != nil {
		return nil, err
	}
	log, err := a.logger()
	if err != nil {
		return nil, err
	}
	return a.openStoreIn(ctx, loaded.Config.DataDir, log, readOnly)
}

// errNoDataDir is why there is no store when no data directory is set.
var errNoDataDir = errors.New("no data directory: set dataDir in the config, DARMAN_DATA_DIR or --data-dir (no home directory was found)")

// openStoreIn is darman's one way to open the session store: the store in
// dir, closed with the app. readOnly is for a command that only reads:
// when no other darman owns it, badger opens it read-only, and a damaged
// store is an error rather than an empty one.
func (a *app) openStoreIn(ctx context.Context, dir string, log *slog.Logger, readOnly bool) (*store.Store, error) {
	if dir == "" {
		return nil, errNoDataDir
	}
	s, err := store.Open(ctx, dir, store.Options{Logger: log, ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	a.cleanup(s.Close)
	return s, nil
}

// close runs the cleanup list, the last added first.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
