package acp

import (
	"context"
	"errors"
	"strings"

	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/session"
)

// Checkpoints reverts and redoes turns from the snapshots taken before
// their steps. *checkpoint.Keeper implements it; its methods are safe for
// concurrent use.
type Checkpoints interface {
	Revert(ctx context.Context, o checkpoint.RevertOptions) (*checkpoint.Report, error)
	Redo(ctx context.Context, o checkpoint.RevertOptions) (*checkpoint.Report, error)
}

// ACP has no method for undo, so darman offers it as two slash commands of
// its own, answered by the front without a model call. A workspace command
// of the same name wins.
var checkpointCommands = []availableCommand{
	{Name: "revert", Description: "darman: restore the files the last turn changed (or the turn named, and the turns after it); --preview shows the diff, --force restores files you changed since too",
		Input: &commandInput{Hint: "[--preview] [--force] [msg_… turn]"}},
	{Name: "redo", Description: "darman: put back what the last /revert took away",
		Input: &commandInput{Hint: "[--preview] [--force]"}},
}

// checkpointCommandsOf are the checkpoint commands the session offers.
func (ls *liveSession) checkpointCommandsOf() []availableCommand {
	if ls.ag().Checkpoints() == nil {
		return nil
	}
	var out []availableCommand
	cmds := ls.ag().Sessions().Commands()
	for _, c := range checkpointCommands {
		if _, shadowed := cmds.Get(c.Name); !shadowed {
			out = append(out, c)
		}
	}
	return out
}

// checkpointCommand runs line when it is /revert or /redo: the files are
// read and written through the session's client (fs/*) as the agent's own
// edits are, and the report is the answer's text. ok says line was one.
func (ls *liveSession) checkpointCommand(ctx context.Context, line string) (res any, ok bool, err error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, false, nil
	}
	verb, isCmd := strings.CutPrefix(f[0], "/")
	offered := false
	for _, c := range ls.checkpointCommandsOf() {
		offered = offered || c.Name == verb
	}
	if !isCmd || !offered {
		return nil, false, nil
	}
	o := checkpoint.RevertOptions{Session: ls.id, Workspace: ls.ws.of(ls.id)}
	for _, a := range f[1:] {
		switch {
		case a == "--preview":
			o.Preview = true
		case a == "--force":
			o.Force = true
		case strings.HasPrefix(a, "-") || o.Turn != "":
			return nil, true, invalidParams("/%s: unexpected %q; it takes --preview, --force and a turn's message id (msg_…)", verb, a)
		default:
			o.Turn = a
		}
	}
	rep, busy, err := ls.restore(ctx, verb, o)
	if busy {
		return nil, true, invalidParams("/%s: session %s is running a turn; cancel it or wait for its answer", verb, ls.id)
	}
	msg := ""
	if err != nil {
		msg = "darman: /" + verb + ": " + err.Error()
	} else {
		msg = rep.Text()
	}
	ls.send(update{SessionUpdate: "agent_message_chunk", Content: text(msg)})
	return map[string]string{"stopReason": "end_turn"}, true, nil
}

// restore reverts (or, for verb redo, redoes) as o says, unless the
// session runs a turn (busy); no turn starts while the files are put back.
func (ls *liveSession) restore(ctx context.Context, verb string, o checkpoint.RevertOptions) (rep *checkpoint.Report, busy bool, err error) {
	do := ls.ag().Checkpoints().Revert
	if verb == "redo" {
		do = ls.ag().Checkpoints().Redo
	}
	err = ls.ag().Sessions().Between(ctx, ls.id, func() (err error) {
		rep, err = do(ctx, o)
		return err
	})
	if errors.Is(err, session.ErrBusy) {
		return nil, true, nil
	}
	return rep, false, err
}
