package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/update"
	"github.com/darman-dev/darman/server/rpc"
)

// applyArgs are darman.turn.apply's arguments: text to become the whole
// content of the file at uri.
type applyArgs struct {
	SessionID string `json:"sessionId"`
	URI       string `json:"uri"`
	Text      string `json:"text"`
}

// applyResult is darman.turn.apply's answer.
type applyResult struct {
	Applied   bool   `json:"applied"`
	Unchanged bool   `json:"unchanged,omitempty"`
	Denied    bool   `json:"denied,omitempty"`
	Message   string `json:"message"`
	URI       string `json:"uri"`
	// TurnID is the user message of the turn whose checkpoint holds the
	// edit: what darman.turn.revert takes to undo it.
	TurnID string `json:"turnId"`
}

// cmdTurnApply applies text to a file as an edit of the session's last
// turn, asked and written the way the edit tools' edits are
// (session.Service.Apply), so that the turn's revert takes it back: an
// editor's "apply this code block" through darman's own edit path. It
// answers once the edit was made, refused or denied.
func (s *Server) cmdTurnApply(ctx context.Context, arg json.RawMessage) (any, error) {
	const name = "darman.turn.apply"
	var a applyArgs
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	id, err := requireSession(name, a.SessionID)
	if err != nil {
		return nil, err
	}
	if a.URI == "" {
		return nil, rpc.InvalidParams("%s: uri is required: the file to write the text to", name)
	}
	path, err := buffer.URIToPath(a.URI)
	if err != nil {
		return nil, rpc.InvalidParams("%s: uri: %v", name, err)
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	// Between turns, so that no revert, redo or turn starts between the
	// session's check and the edit.
	var res session.Applied
	var applyErr error
	err = s.between(ctx, ag, name, id, func() error {
		res, applyErr = ag.Sessions.Apply(ctx, id, path, a.Text)
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case errors.Is(applyErr, session.ErrBusy):
		return nil, errors.New(name + ": the session is running a turn; cancel it (darman.cancel) or wait for it to end")
	case applyErr != nil:
		return nil, rpc.InvalidParams("%s: %v", name, applyErr)
	}
	return applyResult{Applied: res.Written, Unchanged: res.Unchanged, Denied: res.Denied, Message: res.Message,
		URI: buffer.PathToURI(res.Path), TurnID: string(res.Turn)}, nil
}

// changedTurns marks the turns of a loaded page whose checkpoint holds
// changes a revert would take back (TurnStart.Files), so that a client
// offers the Revert of a turn whose only change was an applied edit, which
// no tool call on the page shows. The checkpoints unread, the turns go
// unmarked.
func (s *Server) changedTurns(ctx context.Context, a *Agent, id agent.ID, turns []update.TurnStart) []update.TurnStart {
	if len(turns) == 0 || a.Checkpoints == nil {
		return turns
	}
	cps, err := a.Store.Checkpoints(ctx, id)
	if err != nil {
		s.log.Warn("lsp: the session's checkpoints, for its turns' Revert", "session", id, "err", err)
		return turns
	}
	changed := map[string]bool{}
	for _, c := range cps {
		if c.Reverted.IsZero() && c.Dropped.IsZero() && c.After.Tree != "" && c.After.Tree != c.Before.Tree {
			changed[string(c.MessageID)] = true
		}
	}
	for i := range turns {
		turns[i].Files = changed[turns[i].TurnID]
	}
	return turns
}
