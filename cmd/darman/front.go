package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/config"
)

// The long-running fronts (darman lsp, darman acp) start an agent when a
// client names a workspace, and may start several over their life (new
// settings, another directory). What they share is here.

// frontStore opens the store once for a front and hands the same one to
// every agent it starts; it is closed with the app. A later agent whose
// configuration names another data directory gets an error from moved, a
// format given that directory and the store's.
func (a *app) frontStore(log *slog.Logger, moved string) func(context.Context, string) (*store.Store, error) {
	var (
		mu sync.Mutex
		st *store.Store
	)
	return func(ctx context.Context, dir string) (*store.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		if st != nil {
			if filepath.Clean(st.Dir()) != filepath.Clean(dir) {
				return nil, fmt.Errorf(moved, dir, st.Dir())
			}
			return st, nil
		}
		s, err := a.openStoreIn(ctx, dir, log, false)
		if err != nil {
			return nil, err
		}
		st = s
		return s, nil
	}
}

// frontConfig loads a workspace's configuration for a front's agent,
// logging its warnings; it fails when there is nowhere to store sessions.
func (a *app) frontConfig(log *slog.Logger, opts config.Options) (*config.Loaded, error) {
	opts.Flags = a.flags
	if opts.Trust == nil {
		opts.Trust = decideTrust(trustPolicy{}, new(trustOutcome))
	}
	loaded, err := config.Load(opts)
	if err != nil {
		return nil, err
	}
	for _, w := range loaded.Warnings {
		log.Warn("configuration", "warning", w)
	}
	if loaded.Config.DataDir == "" {
		return nil, errNoDataDir
	}
	return loaded, nil
}

// frontWorkspace opens a front's agent for a workspace: its configuration
// (opts names the workspace and any layer the front adds, opts.Trust what
// decides the folder's trust, recorded in trust), the front's store, and
// the workspace's agent as every front opens it.
func (a *app) frontWorkspace(ctx context.Context, log *slog.Logger, openStore func(context.Context, string) (*store.Store, error), opts config.Options, trust *trustOutcome, o workspaceOptions) (*workspace, error) {
	loaded, err := a.frontConfig(log, opts)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, loaded.Config.DataDir)
	if err != nil {
		return nil, err
	}
	o.children = a.children
	w, err := openWorkspace(ctx, loaded.Config, st, o, log)
	if err != nil {
		return nil, err
	}
	w.loaded, w.trust = loaded, *trust
	return w, nil
}
