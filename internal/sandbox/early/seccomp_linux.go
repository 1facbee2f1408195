//go:build linux

package early

import (
	"runtime"
	"syscall"
	"unsafe"
)

// The seccomp filter refuses, on both paths (the helper's command and the
// one started from a confined thread of darman's):
//
//   - to make sockets of the families the policy keeps closed, packet
//     sockets (AF_PACKET, which read every frame on an interface, lo's
//     too: darman's own requests to the model), raw and SOCK_PACKET
//     sockets of AF_INET and AF_INET6, and netlink sockets (with the
//     network on, only NETLINK_ROUTE, which resolvers and `ip addr` read
//     the interfaces with; changing them needs CAP_NET_ADMIN, which the
//     command does not have), with EACCES; and io_uring (which can make
//     sockets without the socket system call);
//   - the system calls a confined command has no use for and that reach
//     past the sandbox or the machine's state (refused, with EPERM):
//     process_vm_readv and process_vm_writev (another process's memory),
//     keyctl, add_key and request_key (the kernel's keyrings, shared by
//     the user's processes), bpf, perf_event_open, sethostname and
//     setdomainname, syslog (the kernel's log), mount and every other
//     call that changes the mounts (umount2, pivot_root, open_tree,
//     move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr,
//     open_tree_attr), kexec_load and kexec_file_load, init_module,
//     finit_module and delete_module, reboot, acct, swapon and swapoff.
//     Most need capabilities the command has not kept (see
//     early.Confine); the filter refuses them whatever a kernel's
//     permission checks would say (an unprivileged bpf or perf_event_open
//     where the sysctls allow them; a user namespace of the command's
//     own, in which it is root again);
//   - to set another process's resource limits (prlimit64 with a pid and
//     new limits: RLIMIT_CPU 0 has the kernel kill darman, RLIMIT_NOFILE
//     starves it, and Landlock does not look at prlimit), with EPERM;
//   - to type into a terminal (TIOCSTI, and TIOCLINUX's selection paste
//     on a console), with EPERM: the command shares darman's controlling
//     terminal, and a line typed there is read by the user's shell once
//     darman exits, outside the sandbox (the kernel allows it to root,
//     and to anyone where dev.tty.legacy_tiocsti is 1);
//   - to hang that terminal up (vhangup, root's: the kernel sends SIGHUP
//     to the session's leader and its foreground group, darman among
//     them), with EPERM.
//
// On a thread of darman's confined in place it also keeps the command
// from signalling darman through that thread (see guard). Everything
// else is allowed: Landlock does the rest.
//
// Every argument compared is a pid_t, an int or an unsigned int, which the
// kernel truncates to its low 32 bits (SYSCALL_DEFINE casts the register
// to the parameter's type): the filter compares the low half, which is
// what the kernel uses, and ignores the high half (comparing both would
// let a command set the high half and pass). prlimit64's new limits are a
// pointer, whose both halves are compared with NULL. seccomp_data holds
// the arguments as 64-bit values in the machine's order: the low half is
// first on the little-endian machines the filter knows.

const (
	bpfLd   = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	bpfJeq  = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	bpfJset = syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K
	bpfRet  = syscall.BPF_RET | syscall.BPF_K
	offNr   = 0
	offArch = 4
	offArgs = 16 // args[0]; args[i] is 8 bytes further each

	retAllow  = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno  = 0x00050000 // SECCOMP_RET_ERRNO, the errno in the low bits
	retDeny   = retErrno | uint32(syscall.EACCES)
	retEperm  = retErrno | uint32(syscall.EPERM)
	retEnosys = retErrno | uint32(syscall.ENOSYS)

	prSetSeccomp      = 22
	seccompModeFilter = 2

	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchArm     = 0x40000028

	x32Bit = 0x40000000

	fSetown   = 8      // F_SETOWN
	fSetownEx = 15     // F_SETOWN_EX
	tiocsti   = 0x5412 // TIOCSTI
	tioclinux = 0x541c // TIOCLINUX
	fioSetown = 0x8901 // FIOSETOWN
	siocSpgrp = 0x8902 // SIOCSPGRP
	ioUringNr = 425    // io_uring_setup, the same on every architecture

	afNetlink    = 16 // AF_NETLINK
	afPacket     = 17 // AF_PACKET
	sockRaw      = 3  // SOCK_RAW
	sockPacket   = 10 // SOCK_PACKET
	sockTypeMask = 0xf
	netlinkRoute = 0   // NETLINK_ROUTE
	pidfdOpen    = 434 // the same on every architecture
	pidfdSend    = 424 // pidfd_send_signal, the same on every architecture

	prioProcess, prioPgrp, prioUser       = 0, 1, 2 // setpriority's which
	ioprioProcess, ioprioPgrp, ioprioUser = 1, 2, 3 // ioprio_set's which
	sigurg                                = 23      // the Go runtime's preemption signal
	// maxTasks bounds the threads of darman's the filter names one by
	// one: a jump reaches at most 255 instructions.
	maxTasks = 240
)

