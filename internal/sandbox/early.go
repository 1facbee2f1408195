package sandbox

import "os"

// The helper runs once per command the model runs, so it must start fast.
// Go initializes every package a binary imports before main, and darman
// imports a lot (the providers' SDKs alone take milliseconds). This
// package imports little and its path sorts early, so its initialization
// comes before most of theirs: when darman was started as its own sandbox
// helper ("darman sandbox-exec …"), the helper runs here and execve's the
// shell, and the rest of darman is never initialized. This is the one
// side effect of an init in darman, on purpose; cmd/darman's
// "sandbox-exec" subcommand does the same for the rare binary whose
// initialization order differs.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(Exec(os.Args[2:], os.Stderr))
	}
}
