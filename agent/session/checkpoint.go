package session

import (
	"context"
	"errors"
	"syscall"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool"
)

// Checkpoints records the workspace around a turn's steps that may change
// files, so that the turn can be reverted; agent/checkpoint's Keeper
// implements it. Its methods are safe for concurrent use; a failure is
// logged and the turn goes on, but for a full disk (an error that is
// syscall.ENOSPC): a Step that cannot be recorded fails its step, which
// does not run, and ends the turn with that error.
type Checkpoints interface {
	// Step is called before a tool call that may change files runs: any
	// tool but the read-only ones and those that only read, search, fetch
	// or think.
	Step(ctx context.Context, ref agent.TurnRef) error
	// End is called when a turn in which Step was called has ended,
	// before its last event is published.
	End(ctx context.Context, ref agent.TurnRef) error
}

// mayChangeFiles reports whether a call of tl may change the workspace.
func mayChangeFiles(tl tool.Tool) bool {
	info := tl.Info()
	switch info.Kind {
	case agent.ToolKindRead, agent.ToolKindSearch, agent.ToolKindFetch, agent.ToolKindThink:
		return false
	}
	return !info.ReadOnly
}

func (t *turn) turnRef() agent.TurnRef {
	return agent.TurnRef{SessionID: t.id, MessageID: t.userMsg, Turn: t.label, Workspace: t.ws.Root()}
}

// checkpoint snapshots the workspace before a call of tl, when it may
// change files. A snapshot that does not fit on the disk is the error
// returned: the call must not run, and the turn ends with it (see
// diskFull); any other failure is logged and the call runs.
func (t *turn) checkpoint(ctx context.Context, tl tool.Tool) error {
	cp := t.svc.opts.Checkpoints
	if cp == nil || t.userMsg == "" || !mayChangeFiles(tl) {
		return nil
	}
	t.checkpointed = true
	err := cp.Step(ctx, t.turnRef())
	if errors.Is(err, syscall.ENOSPC) {
		t.svc.mu.Lock()
		t.diskFull = err
		t.svc.mu.Unlock()
		return err
	}
	if err != nil {
		t.svc.log.Warn("checkpoint: no snapshot before the step; the turn cannot be fully reverted", "session", t.id, "tool", tl.Info().Name, "err", err)
	}
	return nil
}

// fullDisk is the error of a step whose snapshot did not fit on the disk,
// nil when none failed so.
func (t *turn) fullDisk() error {
	t.svc.mu.Lock()
	defer t.svc.mu.Unlock()
	return t.diskFull
}

// checkpointEnd records the workspace at the end of a turn that took a
// snapshot.
func (t *turn) checkpointEnd(ctx context.Context) {
	if !t.checkpointed {
		return
	}
	t.checkpointed = false
	if err := t.svc.opts.Checkpoints.End(context.WithoutCancel(ctx), t.turnRef()); err != nil {
		t.svc.log.Warn("checkpoint: no snapshot at the end of the turn", "session", t.id, "err", err)
	}
}