// argLo is the offset of the low half of args[i], argHi of its high half.
func argLo(i uint32) uint32 { return offArgs + 8*i }
func argHi(i uint32) uint32 { return offArgs + 8*i + 4 }

// The filter's jump targets.
const (
	next = iota // the next instruction
	lX32
	lCompat
	lSock
	lPrlimit
	lSockType  // socket(AF_INET or AF_INET6, type): raw and packet types
	lNetlink   // socket(AF_NETLINK, type, protocol)
	lRefused   // EPERM, within a jump of the native dispatch
	lRefusedX  // the same for x32's
	lRefusedC  // the same for the 32-bit calls'
	lKill      // kill: darman's tasks, its process group, every process
	lTgkill    // tgkill: the guarded thread; darman's threads but to preempt
	lTgsq      // rt_tgsigqueueinfo: the guarded thread, darman's threads
	lTask0     // args[0] is one of darman's threads
	lTask1     // args[1] is one of darman's threads
	lPrio      // setpriority of darman's threads, group, user
	lIoprio    // ioprio_set of darman's threads, group, user
	lFcntl     // F_SETOWN to darman or its group, F_SETOWN_EX
	lIoctl     // TIOCSTI, TIOCLINUX; FIOSETOWN, SIOCSPGRP
	lAllow     // allow
	lDeny      // EACCES
	lEperm     // EPERM
	lEnosys    // ENOSYS
	lTask      // EPERM if the accumulator names one of darman's threads
	lTaskEperm // lTask's EPERM, within a jump of its comparisons
	nLabels
)

// asm assembles a BPF program with forward jumps to labels.
type asm struct {
	ins    []syscall.SockFilter
	labels [nLabels]int
	fix    []fixup
}

type fixup struct {
	at     int
	jt, jf int
	ja     bool // an unconditional jump to jt, whose offset is 32 bits
}

func (a *asm) ld(off uint32)            { a.ins = append(a.ins, syscall.SockFilter{Code: bpfLd, K: off}) }
func (a *asm) ret(k uint32)             { a.ins = append(a.ins, syscall.SockFilter{Code: bpfRet, K: k}) }
func (a *asm) label(l int)              { a.labels[l] = len(a.ins) }
func (a *asm) jeq(k uint32, jt, jf int) { a.jump(bpfJeq, k, jt, jf) }

// jset jumps to jt when the accumulator has any of k's bits.
func (a *asm) jset(k uint32, jt, jf int) { a.jump(bpfJset, k, jt, jf) }

// ja jumps to l, however far.
func (a *asm) ja(l int) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: l, ja: true})
	a.ins = append(a.ins, syscall.SockFilter{Code: syscall.BPF_JMP | syscall.BPF_JA})
}

func (a *asm) jump(code uint16, k uint32, jt, jf int) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, syscall.SockFilter{Code: code, K: k})
}

// dispatch jumps to each rule's label when the system call is its
// number, refuses those of refused (with EPERM, from a return of its own
// placed right after, at label ref, so that the jumps stay short), and
// allows the call when none is.
func (a *asm) dispatch(rules []rule, refused []uint32, ref int) {
	for _, r := range rules {
		a.jeq(r.nr, r.to, next)
	}
	for _, nr := range refused {
		a.jeq(nr, ref, next)
	}
	a.ret(retAllow)
	a.label(ref)
	a.ret(retEperm)
}

func (a *asm) done() []syscall.SockFilter {
	for _, f := range a.fix {
		if f.ja {
			a.ins[f.at].K = uint32(a.labels[f.jt] - f.at - 1)
			continue
		}
		off := func(l int) uint8 {
			if l == next {
				return 0
			}
			d := a.labels[l] - f.at - 1
			if d < 0 || d > 255 {
				// The tables make a program of about 90 instructions:
				// only an edit of them can get here, and a test would.
				panic("early: a seccomp jump out of range")
			}
			return uint8(d)
		}
		a.ins[f.at].Jt, a.ins[f.at].Jf = off(f.jt), off(f.jf)
	}
	return a.ins
}

