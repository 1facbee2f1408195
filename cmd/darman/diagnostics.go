package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
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
	key, state := [2]string{st.Name, st.Root}, string(st.State)+"\x00"+st.Reason
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
	l.watchers[id] = func(st diagnostics.ServerStatus) { notify(lspNotice(st, l.root)) }
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.watchers, id)
		l.mu.Unlock()
	}
}

// lspNotice words a language server's new state as a notice for the
// editor: the level ("info" or "warning") and one line naming the server.
func lspNotice(st diagnostics.ServerStatus, root string) (level, text string) {
	name := "language server " + st.Name
	if st.Root != "" && st.Root != root {
		name += " (" + displayRoot(root, st.Root) + ")"
	}
	exts := strings.Join(st.Extensions, " ")
	switch st.State {
	case diagnostics.StateRunning:
		what := st.Server
		if what == "" && len(st.Command) > 0 {
			what = filepath.Base(st.Command[0])
		}
		return "info", fmt.Sprintf("%s is running: %s, pid %d", name, what, st.PID)
	case diagnostics.StateFailed:
		return "warning", fmt.Sprintf("%s failed to start, so %s files get no diagnostics: %s", name, exts, st.Reason)
	case diagnostics.StateCrashed:
		return "warning", fmt.Sprintf("%s crashed; it restarts when next needed: %s", name, st.Reason)
	case diagnostics.StateMissing:
		reason := strings.TrimPrefix(st.Reason, diagnostics.ErrNotInstalled.Error()+": ")
		return "info", fmt.Sprintf("%s is not installed, so %s files get no diagnostics: %s", name, exts, reason)
	case diagnostics.StateIdle:
		return "info", name + " was stopped after it went unused; it starts again when needed"
	case diagnostics.StateStopped:
		return "info", name + " stopped"
	}
	return "info", fmt.Sprintf("%s is %s", name, st.State)
}

// displayRoot is a server's root relative to the workspace when inside it.
func displayRoot(workspace, root string) string {
	if rel, err := filepath.Rel(workspace, root); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return root
}

func (l *languageServers) Check(ctx context.Context, paths ...string) (string, json.RawMessage) {
	return l.pool.Check(ctx, paths...)
}

// maxProblems caps the problems of one file shown to the model.
const maxProblems = 100

func (l *languageServers) Problems(ctx context.Context, path string) (string, json.RawMessage, error) {
	if err := l.pool.Touch(ctx, path); err != nil {
		return "", nil, err
	}
	r, err := l.pool.Diagnostics(ctx, path, 0)
	if err != nil {
		return "", nil, err
	}
	meta, _ := json.Marshal(r)
	if len(r.Items) == 0 {
		return "", meta, nil
	}
	rel, err := filepath.Rel(l.root, path)
	if err != nil {
		rel = path
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s has %d problem(s):\n", rel, len(r.Items))
	for i, d := range r.Items {
		if i == maxProblems {
			fmt.Fprintf(&b, "... and %d more\n", len(r.Items)-maxProblems)
			break
		}
		fmt.Fprintf(&b, "%s: L%d:%d %s: %s\n", rel, d.Line, d.Column, d.Severity, d.Message)
	}
	if r.Stale {
		b.WriteString("(the language server did not answer in time: these may be out of date)\n")
	}
	return strings.TrimRight(b.String(), "\n"), meta, nil
}

// Status is each language server's live state, for darman.status: running
// (server, version, pid), failed or crashed (reason, exit, stderr, next
// try), not installed, disabled, or idle (found, not started yet).
func (l *languageServers) Status() []diagnostics.ServerStatus { return l.pool.Status() }

func (l *languageServers) Close() error { return l.pool.Close() }
