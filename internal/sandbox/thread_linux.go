//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/darman-dev/darman/internal/sandbox/early"
)

// A command darman starts itself is not started through the helper (a
// second darman process, whose Go runtime costs milliseconds to start): a
// thread of darman's is confined instead and starts the command. (One that
// needs a mount namespace for the protected paths still takes the helper
// unless darman may mount: a thread may unshare its mount namespace, but
// only with CAP_SYS_ADMIN; an unprivileged darman would need a user
// namespace, which a multi-threaded process cannot make.) Landlock, seccomp and no_new_privs are the
// calling thread's alone (no TSYNC), and os/exec forks from the calling
// thread, so the command inherits them while every other thread of darman
// stays as it was. The thread is thrown away afterwards:
//
//   - its goroutine calls runtime.LockOSThread and never unlocks, and a
//     goroutine that ends locked takes its thread with it (runtime.goexit0
//     returns to mstart, whose mexit ends the thread), so no other
//     goroutine ever runs there;
//   - the runtime's main thread cannot end that way (mexit wedges m0
//     instead), so a goroutine that finds itself there hands the work to
//     one it starts while it holds the main thread (see disposable);
//   - a thread the runtime starts while a locked goroutine runs is cloned
//     by the template thread, not by the locked one (runtime.newm), so the
//     confinement reaches no new thread;
//   - the kernel sends the parent-death signal (child.Start sets SIGKILL)
//     when the thread that forked the command ends, so when the command
//     has one the thread waits, without reaping, until the command has
//     exited.
//
// While the thread lives it shares the command's Landlock domain, which
// lets the command reach it where the domain otherwise keeps darman out:
// ptrace access (/proc/PID/task/TID/mem and fd, process_vm_readv,
// pidfd_getfd) and signals. darman makes itself non-dumpable before the
// first such start, which refuses the ptrace access to a process without
// CAP_SYS_PTRACE whatever Landlock says, and keeps that capability from
// the command (shedCapabilities). Landlock's signal scope does not keep
// the command from signalling the thread either, and a fatal signal to
// one thread (kill -9 TID) ends all of darman: the thread's seccomp
// filter, built for this thread (early.ConfineThread), refuses the system
// calls that signal it or darman's process by number, and those whose
// target it cannot see (pidfd_send_signal, F_SETOWN_EX; see early's guard
// for the list, and for why the Go runtime's own tgkill of darman's other
// threads, which the thread makes until it forks, is let through).

// inThread is what Wrap leaves in cmd.Err for a command to be started on a
// confined thread: cmd.Start refuses it, so a caller that did not go
// through Start cannot run it unconfined.
type inThread struct {
	pol Policy
	// pool, when set, is where the command is started instead: the
	// holder of the workspace root's namespace (holder_linux.go).
	pool *holderPool
	root string
	// pidns, when set, is the PID namespace (and the mount namespace
	// with its /proc) the thread enters (pidns_linux.go).
	pidns *pidNS
}

func (*inThread) Error() string {
	return "sandbox: this command is confined on a thread of darman's; start it with sandbox.Start (child.Start does), not with cmd.Start"
}

// threadMountNS reports whether a thread of darman's may take a mount
// namespace of its own and mount there (darman has CAP_SYS_ADMIN, as root
// has): then a command with protected paths is confined in-thread too,
// the thread making the read-only mounts in its own namespace. Without
// that capability a user namespace would be needed, which a
// multi-threaded process cannot make, so those go through the helper.
// The error is what keeps such a thread from making the read-only view
// (the kernel's mount API), nil when it can.
func threadMountNS() (bool, error) {
	var ok bool
	var view error
	onDisposableThread(func() {
		if syscall.Unshare(syscall.CLONE_NEWNS) != nil {
			return
		}
		if ok = syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "") == nil; ok {
			view = early.ViewWorks()
		}
	})
	return ok, view
}

// inThreadOK says whether commands can be confined on a thread of
// darman's here, or why not: where darman runs as root, the thread must be
// able to keep CAP_SYS_PTRACE from the command (see shedCapabilities), and
// a kernel whose Landlock signal scope keeps a confined thread from
// signalling the others would break the Go runtime's preemption.
func inThreadOK() (bool, string) {
	var shed error
	var works bool
	onDisposableThread(func() {
		if shed = shedCapabilities(); shed == nil {
			works = early.ThreadSignals()
		}
	})
	switch {
	case shed != nil:
		return false, "darman runs as root and cannot drop CAP_SYS_PTRACE from a thread's bounding set: " + shed.Error()
	case !works:
		return false, "the kernel's Landlock keeps a confined thread from signalling its process's other threads"
	}
	// Go decides once whether pidfds work, trying one on itself: here, on
	// an unconfined thread, rather than first on a confined one (whose
	// signal scope could make it conclude they do not).
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
	return true, ""
}

// shedCapabilities keeps the capabilities of the calling thread, which is
// to be confined and start a command, from that command: a command of
// root (or one given ambient capabilities) would otherwise have
// CAP_SYS_PTRACE, which passes over darman being non-dumpable and so
// reaches darman through the thread that shares its Landlock domain. The
// ambient set is cleared; for root, CAP_SYS_PTRACE leaves the bounding set
// the command's capabilities are drawn from at execve (no_new_privs keeps
// it from file capabilities).
func shedCapabilities() error {
	syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0)
	if syscall.Getuid() != 0 && syscall.Geteuid() != 0 {
		return nil
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, capSysPtrace, 0); e != 0 {
		return e
	}
	return nil
}

// onDisposableThread runs fn on a thread of its own that ends with it, and
// returns once fn has.
func onDisposableThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		disposable(fn)
	}()
	<-done
}

