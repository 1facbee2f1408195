//go:build windows

package tool

import (
	"os"
	"os/exec"
)

// findShell returns the shell commands run in: Git for Windows' bash when
// it is there, else PowerShell (see windowsShells).
func findShell() (shellChoice, error) {
	return windowsShells(os.Getenv, exec.LookPath, func(p string) bool {
		info, err := os.Stat(p)
		return err == nil && !info.IsDir()
	})
}
