package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/store"
)

func (a *app) sessionsRepair() *cobra.Command {
	return &cobra.Command{
		Use:   "repair",
		Short: "Check the session store whole and rebuild it if it is damaged",
		Long: `Reads every file and record of the session store. When something is
damaged, the store's files are moved aside untouched (beside the data
directory, named DIR.damaged-TIME), and a new store is rebuilt from every
record that can still be read from them plus the session journal. It says
what was recovered and what was not. Close every darman (editors, shells)
first. Running it again on a sound store changes nothing. The same as
` + "`darman doctor --repair`" + `; see docs/sessions.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.dataDir()
			if err != nil {
				return err
			}
			log, _ := a.logger()
			res, err := store.Repair(dir, log)
			if err != nil {
				return err
			}
			if !res.Damaged {
				fmt.Fprintln(a.stdout, "The session store in "+dir+" is sound: nothing to repair.")
				return nil
			}
			fmt.Fprint(a.stdout, repairReport(res, "\n"))
			return nil
		},
	}
}

// dataDir is the configured data directory.
func (a *app) dataDir() (string, error) {
	loaded, err := a.config()
	if err != nil {
		return "", err
	}
	if loaded.Config.DataDir == "" {
		return "", errors.New("no data directory: set dataDir in the config, DARMAN_DATA_DIR or --data-dir (no home directory was found)")
	}
	return loaded.Config.DataDir, nil
}

// repairReport says what a repair of a damaged store did, one statement
// after another separated by sep.
func repairReport(res store.Repaired, sep string) string {
	var b strings.Builder
	say := func(f string, args ...any) {
		fmt.Fprintf(&b, f, args...)
		b.WriteString(sep)
	}
	say("moved the damaged store to %s (untouched)", res.Aside)
	say("damage found: %s", strings.Join(res.Damage, "; "))
	if res.Unreadable != "" {
		say("nothing could be read back from the damaged files: %s", res.Unreadable)
	}
	say("read back %d sessions (%d records), %d of the journal's transactions replayed", res.Sessions, res.Records, res.Journal)
	if len(res.Lost) > 0 {
		say("not readable (what was only there and not in the journal is lost): %s", strings.Join(res.Lost, ", "))
	}
	if len(res.Unrecovered) > 0 {
		say("not recovered: %d records whose values could not be read (%s)", len(res.Unrecovered), strings.Join(res.Unrecovered[:min(len(res.Unrecovered), 10)], ", "))
	}
	return b.String()
}
