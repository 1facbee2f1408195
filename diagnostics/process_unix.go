//go:build unix && !linux

package diagnostics

import "syscall"

// sysProcAttr puts the child in a process group of its own. This OS has no
// parent-death signal: a child outlives a darman killed with SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
