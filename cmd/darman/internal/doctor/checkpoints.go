package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dustin/go-humanize"

	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/config"
)

// Checkpoints says how the workspace's snapshots find what
// changed (the file watcher, or a walk of the whole tree and why) and how
// much the workspace's shadow repository takes against its bound.
func Checkpoints(ctx context.Context, r *Report, c config.Config, st *store.Store, root string) {
	const name = "checkpoints"
	if !c.Checkpoints.On() {
		r.Add("data", name, "ok", "off (checkpoints.enabled is false)")
		return
	}
	watch, werr := checkpoint.WatchSupport()
	status, how := "ok", "snapshots use the file watcher: "+watch
	if werr != nil {
		status, how = "warn", fmt.Sprintf("snapshots walk the whole tree, no file watcher: %v", werr)
	}
	if st == nil || root == "" || c.DataDir == "" {
		r.Add("data", name, status, how)
		return
	}
	k, err := checkpoint.New(checkpoint.Options{Dir: filepath.Join(c.DataDir, "checkpoints"), Store: st,
		MaxBytes: c.Checkpoints.MaxBytes, NoWatch: true})
	if err != nil {
		r.Add("data", name, "warn", err.Error())
		return
	}
	s, err := k.Status(ctx, root)
	if err != nil {
		r.Add("data", name, "warn", fmt.Sprintf("%s; the shadow repository of %s: %v", how, root, err))
		return
	}
	r.Add("data", name, status, fmt.Sprintf("%s; %s of snapshots for %s (bound %s: checkpoints.maxBytes)",
		how, humanize.IBytes(uint64(s.Bytes)), root, humanize.IBytes(uint64(s.MaxBytes))))
}
