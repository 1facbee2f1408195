package child

import "syscall"

// setDeathSignal has the kernel SIGKILL the child when the thread that
// started it ends (darman dying included). Go's runtime may retire
// threads, which Pdeathsig counts as the parent's death only for threads
// locked with runtime.LockOSThread.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
