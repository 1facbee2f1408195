//go:build unix

package main_test

import "syscall"

// noTerminal starts darman in a session of its own, without a controlling
// terminal, as CI and editors do: its permission questions then take the
// non-interactive path even when the tests run in a terminal.
func noTerminal() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killPID kills the process pid, as a crash would.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
