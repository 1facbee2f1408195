package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// ErrNoServer is wrapped when no language server handles a file's
// extension (or the one that would is disabled).
var ErrNoServer = errors.New("no language server handles this file")

// ErrNotInstalled is wrapped when the server for a file is not on PATH.
var ErrNotInstalled = errors.New("the language server is not installed")

// ErrUnavailable is wrapped when the server failed to start or crashed and
// its next start is not due yet, or it crashed during the call.
var ErrUnavailable = errors.New("the language server is unavailable")

// FileReader reads a file's current content: the editor's unsaved buffer
// when the file is open there, else the disk's. It must be safe for
// concurrent use. agent/tool's Workspace has this method.
type FileReader interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

type diskReader struct{}

func (diskReader) ReadFile(_ context.Context, path string) ([]byte, error) { return os.ReadFile(path) }

// Options configures a Pool. Only Root is required.
type Options struct {
	// Root is the workspace's absolute root directory. Files inside it get
	// a server rooted at the nearest directory with one of the server's
	// root markers, or at Root.
	Root string
	// Servers is the configuration's lsp map, merged over the built-in
	// table (go, rust, typescript, python, c). nil uses the built-ins.
	Servers map[string]config.LSP
	// Files reads file content; nil reads the disk.
	Files FileReader
	// Wait is how long Diagnostics waits for the server when the caller
	// passes zero and the server's configuration sets no diagnosticsWait;
	// zero means 1.5 s.
	Wait time.Duration
	// StartTimeout bounds a server's initialize handshake; zero means 30 s.
	StartTimeout time.Duration
	// QueryTimeout bounds each query (symbols, references, rename, ...)
	// when the caller's context has no earlier deadline; zero means 10 s.
	QueryTimeout time.Duration
	// IdleTimeout stops a server not used for that long (it starts again
	// on next use), unless its configuration sets its own idleTimeout;
	// zero never stops idle servers.
	IdleTimeout time.Duration
	// Backoff is the delay before restarting a server after its first
	// crash or failed start; it doubles with each further failure, up to
	// a minute. Zero means 1 s.
	Backoff time.Duration
	// WriteTimeout is how long a write to a server may block before the
	// server is deemed hung and stopped; zero means 10 s.
	WriteTimeout time.Duration
	// Env is the servers' base environment; nil means darman's own.
	Env []string
	// Process names the process whose environment the servers inherit,
	// in advice such as "put Go on PATH for darman mcp's environment";
	// empty means "darman".
	Process string
	// LoadTimeout is how long a server may report progress on loading the
	// workspace before it is deemed stuck (its queries then fail with a
	// LoadError until the progress ends); zero means 2 minutes.
	LoadTimeout time.Duration
	// OnStatus, if set, is called each time a server changes state
	// (started, failed, crashed, stopped) or its loading of the workspace
	// fails or recovers, on a goroutine of the pool's or of the server's
	// connection; it must not block.
	OnStatus func(ServerStatus)
	// Children records the servers' process groups, so the composition
	// root can stop any left at exit; nil records nothing.
	Children *child.Registry
	// ClientVersion is darman's version, sent to servers.
	ClientVersion string
	// Logger receives the pool's and the servers' logs; nil discards.
	Logger *slog.Logger
}

// Pool runs language servers for one workspace: one client per (server,
// root), started the first time a file of its language is used. A server
// that crashes is restarted on its next use once its backoff has passed;
// one that fails to start is marked failed, with the reason in Status, and
// nothing else is affected. All methods are safe for concurrent use. Close
// (or the end of the context given to New) stops every server and kills
// its process group.
type Pool struct {
	opts    Options
	log     *slog.Logger
	files   FileReader
	servers []*server
	byExt   map[string]*server

	ctx    context.Context // the pool's lifetime
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines the pool owns

	mu      sync.Mutex
	entries map[entryKey]*entry
	closed  bool

	outlines outlines
}

type entryKey struct{ server, root string }

// State is where a server is in its life.
type State string

const (
	// StateIdle: configured and found, not started (or stopped when idle).
	StateIdle State = "idle"
	// StateMissing: its executable is not installed.
	StateMissing  State = "not installed"
	StateDisabled State = "disabled"
	StateStarting State = "starting"
	StateRunning  State = "running"
	// StateFailed: it failed to start; it is tried again after RetryAt.
	StateFailed State = "failed"
	// StateCrashed: it ended while in use; it restarts on next use after
	// RetryAt.
	StateCrashed State = "crashed"
	StateStopped State = "stopped"
)

