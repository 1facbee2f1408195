//go:build darwin

package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// seatbeltExec is sandbox-exec's fixed path: a PATH lookup could be
// pointed at another program.
const seatbeltExec = "/usr/bin/sandbox-exec"

func kindOf(c capabilities) string {
	if c.abi < 0 {
		return "seatbelt"
	}
	return ""
}

func probeOS(string, string) (capabilities, string) {
	if _, err := os.Stat(seatbeltExec); err != nil {
		return capabilities{}, seatbeltExec + " is missing"
	}
	return capabilities{abi: -1}, ""
}

func wrapOS(cmd *exec.Cmd, pol Policy, c capabilities, detached bool, dir, root string) error {
	path := cmd.Path
	if path == "" && len(cmd.Args) > 0 {
		path = cmd.Args[0]
	}
	args := append([]string{"sandbox-exec", "-p", SeatbeltProfile(pol), path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = seatbeltExec, args
	return nil
}

// Exec is the Linux helper; on macOS darman uses sandbox-exec itself.
func Exec(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "darman sandbox-exec: on macOS darman runs /usr/bin/sandbox-exec instead")
	return 125
}

func startOS(cmd *exec.Cmd) error { return cmd.Start() }