// rule sends a system call number to a label.
type rule struct {
	nr uint32
	to int
}

// guard names a thread of darman's confined in place and darman's own
// process, which the command must not signal. While the thread lives (it
// waits for the command: the parent-death signal would kill the command
// when it ended), it shares the command's Landlock domain, so Landlock's
// signal scope lets the command signal it, and a fatal signal to one
// thread of a process (SIGKILL, SIGSTOP, or any the runtime does not
// handle) takes the whole process. The other threads of darman are
// outside the domain, and the scope refuses signals to them (kernels from
// 6.15; inThreadOK sends 6.12 to 6.14 to the helper; before 6.12 there is
// no scope, and a command may signal darman by its pid as any process of
// the user's may, on either path).
// The filter refuses, with EPERM:
//
//   - the process-directed calls naming the thread or darman: kill,
//     rt_sigqueueinfo and pidfd_open whose pid is either (kill(tid) signals
//     the whole process, and the permission is checked on the thread);
//   - the thread-directed ones aimed at the thread: tkill(tid),
//     tgkill(any, tid), rt_tgsigqueueinfo(any, tid). tgkill(pid, tid) of
//     darman's other threads with SIGURG is let through (with any other
//     signal it is refused, below): the filter also applies to the
//     confined thread's own Go code until it has forked the command, and
//     the Go runtime there preempts goroutines on the other threads with
//     tgkill(pid, theirs, SIGURG) (it never signals its own thread but to
//     die); for the command, the scope refuses those, and a SIGURG the
//     runtime takes for a preemption request does nothing else;
//   - the asynchronous-I/O owner, which has the kernel signal the owner
//     when a file is ready (with F_SETSIG, any signal, SIGKILL too; the
//     scope lets the owner be a thread of the domain): F_SETOWN naming
//     the thread or darman, and F_SETOWN_EX, FIOSETOWN and SIOCSPGRP,
//     whose owner is behind a pointer the filter cannot read.
//
// pidfd_send_signal is refused whole, with ENOSYS (as a kernel without it
// answers, which every program using it must handle; Go's os package then
// signals its children with kill): the file it signals cannot be read by
// the filter, and a pidfd of the thread is not only pidfd_open's: a
// directory /proc/TID of the thread serves as one (it signals the whole
// process: tested), and on kernels with pidfs file handles, so could one
// opened by open_by_handle_at.
//
// Signals to a process group reach darman only through its group leader,
// which is outside the domain: the scope refuses them (the commands are
// in sessions, and so groups, of their own). The thread's memory, files and environment in
// /proc need ptrace access, which darman being non-dumpable refuses.
//
// The same filter keeps the command from slowing darman down as any
// process of the user's may: setpriority and ioprio_set of darman's
// threads or process group, or of the whole user (PRIO_USER,
// IOPRIO_WHO_USER, which reach darman too); sched_setaffinity,
// sched_setscheduler, sched_setparam and sched_setattr of darman's
// threads; and, where Landlock has no signal scope (before 6.12), from
// signalling darman: kill, tkill and pidfd_open of any of its threads,
// kill of its process group or of every process (-1), tgkill of its
// threads with any signal but SIGURG. Nice values, affinity and
// scheduling are per thread, so the filter names darman's threads one by
// one, as they are when the thread is confined (tasks); a thread the
// runtime starts later is not named (see the documentation's "what is
// confined").
type guard struct {
	pid, tid, pgid uint32
	// tasks are darman's threads when the thread was confined.
	tasks []uint32
}

// threadGuard is the guard of the calling thread of darman's.
func threadGuard() guard {
	return guard{pid: uint32(syscall.Getpid()), tid: uint32(syscall.Gettid()), pgid: uint32(syscall.Getpgrp()), tasks: threads()}
}

// threads returns the thread IDs in /proc/self/task, at most maxTasks of
// them, or nil when it cannot be read.
func threads() []uint32 {
	fd, err := syscall.Open("/proc/self/task", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var tids []uint32
	buf := make([]byte, 4096)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return tids
		}
		_, _, names := syscall.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			var id uint32
			for i := 0; i < len(name) && name[i] >= '0' && name[i] <= '9'; i++ {
				id = id*10 + uint32(name[i]-'0')
			}
			if id != 0 && len(tids) < maxTasks {
				tids = append(tids, id)
			}
		}
	}
}