// disposable runs fn on the calling goroutine's thread, locked and thrown
// away afterwards. On the main thread, which the runtime never ends, it
// starts a goroutine while it holds that thread, so that the new one runs
// on another, and runs fn there.
func disposable(fn func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	if syscall.Gettid() != syscall.Getpid() {
		fn()
		return
	}
	locked, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		close(locked)
		fn()
	}()
	<-locked
	runtime.UnlockOSThread()
	<-done
}

var nonDumpable sync.Once

// startOS starts cmd confined on a thread of darman's when Wrap prepared
// it so, else as it is: with a parent-death signal, from a thread of its
// own that waits for it (startOwnThread).
func startOS(cmd *exec.Cmd) error {
	c, ok := cmd.Err.(*inThread)
	if !ok {
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
			return startOwnThread(cmd)
		}
		return cmd.Start()
	}
	cmd.Err = nil
	if c.pool != nil {
		return startHeld(cmd, c.pool, c.root, c.pol)
	}
	nonDumpable.Do(func() {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	})
	// What needs files is done before the thread is confined.
	if cmd.Stdin == nil || cmd.Stdout == nil || cmd.Stderr == nil {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		if cmd.Stdin == nil {
			cmd.Stdin = null
		}
		if cmd.Stdout == nil {
			cmd.Stdout = null
		}
		if cmd.Stderr == nil {
			cmd.Stderr = null
		}
	}
	mnt, pid := -1, -1
	if c.pidns != nil && c.pol.NS {
		var err error
		if mnt, pid, err = c.pidns.get(); err != nil {
			return fmt.Errorf("the sandbox could not be set up: %w", err)
		}
		// The child of os/exec that has a parent-death signal checks its
		// parent's pid, which reads 0 from another PID namespace, and
		// kills itself: the namespace's init ending kills the command
		// instead (see pidns_linux.go), so the thread need not wait.
		if attr := cmd.SysProcAttr; attr != nil && attr.Pdeathsig != 0 {
			own := *attr
			own.Pdeathsig = 0
			cmd.SysProcAttr = &own
			defer func() { cmd.SysProcAttr = attr }()
		}
	}
	return startOnDisposable(cmd, func() error {
		if err := shedCapabilities(); err != nil {
			return fmt.Errorf("the sandbox could not be set up: drop CAP_SYS_PTRACE: %w", err)
		}
		switch {
		case mnt >= 0:
			if err := c.pidns.enter(mnt, pid); err != nil {
				return fmt.Errorf("the sandbox could not be set up: %w", err)
			}
		case c.pol.NS:
			// A mount namespace of the thread's own (CLONE_FS with it),
			// which the command inherits and where Confine mounts.
			if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
				return fmt.Errorf("the sandbox could not be set up: a mount namespace: %w", err)
			}
		}
		if err := early.ConfineThread(c.pol); err != nil {
			return fmt.Errorf("the sandbox could not be set up: %w", err)
		}
		return nil
	})
}

// startOwnThread starts cmd, which has a parent-death signal, from a
// locked thread of its own that lives until cmd has exited, as a
// confined command's does. The kernel sends the signal when the thread
// that forked the child ends, and any goroutine may run on any thread:
// the thread a goroutine started a child from may later be taken by a
// disposable goroutine and end with it. Children of darman's that are
// not confined in-thread (language servers, MCP servers, commands when
// the sandbox is off) were killed so by the next sandboxed command's
// thread (TestParentDeathSignalIsDarmans).
func startOwnThread(cmd *exec.Cmd) error { return startOnDisposable(cmd, nil) }

// startOnDisposable runs prep (when set) on a disposable thread, then
// starts cmd from it; with a parent-death signal, the thread waits for
// cmd to exit (without reaping it) before it ends.
func startOnDisposable(cmd *exec.Cmd, prep func() error) error {
	attr := cmd.SysProcAttr
	wait := attr != nil && attr.Pdeathsig != 0
	pidfd := -1
	var theirs *int
	if wait {
		if theirs = attr.PidFD; theirs == nil {
			attr.PidFD = &pidfd
			defer func() { attr.PidFD = nil }()
		}
	}
	started := make(chan error, 1)
	go disposable(func() {
		if prep != nil {
			if err := prep(); err != nil {
				started <- err
				return
			}
		}
		err := cmd.Start()
		if err != nil || !wait {
			started <- err
			return
		}
		fd := pidfd
		if theirs != nil {
			fd = dupFD(*theirs)
		}
		pid := cmd.Process.Pid
		started <- nil
		waitExited(fd, pid)
	})
	return <-started
}

// waitExited blocks until process pid, a child of the calling thread, has
// exited, without reaping it (os/exec does), through the pidfd fd when
// there is one (it closes it).
func waitExited(fd, pid int) {
	idtype, id := uintptr(pPID), uintptr(pid)
	if fd >= 0 {
		idtype, id = pPIDFD, uintptr(fd)
		defer syscall.Close(fd)
	}
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, idtype, id, uintptr(unsafe.Pointer(&info)), wExited|wNoWait, 0, 0)
		if e != syscall.EINTR {
			return // exited (or already reaped: ECHILD)
		}
	}
}

func dupFD(fd int) int {
	nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return -1
	}
	return int(nfd)
}

// Linux's constants the syscall package lacks.
const (
	prCapbsetDrop        = 24
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	capSysPtrace         = 19
	capSysAdmin          = 21
	capSetpcap           = 8
	capSysChroot         = 18
	prSetDumpable        = 4
	pPID                 = 1
	pPIDFD               = 3
	wExited              = 4
	wNoWait              = 0x1000000
)
