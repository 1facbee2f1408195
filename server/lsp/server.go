package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/completion"
	"github.com/darman-dev/darman/server/lsp/internal/edit"
	"github.com/darman-dev/darman/server/rpc"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// Options configure a Server.
type Options struct {
	// Start builds the agent once initialize has named the workspace.
	// Required. It runs in the background: initialize is answered at once,
	// and requests that need the agent wait for it. An error (a bad
	// setting, no model) is shown to the user; the server keeps serving
	// documents and code actions, and tries again when the settings change.
	Start func(ctx context.Context, setup Setup) (*Agent, error)
	// Models lists the models initialize offers the client, from the
	// configuration of setup's workspace and settings (setup.Workspace and
	// setup.Asker are nil). It runs while initialize is answered, so it
	// must not start the agent or wait for the network. Nil offers none.
	Models func(ctx context.Context, setup Setup) (ModelChoices, error)
	// ServedModels lists the models the providers' servers serve, asking
	// them (darman.model.list); it may wait for the network. Nil answers
	// Models' list.
	ServedModels func(ctx context.Context, setup Setup) (ModelChoices, error)
	// Agents finds the workspace's named agents (files and configuration)
	// while initialize is answered, as Models does; the agent Start builds
	// must run the same catalog (Setup.Agents). Nil, or a nil answer,
	// offers the built-in agents alone.
	Agents func(ctx context.Context, setup Setup) *agents.Catalog
	// Root is the workspace root when initialize names none; "" means the
	// current directory.
	Root string
	// Version is reported in serverInfo.
	Version string
	// DataDir is where session transcripts are written
	// (DataDir/transcripts/<session>.md); "" means the OS temp directory.
	DataDir string
	// CallTimeout bounds a request to the editor; zero means 30 seconds.
	CallTimeout time.Duration
	// PermissionTimeout is how long a permission asked through code
	// actions (for clients without showMessageRequest) waits before it
	// counts as rejected; zero means 5 minutes.
	PermissionTimeout time.Duration
	// Logger receives the server's log lines; nil discards them.
	Logger *slog.Logger
	// Completion finds the inline completion setup of setup's workspace
	// (server/lsp/internal/completion) while initialize is answered, so it
	// must not wait for the network; nil or a nil config means no
	// completions.
	Completion func(ctx context.Context, setup Setup) (*CompletionConfig, error)
	// Trust records the user's answer about the folder at root: trusted,
	// or never (darman trust's records); nil offers no trust question.
	Trust func(ctx context.Context, root string, never bool) error
}

// Server is darman's language server for one client connection. Make it
// with New and run it with Serve, once.
type Server struct {
	opts Options
	log  *slog.Logger
	conn *rpc.Conn

	// ctx is the lifetime of the server's work: it ends at shutdown, or
	// when Serve returns. Work the server starts on its own (turns, relays)
	// runs under it and is waited for through wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// owning orders goOwned's wg.Add before stop's cancel, so that stop's
	// wg.Wait never runs beside an Add (see goOwned).
	owning sync.Mutex

	// Set by initialize, on the read goroutine, before any other handler
	// runs; read-only afterwards.
	client client
	root   string

	mu      sync.Mutex
	folders []string
	// editorTrust is the editor's own trust of the folder (see trust.go);
	// nil when it said nothing.
	editorTrust *bool
	live        map[agent.ID]*live // sessions the client has used

	docs      *buffer.Set
	complete  *completion.Completion // started by initialize
	ws        *edit.Workspace        // made by initialize
	questions questions
	// noShowDocument is set once the client could not show a document.
	noShowDocument atomic.Bool
	transcriptMu   sync.Mutex

	agent    agentSlot
	agents   agentsState
	stopOnce sync.Once
	// commands are the commands as last found (Sessions.Commands) by
	// darman.command.list, .run or the first code action; nil until then.
	commands atomic.Pointer[prompt.Commands]

	// reconfigure serializes applySettings; agentSettings are the
	// configuration keys the agent in service was started with.
	reconfigure   sync.Mutex
	agentSettings json.RawMessage
	// settings are the server's own settings; guarded by mu.
	settings serverSettings
	// settingsErr is a problem with the settings of initialize, shown
	// once the client is initialized.
	settingsErr error
}