// named returns g's threads, the guarded thread and darman's pid among
// them, each once, at most maxTasks.
func (g guard) named() []uint32 {
	out := []uint32{g.tid, g.pid}
	for _, t := range g.tasks {
		if len(out) == maxTasks {
			break
		}
		if t != g.tid && t != g.pid {
			out = append(out, t)
		}
	}
	return out
}

// arch is what the filter knows of one architecture's system calls.
type arch struct {
	audit                 uint32
	socket, socketcall    uint32 // 0 when it has none
	kill, tkill, tgkill   uint32
	sigqueue, tgsigqueue  uint32 // rt_sigqueueinfo, rt_tgsigqueueinfo
	fcntl, fcntl64, ioctl uint32 // fcntl64: 0 when it has none
	prlimit, vhangup      uint32
	setpriority, ioprio   uint32 // ioprio_set
	// sched_setaffinity, sched_setscheduler, sched_setparam,
	// sched_setattr
	sched [4]uint32
	// refused are the system calls refused whole (see the top).
	refused []uint32
	or      uint32 // x32: ORed into every number
}

// newMountAPI are the numbers of the mount API's calls (open_tree,
// move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr,
// open_tree_attr), the same on every architecture.
var newMountAPI = []uint32{428, 429, 430, 431, 432, 433, 442, 467}

// The refused calls, by architecture: process_vm_readv, process_vm_writev,
// keyctl, add_key, request_key, bpf, perf_event_open, sethostname,
// setdomainname, syslog, mount, umount2 (and i386's umount), pivot_root,
// kexec_load, kexec_file_load (none on i386), init_module, finit_module,
// delete_module, reboot, acct, swapon, swapoff; then the mount API's.
var (
	refusedX86_64 = append([]uint32{310, 311, 250, 248, 249, 321, 298, 170, 171, 103, 165, 166, 155, 246, 320, 175, 313, 176, 169, 163, 167, 168}, newMountAPI...)
	// x32's own process_vm_readv and process_vm_writev are 539 and 540.
	refusedX32   = append([]uint32{539, 540, 250, 248, 249, 321, 298, 170, 171, 103, 165, 166, 155, 246, 320, 175, 313, 176, 169, 163, 167, 168}, newMountAPI...)
	refusedI386  = append([]uint32{347, 348, 288, 286, 287, 357, 336, 74, 121, 103, 21, 52, 22, 217, 283, 128, 350, 129, 88, 51, 87, 115}, newMountAPI...)
	refusedArm64 = append([]uint32{270, 271, 219, 217, 218, 280, 241, 161, 162, 116, 40, 39, 41, 104, 294, 105, 273, 106, 142, 89, 224, 225}, newMountAPI...)
	refusedArm   = append([]uint32{376, 377, 311, 309, 310, 386, 364, 74, 121, 103, 21, 52, 218, 347, 401, 128, 379, 129, 88, 51, 87, 115}, newMountAPI...)
)

var (
	archX86_64 = arch{audit: auditArchX86_64, socket: 41, kill: 62, tkill: 200, tgkill: 234, sigqueue: 129, tgsigqueue: 297, fcntl: 72, ioctl: 16, prlimit: 302, vhangup: 153, setpriority: 141, ioprio: 251, sched: [4]uint32{203, 144, 142, 314}, refused: refusedX86_64}
	// x32 shares the x86_64 audit arch, numbers ORed with x32Bit; a few
	// calls have x32 numbers of their own (512 and up).
	archX32   = arch{audit: auditArchX86_64, or: x32Bit, socket: 41, kill: 62, tkill: 200, tgkill: 234, sigqueue: 524, tgsigqueue: 536, fcntl: 72, ioctl: 514, prlimit: 302, vhangup: 153, setpriority: 141, ioprio: 251, sched: [4]uint32{203, 144, 142, 314}, refused: refusedX32}
	archI386  = arch{audit: auditArchI386, socket: 359, socketcall: 102, kill: 37, tkill: 238, tgkill: 270, sigqueue: 178, tgsigqueue: 335, fcntl: 55, fcntl64: 221, ioctl: 54, prlimit: 340, vhangup: 111, setpriority: 97, ioprio: 289, sched: [4]uint32{241, 156, 154, 351}, refused: refusedI386}
	archArm64 = arch{audit: auditArchAarch64, socket: 198, kill: 129, tkill: 130, tgkill: 131, sigqueue: 138, tgsigqueue: 240, fcntl: 25, ioctl: 29, prlimit: 261, vhangup: 58, setpriority: 140, ioprio: 30, sched: [4]uint32{122, 119, 118, 274}, refused: refusedArm64}
	archArm   = arch{audit: auditArchArm, socket: 281, kill: 37, tkill: 238, tgkill: 268, sigqueue: 178, tgsigqueue: 363, fcntl: 55, fcntl64: 221, ioctl: 54, prlimit: 369, vhangup: 111, setpriority: 97, ioprio: 314, sched: [4]uint32{241, 156, 154, 380}, refused: refusedArm}
)

