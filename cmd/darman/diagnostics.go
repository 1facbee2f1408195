package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// languageServers is the diagnostics pool as the agent's tools see it.
type languageServers struct {
	pool *diagnostics.Pool
	root string
}

// newLanguageServers starts the pool of a workspace's language servers;
// servers themselves start only when a file of their language is touched.
func newLanguageServers(ctx context.Context, root string, cfg config.Config, files diagnostics.FileReader, children *child.Registry, log *slog.Logger) (*languageServers, error) {
	pool, err := diagnostics.New(ctx, diagnostics.Options{
		Root:          root,
		Servers:       cfg.LSP,
		Files:         files,
		Children:      children,
		ClientVersion: readBuildInfo().Version,
		Logger:        log,
	})
	if err != nil {
		return nil, err
	}
	return &languageServers{pool: pool, root: root}, nil
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
