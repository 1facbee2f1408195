package child

import "syscall"

// SysProcAttr puts a child in a process group of its own and has the kernel
// SIGKILL it when the thread that started it ends (darman dying included).
// Start children from a goroutine that outlives them, or lock the thread:
// Go's runtime may retire threads, which Pdeathsig counts as the parent's
// death only for threads locked with runtime.LockOSThread.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
