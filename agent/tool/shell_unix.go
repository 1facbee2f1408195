//go:build unix

package tool

import (
	"errors"
	"os/exec"
)

// findShell returns the shell commands run in: bash when there is one,
// else sh.
func findShell() (shellChoice, error) {
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return shellChoice{path: p, args: []string{"-c"}}, nil
		}
	}
	return shellChoice{}, errors.New("neither bash nor sh was found on PATH")
}
