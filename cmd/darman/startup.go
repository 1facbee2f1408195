package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// leanCompletion spares a command line that cannot reach cobra's
// completion command the building of it: cobra adds it to the root at
// every Execute, with its bash, zsh, fish and PowerShell subcommands and
// their help texts (0.1 ms of `darman version`'s 6). The command lines
// that can reach it keep it: no arguments or flags first (the root's help
// lists it), help, completion itself, and the shells' completion requests.
func leanCompletion(root *cobra.Command, args []string) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return
	}
	switch args[0] {
	case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return
	}
	root.CompletionOptions.DisableDefaultCmd = true
}
