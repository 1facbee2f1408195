package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// languageServers is the diagnostics pool as the agent's tools see it.
type languageServers struct {
	pool *diagnostics.Pool
	root string

	mu       sync.Mutex
	watchers map[int]func(diagnostics.ServerStatus)
	nextID   int
	// last is each instance's last state told to the watchers, so a
	// server that is not installed is not announced at every edit.
	last map[[2]string]string
}

// newLanguageServers starts the pool of a workspace's language servers;
// servers themselves start only when a file of their language is touched.
func newLanguageServers(ctx context.Context, root string, cfg config.Config, files diagnostics.FileReader, children *child.Registry, log *slog.Logger) (*languageServers, error) {
	l := &languageServers{root: root, watchers: map[int]func(diagnostics.ServerStatus){}, last: map[[2]string]string{}}
	pool, err := diagnostics.New(ctx, diagnostics.Options{
		Root:          root,
		Servers:       cfg.LSP,
		Files:         files,
		Children:      children,
		Env:           childEnviron(cfg),
		ClientVersion: readBuildInfo().Version,
		OnStatus:      l.changed,
		Logger:        log,
	})
	if err != nil {
		return nil, err
	}
	l.pool = pool
	return l, nil
}

// changed passes a server's new state to the watchers, unless it is the
// state they were last told of.
func (l *languageServers) changed(st diagnostics.ServerStatus) {
	key, state := [2]string{st.Name, st.Root}, string(st.State)+"\x00"+st.Reason+"\x00"+string(st.Load)
	if le := st.LoadError; le != nil {
		// Each new instance says it again, in words that may differ a
		// little (gopls's progress report, then its message): the cause
		// is what is told once.
		state += "\x00" + le.Cause + "\x00" + le.Advice
	}
	l.mu.Lock()
	if l.last[key] == state {
		l.mu.Unlock()
		return
	}
	l.last[key] = state
	watchers := make([]func(diagnostics.ServerStatus), 0, len(l.watchers))
	for _, f := range l.watchers {
		watchers = append(watchers, f)
	}
	l.mu.Unlock()
	for _, f := range watchers {
		f(st)
	}
}

// watch calls notify with a notice for every state change of the
// language servers (started, failed to start, crashed, stopped) until
// the returned function is called: the hook a front uses to show them,
// as watchMCP is for the MCP servers. It is called on the pool's
// goroutines and must not block.
func (l *languageServers) watch(notify func(level, text string)) (stop func()) {
	l.mu.Lock()
	id := l.nextID
	l.nextID++
	l.watchers[id] = func(st diagnostics.ServerStatus) { notify(st.Notice(l.root)) }
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.watchers, id)
		l.mu.Unlock()
	}
}

func (l *languageServers) Check(ctx context.Context, paths ...string) (string, json.RawMessage) {
	return l.pool.Check(ctx, paths...)
}

func (l *languageServers) Problems(ctx context.Context, path string) (string, json.RawMessage, error) {
	return l.pool.Problems(ctx, path)
}

// Status is each language server's live state, for darman.status: running
// (server, version, pid), failed or crashed (reason, exit, stderr, next
// try), not installed, disabled, or idle (found, not started yet).
func (l *languageServers) Status() []diagnostics.ServerStatus { return l.pool.Status() }

func (l *languageServers) Close() error { return l.pool.Close() }
