// Package jobs runs the bash tool's commands: a Proc is one command line
// started with child.Start, its stdout and stderr on one pipe copied into a
// sink; a Capture is the sink that keeps what the model is shown (the head
// and the tail) and saves the rest to a file; Jobs are a session's
// background commands, those started with run_in_background and those a
// command left running, read with bash_output and stopped with bash_kill.
// The bash tool builds the exec.Cmd a command line runs as; this package
// starts, watches and stops it.
package jobs
