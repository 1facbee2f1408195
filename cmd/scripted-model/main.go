// Command scripted-model runs darman's scripted model server (package
// llmtest) on its own, for manual testing and for tests that run darman as
// a separate process.
//
// Usage:
//
//	scripted-model [-addr 127.0.0.1:0] [-stdin-eof-exit] [-v] script.json
//
// It prints the server's base URL on the first line of standard output and
// serves until it receives SIGINT or SIGTERM, or, with -stdin-eof-exit,
// until its standard input is closed. The Anthropic base URL is that URL;
// the OpenAI-compatible one is that URL followed by /v1. The script format
// is described in package llmtest.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
