package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
		Long: `show prints the configuration darman uses — every file, the environment
and the flags merged, defaults included — as a configuration file: saved
to darman.json it reads back to the same settings (put your keys back
where it shows ` + "[redacted]" + `). On stderr, as comments: the files it came from,
the environment variables and flags that set something, and warnings.`,
		Args: cobra.NoArgs,
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
			for _, name := range []string{config.EnvModel, config.EnvSmallModel, config.EnvDataDir, config.EnvLogLevel, config.EnvLogFile} {
				if v, ok := os.LookupEnv(name); ok {
					fmt.Fprintf(a.stderr, "# %s=%s (environment)\n", name, v)
				}
			}
			cmd.Flags().Visit(func(f *pflag.Flag) {
				fmt.Fprintf(a.stderr, "# --%s=%s (command line)\n", f.Name, f.Value)
			})
			for _, w := range loaded.Warnings {
				fmt.Fprintf(a.stderr, "# warning: %s\n", w)
			}
			b, err := config.Encode(loaded.Config.Redacted())
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(b)
			return err
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
