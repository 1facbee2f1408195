//go:build windows

package main_test

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// noTerminal starts darman detached from the console, as editors do: its
// permission questions then take the non-interactive path.
func noTerminal() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS}
}

// killPID kills the process pid, as a crash would.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
