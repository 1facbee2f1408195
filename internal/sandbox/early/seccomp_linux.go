//go:build linux

package early

import (
	"runtime"
	"syscall"
	"unsafe"
)

// The seccomp filter refuses to make sockets of the families the policy
// keeps closed, with EACCES, and io_uring (which can make sockets without
// the socket system call). Everything else is allowed: Landlock does the
// rest.

const (
	bpfLd   = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	bpfJeq  = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	bpfRet  = syscall.BPF_RET | syscall.BPF_K
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low half of args[0] on little-endian machines

	retAllow = 0x7fff0000                          // SECCOMP_RET_ALLOW
	retDeny  = 0x00050000 | uint32(syscall.EACCES) // SECCOMP_RET_ERRNO

	prSetSeccomp      = 22
	seccompModeFilter = 2

	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchArm     = 0x40000028

	x32Bit = 0x40000000
)

// The filter's jump targets.
const (
	next = iota // the next instruction
	lCompat
	lSock
	lAllow
	lDeny
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
}

func (a *asm) ld(off uint32) { a.ins = append(a.ins, syscall.SockFilter{Code: bpfLd, K: off}) }
func (a *asm) ret(k uint32)  { a.ins = append(a.ins, syscall.SockFilter{Code: bpfRet, K: k}) }
func (a *asm) label(l int)   { a.labels[l] = len(a.ins) }
func (a *asm) jeq(k uint32, jt, jf int) {
	a.fix = append(a.fix, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, syscall.SockFilter{Code: bpfJeq, K: k})
}

func (a *asm) done() []syscall.SockFilter {
	for _, f := range a.fix {
		off := func(l int) uint8 {
			if l == next {
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
func socketFilter(families []uint32) []syscall.SockFilter {
	if len(families) == 0 {
		return nil
	}
	var native, socketNr uint32
	switch runtime.GOARCH {
	case "amd64":
		native, socketNr = auditArchX86_64, 41
	case "arm64":
		native, socketNr = auditArchAarch64, 198
	default:
		return nil
	}
	const ioUringSetup = 425
	a := asm{ins: make([]syscall.SockFilter, 0, 24), fix: make([]fixup, 0, 16)}
	a.ld(offArch)
	a.jeq(native, next, lCompat)
	a.ld(offNr)
	a.jeq(socketNr, lSock, next)
	if runtime.GOARCH == "amd64" {
		a.jeq(socketNr|x32Bit, lSock, next)
		a.jeq(ioUringSetup|x32Bit, lDeny, next)
	}
	a.jeq(ioUringSetup, lDeny, lAllow)

	// 32-bit system calls from a 64-bit process: socketcall cannot be
	// looked into, so it is refused whole.
	a.label(lCompat)
	switch runtime.GOARCH {
	case "amd64":
		a.jeq(auditArchI386, next, lAllow)
		a.ld(offNr)
		a.jeq(102, lDeny, next) // socketcall
		a.jeq(359, lSock, next) // socket
		a.jeq(ioUringSetup, lDeny, lAllow)
	case "arm64":
		a.jeq(auditArchArm, next, lAllow)
		a.ld(offNr)
		a.jeq(281, lSock, next) // socket
		a.jeq(ioUringSetup, lDeny, lAllow)
	}

	a.label(lSock)
	a.ld(offArg0)
	for i, f := range families {
		to := next
		if i == len(families)-1 {
			to = lAllow
		}
		a.jeq(f, lDeny, to)
	}
	a.label(lAllow)
	a.ret(retAllow)
	a.label(lDeny)
	a.ret(retDeny)
	return a.done()
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