// ServerStatus describes one server for `darman doctor` and the status
// command.
type ServerStatus struct {
	// Name is the configuration key (go, typescript, ...).
	Name string `json:"name"`
	// Root is the workspace root the instance serves; empty for a server
	// that has no instance yet.
	Root    string   `json:"root,omitempty"`
	Command []string `json:"command,omitempty"`
	State   State    `json:"state"`
	// Reason says why it failed, crashed or is missing, in one line: the
	// error, how the process ended and its stderr's last lines.
	Reason string `json:"reason,omitempty"`
	// Exit is how the process of a failed or crashed server ended
	// ("exited with status 3", or "killed by" and the signal); empty when it was
	// still running (it stopped answering) or never started.
	Exit string `json:"exit,omitempty"`
	// Stderr is the first and last lines the failed or crashed server
	// wrote to stderr, joined by " | ".
	Stderr string `json:"stderr,omitempty"`
	// Extensions are the file extensions the server handles.
	Extensions []string `json:"extensions,omitempty"`
	PID        int      `json:"pid,omitempty"`
	// Server is the name and version the server gave.
	Server   string    `json:"server,omitempty"`
	Restarts int       `json:"restarts,omitempty"`
	RetryAt  time.Time `json:"retryAt,omitzero"`
	// Load is how a running server's loading of the workspace stands:
	// loading, loaded, or failed with LoadError saying why and what to do.
	Load      LoadState  `json:"load,omitempty"`
	LoadError *LoadError `json:"loadError,omitempty"`
	// LoadMillis is how long the load took, from the server's start to
	// the end of its last loading progress (or its first answer, for a
	// server that reports none); while loading, how long it has been.
	LoadMillis int64 `json:"loadMs,omitempty"`
}

// New makes a pool. No server starts until a file needs it. When ctx ends
// the pool closes itself.
func New(ctx context.Context, opts Options) (*Pool, error) {
	if !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("diagnostics: the workspace root must be an absolute path, got %q", opts.Root)
	}
	opts.Root = filepath.Clean(opts.Root)
	if opts.Wait <= 0 {
		opts.Wait = 1500 * time.Millisecond
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 10 * time.Second
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Process == "" {
		opts.Process = "darman"
	}
	if opts.LoadTimeout <= 0 {
		opts.LoadTimeout = 2 * time.Minute
	}
	list, err := servers(opts.Servers)
	if err != nil {
		return nil, fmt.Errorf("diagnostics: %w", err)
	}
	p := &Pool{
		opts:    opts,
		log:     opts.Logger,
		files:   opts.Files,
		servers: sortedServers(list),
		byExt:   map[string]*server{},
		entries: map[entryKey]*entry{},
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.files == nil {
		p.files = diskReader{}
	}
	for _, s := range p.servers {
		if s.disabled {
			continue
		}
		for _, e := range s.extensions {
			if other, taken := p.byExt[e]; taken {
				return nil, fmt.Errorf("diagnostics: both lsp.%s and lsp.%s handle %s files; disable one or change its extensions", other.name, s.name, e)
			}
			p.byExt[e] = s
		}
	}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-ctx.Done():
			p.stopAll()
		case <-p.ctx.Done():
		}
	}()
	if tick := p.idleTick(); tick > 0 {
		p.wg.Add(1)
		go p.reapIdle(tick)
	}
	return p, nil
}

// waitFor is how long Diagnostics waits for s when the caller does not say.
func (p *Pool) waitFor(s *server) time.Duration {
	if s.wait > 0 {
		return s.wait
	}
	return p.opts.Wait
}

// idleTimeout is how long s may stay unused; zero is for ever.
func (p *Pool) idleTimeout(s *server) time.Duration {
	if s.idle > 0 {
		return s.idle
	}
	return p.opts.IdleTimeout
}

// idleTick is how often to look for idle servers: a quarter of the
// shortest idle timeout, zero when no server has one.
func (p *Pool) idleTick() time.Duration {
	shortest := time.Duration(0)
	for _, s := range p.servers {
		if d := p.idleTimeout(s); d > 0 && (shortest == 0 || d < shortest) {
			shortest = d
		}
	}
	if shortest == 0 {
		return 0
	}
	return max(shortest/4, 10*time.Millisecond)
}

// Close stops every server: shutdown and exit, then the process group is
// terminated and killed if it lingers. It waits for them to be gone.
func (p *Pool) Close() error {
	p.stopAll()
	p.wg.Wait()
	return nil
}

// stopAll is Close without waiting for the pool's goroutines.
func (p *Pool) stopAll() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	entries := make([]*entry, 0, len(p.entries))
	for _, e := range p.entries {
		entries = append(entries, e)
	}
	p.mu.Unlock()
	p.cancel()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.stop(StateStopped, "darman closed the pool")
		}()
	}
	wg.Wait()
}

