//go:build unix && !linux

package child

import "syscall"

// SysProcAttr puts a child in a process group of its own. This OS has no
// parent-death signal; the Registry stops what is left when darman exits.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
