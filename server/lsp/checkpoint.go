package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/server/rpc"
)

// Checkpoints reverts and redoes turns from the snapshots taken before
// their steps. *checkpoint.Keeper implements it; its methods are safe for
// concurrent use.
type Checkpoints interface {
	Revert(ctx context.Context, o checkpoint.RevertOptions) (*checkpoint.Report, error)
	Redo(ctx context.Context, o checkpoint.RevertOptions) (*checkpoint.Report, error)
}

type turnRevertArgs struct {
	SessionID string `json:"sessionId"`
	// TurnID is the turnId darman.prompt answered, or the turn's user
	// message id; "" means the last turn (revert) or the last revert (redo).
	TurnID  string `json:"turnId,omitempty"`
	Preview bool   `json:"preview,omitempty"`
	Force   bool   `json:"force,omitempty"`
}

func (s *Server) cmdTurnRevert(ctx context.Context, arg json.RawMessage) (any, error) {
	return s.turnCheckpoint(ctx, "darman.turn.revert", arg)
}

func (s *Server) cmdTurnRedo(ctx context.Context, arg json.RawMessage) (any, error) {
	return s.turnCheckpoint(ctx, "darman.turn.redo", arg)
}

// turnCheckpoint reverts or redoes a turn through the editor: the files
// are read as the editor holds them and written with the server's edits
// (workspace/applyEdit for a client that opted into applyEditAndSave, so
// each buffer keeps its undo; else the disk, never over unsaved changes).
func (s *Server) turnCheckpoint(ctx context.Context, name string, arg json.RawMessage) (any, error) {
	var a turnRevertArgs
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	id, err := requireSession(name, a.SessionID)
	if err != nil {
		return nil, err
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	if ag.Checkpoints == nil {
		return nil, errors.New(name + `: checkpoints are off ("checkpoints": {"enabled": false}, or git is not on PATH), so there is nothing to restore`)
	}
	o := checkpoint.RevertOptions{Session: id, Turn: a.TurnID, Workspace: s.ws, Preview: a.Preview, Force: a.Force}
	do := ag.Checkpoints.Revert
	if name == "darman.turn.redo" {
		do = ag.Checkpoints.Redo
	}
	var rep *checkpoint.Report
	err = s.between(ctx, ag, name, id, func() (err error) {
		rep, err = do(ctx, o)
		return err
	})
	if errors.Is(err, checkpoint.ErrNothing) {
		return nil, rpc.InvalidParams("%s: %v", name, err)
	}
	return rep, err
}

// cmdSessionFork starts a new session with the conversation before one of
// the session's user messages and, with files, takes the files back to
// before that message's turn.
func (s *Server) cmdSessionFork(ctx context.Context, arg json.RawMessage) (any, error) {
	const name = "darman.session.fork"
	var a struct {
		SessionID string `json:"sessionId"`
		MessageID string `json:"messageId"`
		Files     bool   `json:"files,omitempty"`
	}
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	if a.SessionID == "" || a.MessageID == "" {
		return nil, rpc.InvalidParams("%s: sessionId and messageId (a user message of the session) are required", name)
	}
	id, err := sessionArg(a.SessionID)
	if err != nil {
		return nil, rpc.InvalidParams("%s: %v", name, err)
	}
	if err := agent.ID(a.MessageID).Validate(agent.MessagePrefix); err != nil {
		return nil, rpc.InvalidParams("%s: messageId: %v", name, err)
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = s.between(ctx, ag, name, id, func() error {
		sess, prompt, err := ag.Store.Fork(ctx, id, agent.ID(a.MessageID))
		if err != nil {
			return err
		}
		out = map[string]any{"sessionId": sess.ID, "prompt": prompt}
		if !a.Files {
			return nil
		}
		if ag.Checkpoints == nil {
			return errors.New(name + ": forked as " + string(sess.ID) + `, but checkpoints are off, so the files stay as they are`)
		}
		rep, err := ag.Checkpoints.Revert(ctx, checkpoint.RevertOptions{Session: id, Turn: a.MessageID, Workspace: s.ws})
		if err != nil && !errors.Is(err, checkpoint.ErrNothing) {
			return errors.New(name + ": forked as " + string(sess.ID) + ", but the files were not restored: " + err.Error())
		}
		out["revert"] = rep
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