// serverFor returns the server for a file, by extension.
func (p *Pool) serverFor(path string) (*server, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if s, ok := p.byExt[ext]; ok {
		return s, nil
	}
	for _, s := range p.servers {
		if s.disabled && slices.Contains(s.extensions, ext) {
			return nil, fmt.Errorf("%w: %s (lsp.%s is disabled in darman's configuration)", ErrNoServer, filepath.Base(path), s.name)
		}
	}
	if ext == "" {
		return nil, fmt.Errorf("%w: %s has no extension to pick a server by", ErrNoServer, filepath.Base(path))
	}
	return nil, fmt.Errorf("%w: no server is configured for %s files; add one under \"lsp\" in darman's configuration", ErrNoServer, ext)
}

// entryFor returns the instance of s for the root path belongs to.
func (p *Pool) entryFor(s *server, path string) (*entry, error) {
	root := findRoot(path, p.opts.Root, s.rootMarkers)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%w: the pool is closed", ErrUnavailable)
	}
	key := entryKey{s.name, root}
	e := p.entries[key]
	if e == nil {
		e = &entry{pool: p, srv: s, root: root, state: StateIdle}
		p.entries[key] = e
	}
	return e, nil
}

// client returns a running client for path's server, starting it if need
// be.
func (p *Pool) client(ctx context.Context, path string) (*entry, *lsp.Client, error) {
	s, err := p.serverFor(path)
	if err != nil {
		return nil, nil, err
	}
	e, err := p.entryFor(s, path)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.acquire(ctx)
	return e, c, err
}

// Status lists every server: each running or failed instance, and, for a
// server without one, whether it is idle, disabled or not installed.
func (p *Pool) Status() []ServerStatus {
	p.mu.Lock()
	entries := make([]*entry, 0, len(p.entries))
	for _, e := range p.entries {
		entries = append(entries, e)
	}
	p.mu.Unlock()
	var out []ServerStatus
	have := map[string]bool{}
	for _, e := range entries {
		out = append(out, e.status())
		have[e.srv.name] = true
	}
	for _, s := range p.servers {
		if have[s.name] {
			continue
		}
		st := ServerStatus{Name: s.name, State: StateIdle, Extensions: s.extensions}
		switch argv, err := s.resolve(p.opts.Root, p.lookPath); {
		case s.disabled:
			st.State = StateDisabled
		case err != nil:
			st.State, st.Reason = StateMissing, err.Error()
		default:
			st.Command = argv
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Root < out[j].Root
	})
	return out
}

// Probe starts, side by side, the server of every language that has a
// file in the workspace (the shallowest one under Root, as for a
// workspace symbol search), opens that file in it and waits (at most the
// server's diagnostics wait) for its diagnostics, so that a server that
// runs but cannot load the workspace says so; it returns Status once each
// has answered or failed, or ctx has ended (those still starting say so).
// Servers whose language has no file in the workspace are not started.
func (p *Pool) Probe(ctx context.Context) []ServerStatus {
	var wg sync.WaitGroup
	for _, s := range p.servers {
		if s.disabled {
			continue
		}
		file := findSource(p.opts.Root, s.extensions)
		if file == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := p.entryFor(s, file)
			if err != nil {
				return
			}
			c, err := e.acquire(ctx)
			if err != nil {
				p.log.Debug("probing a language server", "server", s.name, "err", err)
				return
			}
			if exists, err := p.sync(ctx, c, file); err == nil && exists {
				p.ready(ctx, e, c, lsp.URIFromPath(file))
			}
			p.verdict(e)
		}()
	}
	wg.Wait()
	return p.Status()
}

// lookPath finds a program on the servers' PATH.
func (p *Pool) lookPath(prog string) (string, error) {
	path := ""
	for _, kv := range p.opts.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if cand := filepath.Join(dir, prog); isExecutable(cand) {
			return cand, nil
		}
	}
	return "", exec.ErrNotFound
}

func (p *Pool) reapIdle(every time.Duration) {
	defer p.wg.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		var idle []*entry
		for _, e := range p.entries {
			if limit := p.idleTimeout(e.srv); limit > 0 && e.idleFor() > limit {
				idle = append(idle, e)
			}
		}
		p.mu.Unlock()
		for _, e := range idle {
			p.log.Info("stopping an idle language server", "server", e.srv.name, "root", e.root)
			e.stop(StateIdle, "")
		}
	}
}

func (p *Pool) notify(st ServerStatus) {
	if p.opts.OnStatus != nil {
		p.opts.OnStatus(st)
	}
}
