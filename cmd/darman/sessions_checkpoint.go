package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/store"
)

// checkpointFlags are revert's and redo's.
type checkpointFlags struct {
	turn           string
	preview, force bool
	asJSON         bool
}

func (f *checkpointFlags) add(cmd *cobra.Command, verb string) {
	cmd.Flags().StringVar(&f.turn, "turn", "", "the turn to "+verb+": its user message's id (msg_…) or darman lsp's turnId; default the last one")
	cmd.Flags().BoolVar(&f.preview, "preview", false, "print the combined diff of what would change, and change nothing")
	cmd.Flags().BoolVar(&f.force, "force", false, "restore files you changed since the turn too")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as JSON")
}

func (a *app) sessionsRevert() *cobra.Command {
	var f checkpointFlags
	cmd := &cobra.Command{
		Use:   "revert ID",
		Short: "Restore the files a turn changed (and the turns after it) to what they were before it",
		Long: `Restores, on disk, every file the turn changed — with its edit tools or
with commands it ran — and those the later turns changed, to what they
were before the turn, from the snapshots darman takes before each step. A
file you changed since is left alone and shown as a conflict, unless
--force; --force after such a revert restores the files it left alone.
Undo it with darman sessions redo. The turns' ids (msg_…) are those
darman sessions show prints beside each prompt.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runCheckpoint(cmd, args[0], f, "revert")
		},
	}
	f.add(cmd, "revert")
	return cmd
}

func (a *app) sessionsRedo() *cobra.Command {
	var f checkpointFlags
	cmd := &cobra.Command{
		Use:               "redo ID",
		Short:             "Put back what the last revert of the session took away",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runCheckpoint(cmd, args[0], f, "redo")
		},
	}
	f.add(cmd, "redo")
	return cmd
}

// runCheckpoint runs a revert or a redo on the disk and prints its report;
// files left alone make the exit status 1.
func (a *app) runCheckpoint(cmd *cobra.Command, arg string, f checkpointFlags, verb string) error {
	s, id, err := a.resolve(cmd, arg)
	if err != nil {
		return err
	}
	k, err := a.keeper(s)
	if err != nil {
		return err
	}
	o := checkpoint.RevertOptions{Session: id, Turn: f.turn, Preview: f.preview, Force: f.force}
	do := k.Revert
	if verb == "redo" {
		do = k.Redo
	}
	rep, err := do(cmd.Context(), o)
	if err != nil {
		return err
	}
	if f.asJSON {
		err = writeJSON(a.stdout, rep)
	} else {
		fmt.Fprint(a.stdout, rep.Text())
	}
	if err == nil && len(rep.Conflicts) > 0 && !f.preview {
		return &exitError{code: 1, err: fmt.Errorf("%d file(s) left alone; see above: darman sessions %s %s --force restores them too", len(rep.Conflicts), verb, arg)}
	}
	return err
}

// keeper is the checkpoint keeper of the configured data directory.
func (a *app) keeper(s *store.Store) (*checkpoint.Keeper, error) {
	loaded, err := a.config()
	if err != nil {
		return nil, err
	}
	log, err := a.logger()
	if err != nil {
		return nil, err
	}
	k := newKeeper(loaded.Config, s, log)
	if k == nil {
		return nil, errors.New("checkpoints are off (\"checkpoints\": {\"enabled\": false}) or git is not on PATH: there are no snapshots to restore")
	}
	return k, nil
}

func (a *app) sessionsFork() *cobra.Command {
	var files, asJSON bool
	cmd := &cobra.Command{
		Use:   "fork ID MESSAGE",
		Short: "Start a new session with the conversation before one of its prompts",
		Long: `Copies the session's messages before the user message MESSAGE (msg_…, as
darman sessions show --json … lists them) into a new session, and prints
the new session's id and the prompt, to edit and send again with
darman run --session. With --files, the files are also restored to what they
were before that prompt's turn (darman sessions revert --turn MESSAGE).`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, id, err := a.resolve(cmd, args[0])
			if err != nil {
				return err
			}
			sess, prompt, err := s.Fork(cmd.Context(), id, agent.ID(args[1]))
			if err != nil {
				return err
			}
			out := map[string]any{"sessionId": sess.ID, "prompt": prompt}
			if files {
				k, err := a.keeper(s)
				if err != nil {
					return err
				}
				rep, err := k.Revert(cmd.Context(), checkpoint.RevertOptions{Session: id, Turn: args[1]})
				if err != nil && !errors.Is(err, checkpoint.ErrNothing) {
					return fmt.Errorf("forked as %s, but the files were not restored: %w", sess.ID, err)
				}
				out["revert"] = rep
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			fmt.Fprintf(a.stdout, "forked %s as %s\n", id, sess.ID)
			if rep, ok := out["revert"].(*checkpoint.Report); ok && rep != nil {
				fmt.Fprint(a.stdout, rep.Text())
			}
			fmt.Fprintf(a.stdout, "its prompt was:\n%s\n", prompt)
			return nil
		},
	}
	cmd.Flags().BoolVar(&files, "files", false, "restore the files to what they were before that prompt's turn too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new session and the revert's report as JSON")
	return cmd
}
