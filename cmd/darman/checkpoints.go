package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server/acp"
	"github.com/darman-dev/darman/server/lsp"
)

// newKeeper is the checkpoint keeper of the data directory, nil when
// checkpoints are off or git is missing (said in the log: the turns run,
// without snapshots).
func newKeeper(cfg config.Config, st checkpoint.Store, log *slog.Logger) *checkpoint.Keeper {
	if !cfg.Checkpoints.On() || cfg.DataDir == "" {
		return nil
	}
	k, err := checkpoint.New(checkpoint.Options{Dir: filepath.Join(cfg.DataDir, "checkpoints"), Store: st,
		MaxFileBytes: cfg.Checkpoints.MaxFileBytes, MaxBytes: cfg.Checkpoints.MaxBytes, Logger: log})
	if err != nil {
		log.Warn("checkpoints are off", "err", err)
		return nil
	}
	return k
}

// sessionCheckpoints is k as the session service takes it: nil stays nil.
func sessionCheckpoints(k *checkpoint.Keeper) session.Checkpoints {
	if k == nil {
		return nil
	}
	return k
}

// serverCheckpoints is k as darman lsp takes it: nil stays nil.
func serverCheckpoints(k *checkpoint.Keeper) lsp.Checkpoints {
	if k == nil {
		return nil
	}
	return k
}

// acpCheckpoints is k as darman acp takes it: nil stays nil.
func acpCheckpoints(k *checkpoint.Keeper) acp.Checkpoints {
	if k == nil {
		return nil
	}
	return k
}

// collectCheckpoints gives back what a removed session's snapshots held in
// its workspace's checkpoint store.
func collectCheckpoints(ctx context.Context, k *checkpoint.Keeper, workspace string, id agent.ID, log *slog.Logger) {
	if k == nil || workspace == "" {
		return
	}
	if err := k.Collect(ctx, workspace); err != nil {
		log.Warn("checkpoints: the removed session's snapshots stay until the next collection", "session", id, "err", err)
	}
}
