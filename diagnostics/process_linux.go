package diagnostics

import "syscall"

// sysProcAttr puts the child in a process group of its own and has the
// kernel kill it when the thread that started it (darman) dies, even by
// SIGKILL. The Go runtime does not end its threads while the process
// lives, so only darman's death triggers it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
