// Command darman is an AI coding agent that lives in the editor: it speaks
// the Language Server Protocol, so any editor that can start a language
// server gets it. Run `darman --help` for the commands.
package main

import (
	"os"

	"github.com/darman-dev/darman/internal/childenv"
)

func main() {
	// Before any front starts a command: the secret-looking variables'
	// values leave the environment block other processes can read
	// (/proc/PID/environ); darman keeps its own copies. childEnviron does
	// the same for the provider keys once the configuration names them.
	childenv.Scrub(childenv.Policy{})
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
