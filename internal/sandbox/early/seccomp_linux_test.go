//go:build linux

package early

import (
	"encoding/binary"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompCall is one system call as the filter sees it.
type seccompCall struct {
	arch, nr uint32
	args     [6]uint64
}

// data lays c out as struct seccomp_data on a little-endian machine. The
// BPF VM loads words big-endian, so each 32-bit word is stored so that it
// loads as the kernel's native load would.
func (c seccompCall) data() []byte {
	words := []uint32{c.nr, c.arch, 0, 0}
	for _, a := range c.args {
		words = append(words, uint32(a), uint32(a>>32))
	}
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.BigEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// TestFilterDecides runs the program the filter makes for x86_64 in a
// BPF VM over the system calls of every architecture it knows there
// (native, x32, i386), most of which a test cannot make here by effect:
// darman's pid 1000, its confined thread 1003, another thread 1001.
func TestFilterDecides(t *testing.T) {
	const (
		pid, tid, other = 1000, 1003, 1001
		allow           = retAllow
		eperm           = retEperm
		eacces          = retDeny
		enosys          = retEnosys
		high            = 1 << 32
		x32             = x32Bit
		native, i386    = auditArchX86_64, auditArchI386
	)
	inet := uint64(syscall.AF_INET)
	guarded := program("amd64", []uint32{syscall.AF_INET, syscall.AF_INET6, afVsock}, guard{pid: pid, tid: tid})
	plain := program("amd64", []uint32{syscall.AF_INET}, guard{})
	open := program("amd64", nil, guard{})
	checkFilter(t, []filterCase{
		{"kill(tid)", guarded, seccompCall{native, 62, [6]uint64{tid, 9}}, eperm},
		{"kill(pid)", guarded, seccompCall{native, 62, [6]uint64{pid, 9}}, eperm},
		{"kill(tid | high half)", guarded, seccompCall{native, 62, [6]uint64{high | tid, 9}}, eperm},
		{"kill(another process)", guarded, seccompCall{native, 62, [6]uint64{2000, 9}}, allow},
		{"kill(0)", guarded, seccompCall{native, 62, [6]uint64{0, 15}}, allow},
		{"tkill(tid)", guarded, seccompCall{native, 200, [6]uint64{tid, 9}}, eperm},
		{"tkill(other)", guarded, seccompCall{native, 200, [6]uint64{other, 9}}, allow},
		{"tgkill(pid, tid)", guarded, seccompCall{native, 234, [6]uint64{pid, tid, 9}}, eperm},
		{"tgkill(pid, tid | high half)", guarded, seccompCall{native, 234, [6]uint64{pid, 7*high | tid, 9}}, eperm},
		{"tgkill(pid, other): the runtime's preemption", guarded, seccompCall{native, 234, [6]uint64{pid, other, uint64(syscall.SIGURG)}}, allow},
		{"rt_sigqueueinfo(tid)", guarded, seccompCall{native, 129, [6]uint64{tid, 9}}, eperm},
		{"rt_sigqueueinfo(pid)", guarded, seccompCall{native, 129, [6]uint64{pid, 9}}, eperm},
		{"rt_tgsigqueueinfo(pid, tid)", guarded, seccompCall{native, 297, [6]uint64{pid, tid, 9}}, eperm},
		{"rt_tgsigqueueinfo(pid, other)", guarded, seccompCall{native, 297, [6]uint64{pid, other, 9}}, allow},
		{"pidfd_open(pid)", guarded, seccompCall{native, 434, [6]uint64{pid}}, eperm},
		{"pidfd_open(tid, PIDFD_THREAD)", guarded, seccompCall{native, 434, [6]uint64{tid, syscall.O_EXCL}}, eperm},
		{"pidfd_open(own child)", guarded, seccompCall{native, 434, [6]uint64{2000}}, allow},
		{"pidfd_send_signal", guarded, seccompCall{native, 424, [6]uint64{3, 9}}, enosys},
		{"fcntl(F_SETOWN, tid)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, tid}}, eperm},
		{"fcntl(F_SETOWN, pid)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, pid}}, eperm},
		{"fcntl(F_SETOWN, own)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, 2000}}, allow},
		{"fcntl(F_SETOWN_EX)", guarded, seccompCall{native, 72, [6]uint64{3, fSetownEx, 0x7ffd0000}}, eperm},
		{"fcntl(F_GETFL)", guarded, seccompCall{native, 72, [6]uint64{3, syscall.F_GETFL}}, allow},
		{"ioctl(FIOSETOWN)", guarded, seccompCall{native, 16, [6]uint64{3, fioSetown}}, eperm},
		{"ioctl(SIOCSPGRP)", guarded, seccompCall{native, 16, [6]uint64{3, siocSpgrp}}, eperm},
		{"ioctl(TIOCSTI)", guarded, seccompCall{native, 16, [6]uint64{0, tiocsti}}, eperm},
		{"ioctl(TIOCSTI | high half)", guarded, seccompCall{native, 16, [6]uint64{0, high | tiocsti}}, eperm},
		{"ioctl(TIOCLINUX)", guarded, seccompCall{native, 16, [6]uint64{0, tioclinux}}, eperm},
		{"ioctl(TCGETS)", guarded, seccompCall{native, 16, [6]uint64{0, syscall.TCGETS}}, allow},
		{"prlimit64(self)", guarded, seccompCall{native, 302, [6]uint64{0, 7, 0x7ffd0000}}, allow},
		{"prlimit64(another, new)", guarded, seccompCall{native, 302, [6]uint64{2000, 0, 0x7ffd0000}}, eperm},
		{"prlimit64(another, new above 4 GiB)", guarded, seccompCall{native, 302, [6]uint64{2000, 0, high}}, eperm},
		{"prlimit64(another, read only)", guarded, seccompCall{native, 302, [6]uint64{2000, 7, 0, 0x7ffd0000}}, allow},
		{"socket(AF_INET)", guarded, seccompCall{native, 41, [6]uint64{inet}}, eacces},
		{"socket(AF_UNIX)", guarded, seccompCall{native, 41, [6]uint64{syscall.AF_UNIX}}, allow},
		{"io_uring_setup", guarded, seccompCall{native, 425, [6]uint64{}}, eacces},
		{"read", guarded, seccompCall{native, 0, [6]uint64{0}}, allow},

		{"x32 kill(tid)", guarded, seccompCall{native, x32 | 62, [6]uint64{tid, 9}}, eperm},
		{"x32 tgkill(pid, tid)", guarded, seccompCall{native, x32 | 234, [6]uint64{pid, tid, 9}}, eperm},
		{"x32 rt_sigqueueinfo(tid)", guarded, seccompCall{native, x32 | 524, [6]uint64{tid, 9}}, eperm},
		{"x32 rt_tgsigqueueinfo(pid, tid)", guarded, seccompCall{native, x32 | 536, [6]uint64{pid, tid, 9}}, eperm},
		{"x32 ioctl(FIOSETOWN)", guarded, seccompCall{native, x32 | 514, [6]uint64{3, fioSetown}}, eperm},
		{"x32 pidfd_send_signal", guarded, seccompCall{native, x32 | 424, [6]uint64{3, 9}}, enosys},
		{"x32 socket(AF_INET)", guarded, seccompCall{native, x32 | 41, [6]uint64{inet}}, eacces},
		{"x32 io_uring_setup", guarded, seccompCall{native, x32 | 425, [6]uint64{}}, eacces},
		{"x32 read", guarded, seccompCall{native, x32 | 0, [6]uint64{0}}, allow},

		{"i386 kill(tid)", guarded, seccompCall{i386, 37, [6]uint64{tid, 9}}, eperm},
		{"i386 tkill(tid)", guarded, seccompCall{i386, 238, [6]uint64{tid, 9}}, eperm},
		{"i386 tgkill(pid, tid)", guarded, seccompCall{i386, 270, [6]uint64{pid, tid, 9}}, eperm},
		{"i386 tgkill(pid, other)", guarded, seccompCall{i386, 270, [6]uint64{pid, other, 9}}, allow},
		{"i386 rt_tgsigqueueinfo(pid, tid)", guarded, seccompCall{i386, 335, [6]uint64{pid, tid, 9}}, eperm},
		{"i386 fcntl64(F_SETOWN, tid)", guarded, seccompCall{i386, 221, [6]uint64{3, fSetown, tid}}, eperm},
		{"i386 fcntl(F_SETOWN_EX)", guarded, seccompCall{i386, 55, [6]uint64{3, fSetownEx, 0x10000}}, eperm},
		{"i386 prlimit64(another, new)", guarded, seccompCall{i386, 340, [6]uint64{2000, 0, 0x10000}}, eperm},
		{"i386 socketcall", guarded, seccompCall{i386, 102, [6]uint64{1}}, eacces},
		{"i386 socket(AF_INET)", guarded, seccompCall{i386, 359, [6]uint64{inet}}, eacces},
		{"i386 kill(0)", guarded, seccompCall{i386, 37, [6]uint64{0, 15}}, allow},
		{"another architecture", guarded, seccompCall{auditArchAarch64, 129, [6]uint64{tid, 9}}, allow},

		// Without a guard (the helper's command, which is in no domain
		// with darman): signals are Landlock's; prlimit64 stays refused.
		{"helper: kill(tid)", plain, seccompCall{native, 62, [6]uint64{tid, 9}}, allow},
		{"helper: pidfd_send_signal", plain, seccompCall{native, 424, [6]uint64{3, 9}}, allow},
		{"helper: prlimit64(another, new)", plain, seccompCall{native, 302, [6]uint64{2000, 0, 0x7ffd0000}}, eperm},
		{"helper: ioctl(TIOCSTI)", plain, seccompCall{native, 16, [6]uint64{0, tiocsti}}, eperm},
		{"helper: i386 ioctl(TIOCSTI)", plain, seccompCall{i386, 54, [6]uint64{0, tiocsti}}, eperm},
		{"helper: x32 ioctl(TIOCSTI)", plain, seccompCall{native, x32 | 514, [6]uint64{0, tiocsti}}, eperm},
		{"helper: vhangup", plain, seccompCall{native, 153, [6]uint64{}}, eperm},
		{"helper: i386 vhangup", plain, seccompCall{i386, 111, [6]uint64{}}, eperm},
		{"helper: x32 vhangup", plain, seccompCall{native, x32 | 153, [6]uint64{}}, eperm},
		{"helper: ioctl(FIOSETOWN)", plain, seccompCall{native, 16, [6]uint64{3, fioSetown}}, allow},
		{"helper: ioctl(TCGETS)", plain, seccompCall{native, 16, [6]uint64{0, syscall.TCGETS}}, allow},
		{"helper: socket(AF_INET)", plain, seccompCall{native, 41, [6]uint64{inet}}, eacces},
		{"network on: socket(AF_INET)", open, seccompCall{native, 41, [6]uint64{inet}}, allow},
		{"network on: prlimit64(another, new)", open, seccompCall{native, 302, [6]uint64{2000, 0, 0x7ffd0000}}, eperm},
	})
}

// TestFilterDecidesOnArm64 is TestFilterDecides for aarch64 and the
// 32-bit arm calls an arm64 process can make.
func TestFilterDecidesOnArm64(t *testing.T) {
	const (
		pid, tid, other = 1000, 1003, 1001
		native, arm     = auditArchAarch64, auditArchArm
	)
	inet := uint64(syscall.AF_INET)
	guarded := program("arm64", []uint32{syscall.AF_INET, syscall.AF_INET6, afVsock}, guard{pid: pid, tid: tid})
	plain := program("arm64", []uint32{syscall.AF_INET}, guard{})
	checkFilter(t, []filterCase{
		{"kill(tid)", guarded, seccompCall{native, 129, [6]uint64{tid, 9}}, retEperm},
		{"kill(pid)", guarded, seccompCall{native, 129, [6]uint64{pid, 9}}, retEperm},
		{"kill(another)", guarded, seccompCall{native, 129, [6]uint64{2000, 9}}, retAllow},
		{"tkill(tid)", guarded, seccompCall{native, 130, [6]uint64{tid, 9}}, retEperm},
		{"tgkill(pid, tid)", guarded, seccompCall{native, 131, [6]uint64{pid, tid, 9}}, retEperm},
		{"tgkill(pid, other)", guarded, seccompCall{native, 131, [6]uint64{pid, other, 23}}, retAllow},
		{"rt_sigqueueinfo(tid)", guarded, seccompCall{native, 138, [6]uint64{tid, 9}}, retEperm},
		{"rt_tgsigqueueinfo(pid, tid)", guarded, seccompCall{native, 240, [6]uint64{pid, tid, 9}}, retEperm},
		{"pidfd_open(tid)", guarded, seccompCall{native, 434, [6]uint64{tid, syscall.O_EXCL}}, retEperm},
		{"pidfd_send_signal", guarded, seccompCall{native, 424, [6]uint64{3, 9}}, retEnosys},
		{"fcntl(F_SETOWN, tid)", guarded, seccompCall{native, 25, [6]uint64{3, fSetown, tid}}, retEperm},
		{"ioctl(TIOCSTI)", guarded, seccompCall{native, 29, [6]uint64{0, tiocsti}}, retEperm},
		{"prlimit64(another, new)", guarded, seccompCall{native, 261, [6]uint64{2000, 0, 0x7ffd0000}}, retEperm},
		{"vhangup", guarded, seccompCall{native, 58, [6]uint64{}}, retEperm},
		{"socket(AF_INET)", guarded, seccompCall{native, 198, [6]uint64{inet}}, retDeny},
		{"read", guarded, seccompCall{native, 63, [6]uint64{0}}, retAllow},
		{"arm kill(tid)", guarded, seccompCall{arm, 37, [6]uint64{tid, 9}}, retEperm},
		{"arm tgkill(pid, tid)", guarded, seccompCall{arm, 268, [6]uint64{pid, tid, 9}}, retEperm},
		{"arm tgkill(pid, other)", guarded, seccompCall{arm, 268, [6]uint64{pid, other, 23}}, retAllow},
		{"arm rt_tgsigqueueinfo(pid, tid)", guarded, seccompCall{arm, 363, [6]uint64{pid, tid, 9}}, retEperm},
		{"arm fcntl64(F_SETOWN_EX)", guarded, seccompCall{arm, 221, [6]uint64{3, fSetownEx, 0x10000}}, retEperm},
		{"arm prlimit64(another, new)", guarded, seccompCall{arm, 369, [6]uint64{2000, 0, 0x10000}}, retEperm},
		{"arm vhangup", guarded, seccompCall{arm, 111, [6]uint64{}}, retEperm},
		{"arm socket(AF_INET)", guarded, seccompCall{arm, 281, [6]uint64{inet}}, retDeny},
		{"helper: kill(tid)", plain, seccompCall{native, 129, [6]uint64{tid, 9}}, retAllow},
		{"helper: ioctl(TIOCSTI)", plain, seccompCall{native, 29, [6]uint64{0, tiocsti}}, retEperm},
	})
}

// filterCase is a system call and what a program must answer it.
type filterCase struct {
	name string
	prog []syscall.SockFilter
	call seccompCall
	want uint32
}

func checkFilter(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		if got := run(t, c.prog, c.call); got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
		}
	}
}

// run runs prog over call in a BPF VM and returns its answer.
func run(t *testing.T, prog []syscall.SockFilter, call seccompCall) uint32 {
	t.Helper()
	raw := make([]bpf.RawInstruction, len(prog))
	for i, in := range prog {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("the program does not disassemble: %v", raw)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("the program is not valid BPF: %v", err)
	}
	got, err := vm.Run(call.data())
	if err != nil {
		t.Fatal(err)
	}
	return uint32(got)
}
