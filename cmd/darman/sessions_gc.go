package main

import (
	"fmt"
	"slices"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

func (a *app) sessionsGC() *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "Compact the session store and prune the checkpoints now",
		Long: `The maintenance darman otherwise does off the start path, now: merges the
session store's tables and collects its value-log garbage (what removed
sessions held), then, for every workspace with checkpoints, gives back what
no stored checkpoint needs and drops the oldest turns' snapshots while its
shadow repository is over checkpoints.maxBytes (as the end of a turn does).
It says the sizes before and after. Safe while other darman processes run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			before, err := s.Stats(ctx)
			if err != nil {
				return err
			}
			if err := s.Compact(ctx); err != nil {
				return fmt.Errorf("compacting the session store: %w", err)
			}
			after, err := s.Stats(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "store: %d sessions, %s → %s on disk (%s a session), %d → %d tables; journal %s\n",
				after.Sessions, humanize.IBytes(uint64(before.LSMBytes+before.ValueLogBytes)),
				humanize.IBytes(uint64(after.LSMBytes+after.ValueLogBytes)), perSession(after.LSMBytes+after.ValueLogBytes+after.JournalBytes, after.Sessions),
				before.Tables, after.Tables, humanize.IBytes(uint64(after.JournalBytes)))
			k := newKeeper(a.loaded.Config, s, a.log)
			if k == nil {
				return nil
			}
			cps, err := s.Checkpoints(ctx, "")
			if err != nil {
				return err
			}
			var workspaces []string
			for _, c := range cps {
				workspaces = append(workspaces, c.Workspace)
			}
			slices.Sort(workspaces)
			for _, ws := range slices.Compact(workspaces) {
				dropped, was, now, err := k.Prune(ctx, ws)
				if err != nil {
					return fmt.Errorf("pruning the checkpoints of %s: %w", ws, err)
				}
				line := fmt.Sprintf("checkpoints of %s: %s → %s", ws, humanize.IBytes(uint64(was)), humanize.IBytes(uint64(now)))
				if len(dropped) > 0 {
					line += fmt.Sprintf("; dropped the snapshots of the %d oldest turns (over checkpoints.maxBytes): they can no longer be reverted", len(dropped))
				}
				fmt.Fprintln(a.stdout, line)
			}
			return nil
		},
	}
}

// perSession is a store's bytes per session, readably.
func perSession(bytes int64, sessions int) string {
	if sessions == 0 {
		return "no sessions"
	}
	return humanize.IBytes(uint64(bytes / int64(sessions)))
}