// New returns a server.
func New(opts Options) (*Server, error) {
	if opts.Start == nil {
		return nil, errors.New("server.New: Options.Start is required")
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.PermissionTimeout <= 0 {
		opts.PermissionTimeout = 5 * time.Minute
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log, docs: buffer.NewSet()}
	s.complete = completion.New(s.docs, log, func(msg string) { s.logMessage(protocol.MessageTypeWarning, msg) })
	s.agent.ready = make(chan struct{})
	return s, nil
}

// Serve speaks LSP over rwc until the client sends exit, the input ends
// or ctx is cancelled, then stops every turn and closes the agent. It
// returns the process exit status LSP asks for: 0 after shutdown, 1
// without it.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) int {
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.conn = rpc.NewConn(rwc, s.handlers(), &rpc.Options{CallTimeout: s.opts.CallTimeout, Logger: s.log})
	res := s.conn.Run(ctx)
	if !res.Shutdown {
		s.log.Info("lsp: the connection ended without shutdown; stopping", "exit", res.Exit)
	}
	s.stop()
	return res.ExitCode()
}

// handlers lists the methods the server answers.
func (s *Server) handlers() rpc.Handlers {
	return rpc.Handlers{
		Initialize: s.initialize,
		Shutdown:   func(context.Context) error { s.stop(); return nil },
		Requests: map[string]rpc.RequestFunc{
			"workspace/executeCommand": s.executeCommand,
			"textDocument/codeAction":  s.codeAction,
			"codeAction/resolve":       s.resolveCodeAction,
			// Inline completions (server/lsp/internal/completion).
			"textDocument/inlineCompletion": s.complete.Inline,
			"textDocument/completion":       s.complete.Item,
		},
		Notifications: map[string]rpc.NotificationFunc{
			"initialized":                         s.initialized,
			"textDocument/didOpen":                s.didOpen,
			"textDocument/didChange":              s.didChange,
			"textDocument/didSave":                s.didSave,
			"textDocument/didClose":               s.didClose,
			"workspace/didChangeConfiguration":    s.didChangeConfiguration,
			"workspace/didChangeWorkspaceFolders": s.didChangeWorkspaceFolders,
			"window/workDoneProgress/cancel":      s.workDoneProgressCancel,
			"$/setTrace":                          func(context.Context, json.RawMessage) error { return nil },
		},
	}
}

// stop ends the server's work: running turns are cancelled and recorded
// as such, background work is waited for, and the agent is closed. It is
// what shutdown does, and what the end of the input does without one.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		s.owning.Lock()
		s.cancel()
		s.owning.Unlock()
		s.wg.Wait()
		if a, err := s.agent.peek(); err == nil {
			if err := a.Runtime.Close(); err != nil {
				s.log.Warn("lsp: closing the agent", "err", err)
			}
		}
	})
}

// goOwned runs fn on a goroutine that stop waits for. Once stop began, fn
// still runs (under the cancelled context, so it ends soon) but is not
// waited for: a WaitGroup must not be added to beside its Wait.
func (s *Server) goOwned(fn func()) {
	s.owning.Lock()
	owned := s.ctx.Err() == nil
	if owned {
		s.wg.Add(1)
	}
	s.owning.Unlock()
	go func() {
		if owned {
			defer s.wg.Done()
		}
		fn()
	}()
}

// agentSlot holds the agent while it starts and after.
type agentSlot struct {
	mu    sync.Mutex
	ready chan struct{} // closed once the first start ended
	agent *Agent
	err   error
}

// get waits for the agent, and returns why it is not there if it failed
// to start.
func (a *agentSlot) get(ctx context.Context) (*Agent, error) {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return a.peek()
}

// peek returns the agent without waiting.
func (a *agentSlot) peek() (*Agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.agent != nil:
		return a.agent, nil
	case a.err != nil:
		return nil, fmt.Errorf("darman's agent did not start: %w", a.err)
	}
	return nil, errors.New("darman's agent is not started")
}
