package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/internal/config"
)

func (a *app) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the merged configuration, or print its JSON Schema",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the merged configuration (secrets redacted) and the files it came from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loaded, err := a.config()
			if err != nil {
				return err
			}
			for _, src := range loaded.Sources {
				if src.Found {
					fmt.Fprintf(a.stderr, "# %s (%s)\n", src.Path, src.Layer)
				}
			}
			for _, w := range loaded.Warnings {
				fmt.Fprintf(a.stderr, "# warning: %s\n", w)
			}
			return writeJSON(a.stdout, loaded.Config.Redacted())
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: `Print the JSON Schema of darman.json (point "$schema" at a copy for editor completion)`,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := config.Schema()
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(append(b, '\n'))
			return err
		},
	})
	return cmd
}
