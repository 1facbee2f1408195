//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
)

func kindOf(capabilities) string { return "" }

func probeOS(string, string) (capabilities, string) {
	return capabilities{}, "darman has no sandbox for " + runtime.GOOS
}

func wrapOS(*exec.Cmd, Policy, capabilities, bool, string, string) error { return nil }

// Exec is the helper; it does nothing on this OS.
func Exec(args []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "darman sandbox-exec: there is no sandbox on %s\n", runtime.GOOS)
	return 125
}

func startOS(cmd *exec.Cmd) error { return cmd.Start() }
