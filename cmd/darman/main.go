// Command darman is an AI coding agent that lives in the editor: it speaks
// the Language Server Protocol, so any editor that can start a language
// server gets it. Run `darman --help` for the commands.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