// rules are the system calls of ar the filter looks into.
func (ar arch) rules(families []uint32, g guard) []rule {
	or := ar.or
	var rs []rule
	add := func(nr uint32, to int) {
		if nr != 0 {
			rs = append(rs, rule{nr | or, to})
		}
	}
	// Packet, raw and netlink sockets are refused whatever the network.
	add(ar.socket, lSock)
	add(ar.socketcall, lDeny) // its arguments cannot be looked into
	add(ioUringNr, lDeny)
	add(ar.prlimit, lPrlimit)
	add(ar.ioctl, lIoctl)
	add(ar.vhangup, lEperm)
	if g.tid != 0 {
		add(ar.kill, lKill)
		add(ar.sigqueue, lTask0)
		add(pidfdOpen, lTask0)
		add(ar.tkill, lTask0)
		add(ar.tgkill, lTgkill)
		add(ar.tgsigqueue, lTgsq)
		add(pidfdSend, lEnosys)
		add(ar.fcntl, lFcntl)
		add(ar.fcntl64, lFcntl)
		add(ar.setpriority, lPrio)
		add(ar.ioprio, lIoprio)
		for _, nr := range ar.sched {
			add(nr, lTask0)
		}
	}
	return rs
}

// filter returns the program for this machine, or nil when its
// architecture is not one the filter knows.
func filter(families []uint32, g guard) []syscall.SockFilter {
	return program(runtime.GOARCH, families, g)
}

// FilterKnown reports whether the filter knows this machine's system
// calls (no filter is installed elsewhere).
func FilterKnown() bool { return filter(nil, guard{}) != nil }

