package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/fsafe"
)

// Applied is what Apply did.
type Applied struct {
	// Path is the file, absolute.
	Path string
	// Written says the file holds the text now; Unchanged that it held it
	// already, so nothing was written (Written is true then too).
	Written   bool
	Unchanged bool
	// Denied says the permission was refused (by a rule, or the user).
	Denied bool
	// Message says what was done or why not, in the write tool's words.
	Message string
	// Turn is the session's last turn, as its user message: its checkpoint
	// holds the edit, so its revert takes the edit back.
	Turn agent.ID
	// Diff is the change written; nil when nothing was.
	Diff *agent.Diff
}

// Apply writes text as the whole content of the file at path (absolute,
// or relative to the workspace root) for a session, the way its write tool
// does: the session's edit permission is asked (its rules, grants and
// protected paths; the question, with the diff, goes to the session's
// Asker), and the file is written through the session's workspace (the
// editor's, in an editor). It is the edit a user applies from an answer (a
// code block) rather than one the model makes: it needs no read of the
// file first, and the agent's own rules (plan's lock on edits) do not
// apply, as with Shell. The edit is a step of the session's last turn:
// the workspace is checkpointed before it, as before a turn's tool call,
// so the turn's revert takes it back with the rest of the turn.
//
// Refused with an error, nothing asked: a path outside the workspace
// (symlinks resolved), a secret (complete.Secret: keys, credentials, .env
// files; a link to one too), a sub-task's session (its parent's turn may
// be running), a session with no turn yet, a session running a turn (ErrBusy;
// the session counts as busy while Apply waits for its answer, and Cancel
// stops it), or a last turn that is reverted or cannot be checkpointed
// (Checkpoints.Step fails). A denied permission is no
// error: Denied and Message say so. The call is bounded by the write
// tool's timeout, which stops while the question waits for the user.
func (s *Service) Apply(ctx context.Context, id agent.ID, path, text string) (Applied, error) {
	write := s.tool("write")
	if write == nil {
		return Applied{}, errors.New("files cannot be written here: the agent has no write tool")
	}
	ws := s.workspaceOf(id)
	root := ws.Root()
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	shown := abs
	if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
		shown = filepath.ToSlash(rel)
	}
	if out, err := permission.Outside(root, abs); err != nil || out {
		return Applied{}, fmt.Errorf("%s is outside the workspace %s: darman applies text only to the workspace's files", shown, root)
	}
	if complete.Secret(shown) {
		return Applied{}, fmt.Errorf("%s looks like a secret (a key, credentials, an .env file): darman does not apply text to it; edit it yourself", shown)
	}
	// A link inside the workspace to a secret inside it (notes.txt ->
	// .env) is that secret: the write would land there.
	if real, err := fsafe.Resolve(abs); err == nil {
		if realRoot, err := fsafe.Resolve(root); err == nil {
			if rel, err := filepath.Rel(realRoot, real); err == nil && complete.Secret(filepath.ToSlash(rel)) {
				return Applied{}, fmt.Errorf("%s leads to %s, which looks like a secret (a key, credentials, an .env file): darman does not apply text to it; edit it yourself", shown, filepath.ToSlash(rel))
			}
		}
	}
	l, err := s.get(ctx, id)
	if err != nil {
		return Applied{}, err
	}
	// A sub-task's session runs inside its parent's turn, and is idle
	// itself once it answered: its parent's busy state is the one that
	// counts, and the parent's turn is where its changes belong.
	if sess, err := s.opts.Store.Session(ctx, id); err != nil {
		return Applied{}, err
	} else if sess.ParentID != "" {
		return Applied{}, fmt.Errorf("session %s is a sub-task of session %s: apply the text in session %s", id, sess.ParentID, sess.ParentID)
	}
	last, err := s.lastTurn(ctx, id)
	if err != nil {
		return Applied{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.take(l, cancel); err != nil {
		return Applied{}, err
	}
	defer s.let(l)

	ref := agent.TurnRef{SessionID: id, MessageID: last, Workspace: root}
	cp := s.opts.Checkpoints
	var clock *tool.Clock
	if timeout := write.Info().Timeout; timeout > 0 {
		clock = tool.NewClock(ctx, timeout)
		defer clock.Stop()
		ctx = clock
	}
	// Before anything is asked, as a turn's step is: a turn that cannot
	// take the step (reverted, or the disk is full) refuses at once.
	if cp != nil {
		if err := cp.Step(ctx, ref); err != nil {
			return Applied{}, fmt.Errorf("the workspace could not be checkpointed in the session's last turn, so nothing was applied: %w", err)
		}
		defer func() {
			if err := cp.End(context.WithoutCancel(ctx), ref); err != nil {
				s.log.Warn("checkpoint: no snapshot after the applied edit", "session", id, "path", abs, "err", err)
			}
		}()
	}
	var denied bool
	env := &tool.Env{
		SessionID: id,
		Workspace: ws,
		Permit: l.askPausing(clock, func(err error) {
			denied = errors.As(err, new(*permission.DeniedError))
		}),
		Logger: s.log.With("apply", abs),
	}
	input, _ := json.Marshal(map[string]string{"path": abs, "content": text})
	res, err := runSafely(ctx, write, env, &agent.ToolCall{Name: "write", Input: input})
	switch {
	case denied:
		return Applied{Path: abs, Denied: true, Message: res.Output, Turn: last}, nil
	case err != nil:
		return Applied{}, err
	}
	return Applied{Path: abs, Written: !res.IsError, Unchanged: !res.IsError && res.Diff == nil, Message: res.Output, Turn: last, Diff: res.Diff}, nil
}

// tool returns the service's tool of that name, nil when it has none.
func (s *Service) tool(name string) tool.Tool {
	for _, tl := range s.opts.Tools {
		if tl.Info().Name == name {
			return tl
		}
	}
	return nil
}

// lastTurn is the user message of the session's last turn: the last user
// message that is not a compaction's summary (or /clear's marker), which
// the session stores as a user message, within a turn too, and which
// begins the window. A turn the window begins after is looked for in the
// whole history.
func (s *Service) lastTurn(ctx context.Context, id agent.ID) (agent.ID, error) {
	msgs, err := s.opts.Store.Window(ctx, id)
	if err != nil {
		return "", err
	}
	for pass := 0; pass < 2; pass++ {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Message.Role == agent.RoleUser && compactionPart(msgs[i]) == nil {
				return msgs[i].Message.ID, nil
			}
		}
		if len(msgs) == 0 || compactionPart(msgs[0]) == nil {
			break
		}
		if msgs, err = s.opts.Store.Messages(ctx, id); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("session %s has no turn yet: an applied edit belongs to the session's last turn, whose revert takes it back; send a prompt first", id)
}

// take makes the session busy, as a running turn does, until let: Start
// refuses it meanwhile (ErrBusy) and Cancel calls cancel.
func (s *Service) take(l *live, cancel context.CancelFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("the session service is closed")
	case l.cancel != nil:
		return ErrBusy
	}
	l.cancel = cancel
	s.turns.Add(1)
	return nil
}

// let gives back the session take took.
func (s *Service) let(l *live) {
	s.mu.Lock()
	l.cancel = nil
	s.mu.Unlock()
	s.turns.Done()
}
