package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter refuses to make sockets of the families the policy
// keeps closed, with EACCES, and io_uring (which can make sockets without
// the socket system call). Everything else is allowed: Landlock does the
// rest.

const (
	bpfLd   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low half of args[0] on little-endian machines

	retAllow = unix.SECCOMP_RET_ALLOW
	retDeny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)

	x32Bit = 0x40000000
)

// asm assembles a BPF program with forward jumps to labels.
type asm struct {
	ins    []unix.SockFilter
	labels map[string]int
	fix    []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *asm) ld(off uint32) { a.ins = append(a.ins, unix.SockFilter{Code: bpfLd, K: off}) }
func (a *asm) ret(k uint32)  { a.ins = append(a.ins, unix.SockFilter{Code: bpfRet, K: k}) }
func (a *asm) label(l string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[l] = len(a.ins)
}

// jeq jumps to jt when the accumulator is k, else to jf ("" is the next
// instruction).
func (a *asm) jeq(k uint32, jt, jf string) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, unix.SockFilter{Code: bpfJeq, K: k})
}

func (a *asm) done() []unix.SockFilter {
	for _, f := range a.fix {
		off := func(l string) uint8 {
			if l == "" {
				return 0
			}
			return uint8(a.labels[l] - f.at - 1)
		}
		a.ins[f.at].Jt, a.ins[f.at].Jf = off(f.jt), off(f.jf)
	}
	return a.ins
}

// socketFilter returns the program refusing sockets of families, or nil
// when there is nothing to refuse or the architecture is not one it knows.
func socketFilter(families []uint32) []unix.SockFilter {
	if len(families) == 0 {
		return nil
	}
	var native, socketNr uint32
	switch runtime.GOARCH {
	case "amd64":
		native, socketNr = unix.AUDIT_ARCH_X86_64, 41
	case "arm64":
		native, socketNr = unix.AUDIT_ARCH_AARCH64, 198
	default:
		return nil
	}
	const ioUringSetup = 425
	var a asm
	a.ld(offArch)
	a.jeq(native, "", "compat")
	a.ld(offNr)
	a.jeq(socketNr, "sock", "")
	if runtime.GOARCH == "amd64" {
		a.jeq(socketNr|x32Bit, "sock", "")
		a.jeq(ioUringSetup|x32Bit, "deny", "")
	}
	a.jeq(ioUringSetup, "deny", "allow")

	// 32-bit system calls from a 64-bit process: socketcall cannot be
	// looked into, so it is refused whole.
	a.label("compat")
	switch runtime.GOARCH {
	case "amd64":
		a.jeq(unix.AUDIT_ARCH_I386, "", "allow")
		a.ld(offNr)
		a.jeq(102, "deny", "") // socketcall
		a.jeq(359, "sock", "") // socket
		a.jeq(ioUringSetup, "deny", "allow")
	case "arm64":
		a.jeq(unix.AUDIT_ARCH_ARM, "", "allow")
		a.ld(offNr)
		a.jeq(281, "sock", "") // socket
		a.jeq(ioUringSetup, "deny", "allow")
	}

	a.label("sock")
	a.ld(offArg0)
	for i, f := range families {
		next := ""
		if i == len(families)-1 {
			next = "allow"
		}
		a.jeq(f, "deny", next)
	}
	a.label("allow")
	a.ret(retAllow)
	a.label("deny")
	a.ret(retDeny)
	return a.done()
}

// installSeccomp installs prog on the calling thread; no_new_privs must be
// set already.
func installSeccomp(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return nil
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return errno
	}
	return nil
}
