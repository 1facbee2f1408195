package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/config"
)

// transcriptDir is where a workspace's hook transcripts are: a directory
// of its own under the data directory, so that its hooks' sandbox may read
// it and no other workspace's.
func transcriptDir(dataDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dataDir, "transcripts", filepath.Base(root)+"-"+hex.EncodeToString(sum[:8]))
}

// withReadable is cfg with dir readable by the sandbox's commands.
func withReadable(cfg config.Config, dir string) config.Config {
	cfg.Sandbox.ReadableDirs = append(slices.Clip(cfg.Sandbox.ReadableDirs), dir)
	return cfg
}

// hookTranscripts writes the transcripts hooks read at transcript_path:
// one JSONL file per session under the data directory, in Claude Code's
// line shape (hook.WriteTranscript), rewritten from the store before the
// hooks of an event run, so that it holds the session up to that event.
type hookTranscripts struct {
	store *store.Store
	dir   string
	root  string
	log   *slog.Logger
}

// path brings the session's transcript up to date and returns its path;
// "" when it cannot be written (the hook then reads an empty
// transcript_path, and the log says why).
func (h *hookTranscripts) path(ctx context.Context, session string) string {
	if h == nil || h.store == nil || session == "" {
		return ""
	}
	id := agent.ID(session)
	sess, err := h.store.Session(ctx, id)
	if err != nil {
		h.log.Debug("hook transcript: no session", "session", session, "err", err)
		return ""
	}
	msgs, err := h.store.Messages(ctx, id)
	if err != nil {
		h.log.Warn("hook transcript: cannot read the session", "session", session, "err", err)
		return ""
	}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		h.log.Warn("hook transcript: cannot make its directory", "dir", h.dir, "err", err)
		return ""
	}
	path := filepath.Join(h.dir, filepath.Base(session)+".jsonl")
	tmp, err := os.CreateTemp(h.dir, ".transcript-*")
	if err != nil {
		h.log.Warn("hook transcript: cannot write", "dir", h.dir, "err", err)
		return ""
	}
	err = hook.WriteTranscript(tmp, h.root, sess, msgs)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Renamed into place: a hook of a parallel event never reads
		// half a file.
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		h.log.Warn("hook transcript: cannot write", "path", path, "err", err)
		return ""
	}
	return path
}