// program is filter for a Go architecture.
func program(goarch string, families []uint32, g guard) []syscall.SockFilter {
	var native, compat arch
	switch goarch {
	case "amd64":
		native, compat = archX86_64, archI386
	case "arm64":
		native, compat = archArm64, archArm
	default:
		return nil
	}
	a := asm{ins: make([]syscall.SockFilter, 0, 96), fix: make([]fixup, 0, 64)}
	a.ld(offArch)
	a.jeq(native.audit, next, lCompat)
	a.ld(offNr)
	if goarch == "amd64" {
		a.jset(x32Bit, lX32, next)
	}
	a.dispatch(native.rules(families, g), native.refused, lRefused)
	if goarch == "amd64" {
		a.label(lX32)
		a.dispatch(archX32.rules(families, g), orAll(archX32.refused, x32Bit), lRefusedX)
	}

	// 32-bit system calls from a 64-bit process.
	a.label(lCompat)
	a.jeq(compat.audit, next, lAllow)
	a.ld(offNr)
	a.dispatch(compat.rules(families, g), compat.refused, lRefusedC)

	// socket(family, type, protocol).
	network := true
	for _, f := range families {
		network = network && f != syscall.AF_INET
	}
	a.label(lSock)
	a.ld(argLo(0))
	a.jeq(afPacket, lDeny, next)
	for _, f := range families {
		a.jeq(f, lDeny, next)
	}
	if network {
		a.jeq(afNetlink, lNetlink, next)
	} else {
		a.jeq(afNetlink, lDeny, next)
	}
	a.jeq(syscall.AF_INET, lSockType, next)
	a.jeq(syscall.AF_INET6, lSockType, next)
	a.ret(retAllow)
	a.label(lSockType)
	a.ld(argLo(1))
	a.ins = append(a.ins, syscall.SockFilter{Code: syscall.BPF_ALU | syscall.BPF_AND | syscall.BPF_K, K: sockTypeMask})
	a.jeq(sockRaw, lDeny, next)
	a.jeq(sockPacket, lDeny, lAllow)
	a.label(lNetlink)
	a.ld(argLo(2))
	a.jeq(netlinkRoute, lAllow, lDeny)

	// prlimit64(pid, resource, new, old): a pid other than 0 (the caller)
	// with new limits.
	a.label(lPrlimit)
	a.ld(argLo(0))
	a.jeq(0, lAllow, next)
	a.ld(argLo(2))
	a.jeq(0, next, lEperm)
	a.ld(argHi(2))
	a.jeq(0, lAllow, lEperm)

	if g.tid != 0 {
		neg := func(v uint32) uint32 { return uint32(-int32(v)) }

		// kill(pid, sig): a thread of darman's (kill of a thread's ID
		// signals its process), darman's process group, every process.
		a.label(lKill)
		a.ld(argLo(0))
		a.jeq(neg(1), lEperm, next)
		if g.pgid != 0 {
			a.jeq(neg(g.pgid), lEperm, next)
		}
		a.ja(lTask)

		// tgkill(tgid, tid, sig): the guarded thread, with any signal;
		// darman's other threads with any signal but the runtime's
		// preemption (see above).
		a.label(lTgkill)
		a.ld(argLo(1))
		a.jeq(g.tid, lEperm, next)
		a.ld(argLo(2))
		a.jeq(sigurg, lAllow, next)
		a.ld(argLo(0))
		a.jeq(g.pid, lEperm, lAllow)

		// rt_tgsigqueueinfo(tgid, tid, sig, info), which the runtime
		// does not use: any thread of darman's.
		a.label(lTgsq)
		a.ld(argLo(1))
		a.jeq(g.tid, lEperm, next)
		a.ld(argLo(0))
		a.jeq(g.pid, lEperm, lAllow)

		prio := func(l int, process, pgrp, user uint32) {
			a.label(l)
			a.ld(argLo(0))
			a.jeq(user, lEperm, next)
			a.jeq(process, lTask1, next)
			a.jeq(pgrp, next, lAllow)
			a.ld(argLo(1))
			a.jeq(g.pgid, lEperm, lAllow)
		}
		prio(lPrio, prioProcess, prioPgrp, prioUser)
		prio(lIoprio, ioprioProcess, ioprioPgrp, ioprioUser)

		// fcntl(fd, F_SETOWN, owner): a thread of darman's, or its
		// process group (a negative owner).
		a.label(lFcntl)
		a.ld(argLo(1))
		a.jeq(fSetownEx, lEperm, next)
		a.jeq(fSetown, next, lAllow)
		a.ld(argLo(2))
		if g.pgid != 0 {
			a.jeq(neg(g.pgid), lEperm, next)
		}
		a.ja(lTask)

		a.label(lTask0)
		a.ld(argLo(0))
		a.ja(lTask)
		a.label(lTask1)
		a.ld(argLo(1))
		a.ja(lTask)
	}

	// ioctl(fd, request): typing into the terminal, and with a guard the
	// socket owner.
	a.label(lIoctl)
	a.ld(argLo(1))
	a.jeq(tiocsti, lEperm, next)
	a.jeq(tioclinux, lEperm, next)
	if g.tid != 0 {
		a.jeq(fioSetown, lEperm, next)
		a.jeq(siocSpgrp, lEperm, next)
	}
	a.ret(retAllow)

	a.label(lAllow)
	a.ret(retAllow)
	a.label(lDeny)
	a.ret(retDeny)
	a.label(lEperm)
	a.ret(retEperm)
	a.label(lEnosys)
	a.ret(retEnosys)

	if g.tid != 0 {
		// Last, so that the jumps above stay short however many
		// threads darman has.
		a.label(lTask)
		for _, t := range g.named() {
			a.jeq(t, lTaskEperm, next)
		}
		a.ret(retAllow)
		a.label(lTaskEperm)
		a.ret(retEperm)
	}
	return a.done()
}

// orAll returns nrs with or ORed into each.
func orAll(nrs []uint32, or uint32) []uint32 {
	out := make([]uint32, len(nrs))
	for i, nr := range nrs {
		out[i] = nr | or
	}
	return out
}

// installSeccomp installs prog on the calling thread; no_new_privs must be
// set already.
func installSeccomp(prog []syscall.SockFilter) error {
	if len(prog) == 0 {
		return nil
	}
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return errno
	}
	return nil
}
