package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/transcript"
)

func (a *app) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export, import and remove stored sessions",
		Long: `Sessions are kept in the data directory and shared by every darman
process. A session ID may be shortened to any unique prefix, with or
without its "ses_" start, or to its last characters (four or more): an
ID begins with its time, so one day's sessions share their beginning,
and their ends tell them apart (darman sessions show 5hpvjq).`,
	}
	cmd.AddCommand(a.sessionsList(), a.sessionsShow(), a.sessionsExport(), a.sessionsImport(), a.sessionsRm(),
		a.sessionsRevert(), a.sessionsRedo(), a.sessionsFork(), a.sessionsRepair(), a.sessionsGC())
	return cmd
}

func (a *app) sessionsList() *cobra.Command {
	var (
		here, asJSON bool
		limit        int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openStoreReadOnly(cmd.Context())
			if err != nil {
				return err
			}
			// One more than shown, to know whether there are more: a page
			// costs the page, however many sessions the store holds.
			opts := store.ListOptions{Limit: limit}
			if limit > 0 {
				opts.Limit = limit + 1
			}
			if here {
				if opts.Workspace, err = a.workspaceRoot(); err != nil {
					return err
				}
			}
			list, err := s.ListSessions(cmd.Context(), opts)
			if err != nil {
				return err
			}
			more := limit > 0 && len(list) > limit
			if more {
				list = list[:limit]
				defer fmt.Fprintf(a.stderr, "More sessions are stored: -n N shows the N most recent, -n 0 all of them.\n")
			}
			if asJSON {
				if list == nil {
					list = []agent.Session{}
				}
				return writeJSON(a.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stderr, "No sessions yet.")
				return nil
			}
			// tabwriter writes each cell on its own: a write(2) each,
			// 11 a row, unbuffered (5 ms of a 100-row list).
			out := bufio.NewWriter(a.stdout)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tWORKSPACE\tTITLE")
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Updated.Local().Format(time.DateTime), s.Messages, s.Workspace, s.Title)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return out.Flush()
		},
	}
	cmd.Flags().BoolVar(&here, "here", false, "only sessions of the current workspace")
	cmd.Flags().IntVarP(&limit, "limit", "n", 100, "show this many, the most recently updated (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// resolve turns the user's session argument into a full ID.
func (a *app) resolve(cmd *cobra.Command, arg string) (*store.Store, agent.ID, error) {
	return a.resolveIn(cmd, arg, a.openStore)
}

// resolveReadOnly is resolve for a command that only reads.
func (a *app) resolveReadOnly(cmd *cobra.Command, arg string) (*store.Store, agent.ID, error) {
	return a.resolveIn(cmd, arg, a.openStoreReadOnly)
}

func (a *app) resolveIn(cmd *cobra.Command, arg string, open func(context.Context) (*store.Store, error)) (*store.Store, agent.ID, error) {
	s, err := open(cmd.Context())
	if err != nil {
		return nil, "", err
	}
	id, err := s.Resolve(cmd.Context(), arg)
	return s, id, err
}

func (a *app) sessionsShow() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation",
		Long: `Prints a session's conversation readably: each prompt with its id (msg_…),
which names its turn for darman sessions revert --turn, redo --turn and
fork. --json prints the session and its messages as JSON instead (the
shape darman sessions export writes, indented, without the images' bytes).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, id, err := a.resolveReadOnly(cmd, args[0])
			if err != nil {
				return err
			}
			e, err := s.Export(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				e.Blobs = nil // the images' bytes are export's, for import
				return writeJSON(a.stdout, e)
			}
			return transcript.Text(a.stdout, transcript.Session{Session: e.Session, Messages: e.Messages})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session and its messages as JSON")
	return cmd
}

func (a *app) sessionsExport() *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:               "export ID",
		Short:             "Write a session as JSON (lossless, for import) or Markdown",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "markdown" {
				return fmt.Errorf("--format %q: expected json or markdown", format)
			}
			s, id, err := a.resolveReadOnly(cmd, args[0])
			if err != nil {
				return err
			}
			e, err := s.Export(cmd.Context(), id)
			if err != nil {
				return err
			}
			return writeOut(a.stdout, output, func(w io.Writer) error {
				if format == "markdown" {
					return transcript.Markdown(w, transcript.Session{Session: e.Session, Messages: e.Messages})
				}
				// Compact, so that raw JSON inside (tool inputs, metadata)
				// comes back byte for byte on import.
				return json.NewEncoder(w).Encode(e)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "json or markdown")
	cmd.RegisterFlagCompletionFunc("format", completeWords("json", "markdown"))
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func (a *app) sessionsImport() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Read a session exported as JSON back into the store (- reads stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in io.Reader = a.stdin
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			var e store.Export
			dec := json.NewDecoder(in)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				return fmt.Errorf("%s is not a darman session export (from `darman sessions export ID`): %v", args[0], err)
			}
			s, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.Import(cmd.Context(), &e); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "imported %s (%d messages)\n", e.Session.ID, len(e.Messages))
			return nil
		},
	}
}

func (a *app) sessionsRm() *cobra.Command {
	return &cobra.Command{
		Use:               "rm ID...",
		Short:             "Remove sessions with their messages and sub-task sessions",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			var failed []error
			for _, arg := range args {
				s, id, err := a.resolve(cmd, arg)
				var sess agent.Session
				if err == nil {
					sess, _ = s.Session(cmd.Context(), id)
					err = s.DeleteSession(cmd.Context(), id)
				}
				if err != nil {
					failed = append(failed, err)
					continue
				}
				if err := forgetMCPSession(a.loaded.Config, id); err != nil {
					failed = append(failed, fmt.Errorf("%s: removed, but not what its MCP servers left: %w", id, err))
				}
				if k := newKeeper(a.loaded.Config, s, a.log); k != nil {
					collectCheckpoints(cmd.Context(), k, sess.Workspace, id, a.log)
				}
				fmt.Fprintf(a.stdout, "removed %s\n", id)
			}
			return errors.Join(failed...)
		},
	}
}

// completeSessions offers session IDs to the shell's completion.
func (a *app) completeSessions(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	s, err := a.openStore(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := s.ListSessions(cmd.Context(), store.ListOptions{Limit: 200})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, sess := range list {
		if strings.HasPrefix(string(sess.ID), prefix) {
			out = append(out, cobra.CompletionWithDesc(string(sess.ID), sess.Title))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeOut writes with fn to the named file (atomically, so a failure
// leaves no half file) or to stdout when the name is empty.
func writeOut(stdout io.Writer, name string, fn func(io.Writer) error) error {
	if name == "" {
		return fn(stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".darman-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
