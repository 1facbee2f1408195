//go:build linux

package early

import (
	"encoding/binary"
	"os"
	"slices"
	"strconv"
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
		{"rt_tgsigqueueinfo(pid, other)", guarded, seccompCall{native, 297, [6]uint64{pid, other, 9}}, eperm},
		{"rt_tgsigqueueinfo(own)", guarded, seccompCall{native, 297, [6]uint64{2000, 2000, 9}}, allow},
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
		{"i386 tgkill(pid, other, SIGKILL)", guarded, seccompCall{i386, 270, [6]uint64{pid, other, 9}}, eperm},
		{"i386 tgkill(pid, other, SIGURG)", guarded, seccompCall{i386, 270, [6]uint64{pid, other, uint64(syscall.SIGURG)}}, allow},
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

		// Packet, raw and netlink sockets, whatever the network.
		{"socket(AF_PACKET)", guarded, seccompCall{native, 41, [6]uint64{afPacket, sockRaw}}, eacces},
		{"network on: socket(AF_PACKET, SOCK_DGRAM)", open, seccompCall{native, 41, [6]uint64{afPacket, syscall.SOCK_DGRAM}}, eacces},
		{"network on: socket(AF_PACKET | high half)", open, seccompCall{native, 41, [6]uint64{high | afPacket, sockRaw}}, eacces},
		{"network on: socket(AF_INET, SOCK_RAW)", open, seccompCall{native, 41, [6]uint64{inet, sockRaw, 1}}, eacces},
		{"network on: socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC)", open, seccompCall{native, 41, [6]uint64{syscall.AF_INET6, sockRaw | syscall.SOCK_CLOEXEC, 58}}, eacces},
		{"network on: socket(AF_INET, SOCK_PACKET)", open, seccompCall{native, 41, [6]uint64{inet, sockPacket}}, eacces},
		{"network on: socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK)", open, seccompCall{native, 41, [6]uint64{inet, syscall.SOCK_STREAM | syscall.SOCK_NONBLOCK}}, allow},
		{"network on: socket(AF_INET, SOCK_DGRAM, ICMP): ping", open, seccompCall{native, 41, [6]uint64{inet, syscall.SOCK_DGRAM, 1}}, allow},
		{"network on: socket(AF_NETLINK, NETLINK_ROUTE)", open, seccompCall{native, 41, [6]uint64{afNetlink, syscall.SOCK_RAW, netlinkRoute}}, allow},
		{"network on: socket(AF_NETLINK, NETLINK_AUDIT)", open, seccompCall{native, 41, [6]uint64{afNetlink, syscall.SOCK_RAW, 9}}, eacces},
		{"network on: socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", open, seccompCall{native, 41, [6]uint64{afNetlink, syscall.SOCK_DGRAM, 15}}, eacces},
		{"network off: socket(AF_NETLINK, NETLINK_ROUTE)", guarded, seccompCall{native, 41, [6]uint64{afNetlink, syscall.SOCK_RAW, netlinkRoute}}, eacces},
		{"x32 socket(AF_PACKET)", open, seccompCall{native, x32 | 41, [6]uint64{afPacket, sockRaw}}, eacces},
		{"i386 socket(AF_PACKET)", open, seccompCall{i386, 359, [6]uint64{afPacket, sockRaw}}, eacces},
		{"i386 socketcall, network on", open, seccompCall{i386, 102, [6]uint64{1}}, eacces},
		{"network on: io_uring_setup", open, seccompCall{native, 425, [6]uint64{}}, eacces},

		// The calls refused whole, on each path, on each architecture.
		{"mount", guarded, seccompCall{native, 165, [6]uint64{}}, eperm},
		{"helper: umount2", plain, seccompCall{native, 166, [6]uint64{}}, eperm},
		{"network on: pivot_root", open, seccompCall{native, 155, [6]uint64{}}, eperm},
		{"open_tree", open, seccompCall{native, 428, [6]uint64{}}, eperm},
		{"move_mount", open, seccompCall{native, 429, [6]uint64{}}, eperm},
		{"fsopen", open, seccompCall{native, 430, [6]uint64{}}, eperm},
		{"mount_setattr", open, seccompCall{native, 442, [6]uint64{}}, eperm},
		{"process_vm_readv", guarded, seccompCall{native, 310, [6]uint64{1}}, eperm},
		{"process_vm_writev", plain, seccompCall{native, 311, [6]uint64{1}}, eperm},
		{"keyctl", open, seccompCall{native, 250, [6]uint64{}}, eperm},
		{"add_key", open, seccompCall{native, 248, [6]uint64{}}, eperm},
		{"request_key", open, seccompCall{native, 249, [6]uint64{}}, eperm},
		{"bpf", open, seccompCall{native, 321, [6]uint64{}}, eperm},
		{"perf_event_open", open, seccompCall{native, 298, [6]uint64{}}, eperm},
		{"sethostname", open, seccompCall{native, 170, [6]uint64{}}, eperm},
		{"setdomainname", open, seccompCall{native, 171, [6]uint64{}}, eperm},
		{"syslog", open, seccompCall{native, 103, [6]uint64{}}, eperm},
		{"kexec_load", open, seccompCall{native, 246, [6]uint64{}}, eperm},
		{"kexec_file_load", open, seccompCall{native, 320, [6]uint64{}}, eperm},
		{"init_module", open, seccompCall{native, 175, [6]uint64{}}, eperm},
		{"finit_module", open, seccompCall{native, 313, [6]uint64{}}, eperm},
		{"delete_module", open, seccompCall{native, 176, [6]uint64{}}, eperm},
		{"reboot", open, seccompCall{native, 169, [6]uint64{}}, eperm},
		{"ptrace stays (Landlock and the PID namespace confine it)", open, seccompCall{native, 101, [6]uint64{16, 2000}}, allow},
		{"x32 process_vm_readv", open, seccompCall{native, x32 | 539, [6]uint64{}}, eperm},
		{"x32 mount", guarded, seccompCall{native, x32 | 165, [6]uint64{}}, eperm},
		{"x32 bpf", open, seccompCall{native, x32 | 321, [6]uint64{}}, eperm},
		{"i386 mount", open, seccompCall{i386, 21, [6]uint64{}}, eperm},
		{"i386 umount", guarded, seccompCall{i386, 22, [6]uint64{}}, eperm},
		{"i386 process_vm_readv", open, seccompCall{i386, 347, [6]uint64{}}, eperm},
		{"i386 keyctl", open, seccompCall{i386, 288, [6]uint64{}}, eperm},
		{"i386 sethostname", open, seccompCall{i386, 74, [6]uint64{}}, eperm},
		{"i386 bpf", open, seccompCall{i386, 357, [6]uint64{}}, eperm},
		{"i386 fsopen", open, seccompCall{i386, 430, [6]uint64{}}, eperm},
		{"i386 read", open, seccompCall{i386, 3, [6]uint64{}}, allow},
	})
}

// TestFilterKeepsDarmansThreadsAndGroup: with darman's threads named
// (1000, its main thread, 1001, 1002, and the confined 1003) and its
// process group (900), the filter refuses what would slow darman down or,
// without Landlock's signal scope, signal it: its threads' nice values,
// I/O priorities, affinity and scheduling; its group's and the user's
// priorities; kill of a thread, of its group, of every process; tkill of
// a thread; tgkill of a thread with anything but the runtime's SIGURG;
// F_SETOWN of its group. The same calls aimed at the command itself (0)
// or its own processes (2000, group 2000) are let through.
func TestFilterKeepsDarmansThreadsAndGroup(t *testing.T) {
	const (
		pid, other, other2, tid, pgid = 1000, 1001, 1002, 1003, 900
		own                           = 2000
		allow, eperm                  = retAllow, retEperm
		x32                           = x32Bit
		native, i386                  = auditArchX86_64, auditArchI386
	)
	neg := func(v int32) uint64 { return uint64(uint32(-v)) }
	g := guard{pid: pid, tid: tid, pgid: pgid, tasks: []uint32{pid, other, other2, tid}}
	guarded := program("amd64", []uint32{syscall.AF_INET}, g)
	plain := program("amd64", []uint32{syscall.AF_INET}, guard{})
	sig := uint64(syscall.SIGKILL)
	checkFilter(t, []filterCase{
		{"setpriority(PRIO_PROCESS, other)", guarded, seccompCall{native, 141, [6]uint64{prioProcess, other, 19}}, eperm},
		{"setpriority(PRIO_PROCESS, pid)", guarded, seccompCall{native, 141, [6]uint64{prioProcess, pid, 19}}, eperm},
		{"setpriority(PRIO_PROCESS, tid)", guarded, seccompCall{native, 141, [6]uint64{prioProcess, tid, 19}}, eperm},
		{"setpriority(PRIO_PROCESS, 0)", guarded, seccompCall{native, 141, [6]uint64{prioProcess, 0, 19}}, allow},
		{"setpriority(PRIO_PROCESS, own)", guarded, seccompCall{native, 141, [6]uint64{prioProcess, own, 19}}, allow},
		{"setpriority(PRIO_PGRP, darman's)", guarded, seccompCall{native, 141, [6]uint64{prioPgrp, pgid, 19}}, eperm},
		{"setpriority(PRIO_PGRP, 0)", guarded, seccompCall{native, 141, [6]uint64{prioPgrp, 0, 19}}, allow},
		{"setpriority(PRIO_PGRP, own)", guarded, seccompCall{native, 141, [6]uint64{prioPgrp, own, 19}}, allow},
		{"setpriority(PRIO_USER, 0)", guarded, seccompCall{native, 141, [6]uint64{prioUser, 0, 19}}, eperm},
		{"setpriority(PRIO_USER | high half, 0)", guarded, seccompCall{native, 141, [6]uint64{1<<32 | prioUser, 0, 19}}, eperm},
		{"ioprio_set(PROCESS, other)", guarded, seccompCall{native, 251, [6]uint64{ioprioProcess, other, 7}}, eperm},
		{"ioprio_set(PROCESS, 0)", guarded, seccompCall{native, 251, [6]uint64{ioprioProcess, 0, 7}}, allow},
		{"ioprio_set(PGRP, darman's)", guarded, seccompCall{native, 251, [6]uint64{ioprioPgrp, pgid, 7}}, eperm},
		{"ioprio_set(PGRP, own)", guarded, seccompCall{native, 251, [6]uint64{ioprioPgrp, own, 7}}, allow},
		{"ioprio_set(USER)", guarded, seccompCall{native, 251, [6]uint64{ioprioUser, 0, 7}}, eperm},
		{"sched_setaffinity(other)", guarded, seccompCall{native, 203, [6]uint64{other, 8, 0x7ffd0000}}, eperm},
		{"sched_setaffinity(pid)", guarded, seccompCall{native, 203, [6]uint64{pid, 8, 0x7ffd0000}}, eperm},
		{"sched_setaffinity(0)", guarded, seccompCall{native, 203, [6]uint64{0, 8, 0x7ffd0000}}, allow},
		{"sched_setaffinity(own)", guarded, seccompCall{native, 203, [6]uint64{own, 8, 0x7ffd0000}}, allow},
		{"sched_setscheduler(other2, SCHED_IDLE)", guarded, seccompCall{native, 144, [6]uint64{other2, 5, 0x7ffd0000}}, eperm},
		{"sched_setparam(pid)", guarded, seccompCall{native, 142, [6]uint64{pid, 0x7ffd0000}}, eperm},
		{"sched_setattr(other)", guarded, seccompCall{native, 314, [6]uint64{other, 0x7ffd0000, 0}}, eperm},
		{"sched_setattr(0)", guarded, seccompCall{native, 314, [6]uint64{0, 0x7ffd0000, 0}}, allow},
		{"kill(other)", guarded, seccompCall{native, 62, [6]uint64{other, sig}}, eperm},
		{"kill(-1)", guarded, seccompCall{native, 62, [6]uint64{neg(1), sig}}, eperm},
		{"kill(-pgid)", guarded, seccompCall{native, 62, [6]uint64{neg(pgid), sig}}, eperm},
		{"kill(-own group)", guarded, seccompCall{native, 62, [6]uint64{neg(own), sig}}, allow},
		{"kill(own)", guarded, seccompCall{native, 62, [6]uint64{own, sig}}, allow},
		{"tkill(other)", guarded, seccompCall{native, 200, [6]uint64{other, sig}}, eperm},
		{"tkill(own)", guarded, seccompCall{native, 200, [6]uint64{own, sig}}, allow},
		{"tgkill(pid, other, SIGKILL)", guarded, seccompCall{native, 234, [6]uint64{pid, other, sig}}, eperm},
		{"tgkill(pid, other, SIGURG)", guarded, seccompCall{native, 234, [6]uint64{pid, other, sigurg}}, allow},
		{"tgkill(own, own, SIGKILL)", guarded, seccompCall{native, 234, [6]uint64{own, own, sig}}, allow},
		{"rt_sigqueueinfo(other)", guarded, seccompCall{native, 129, [6]uint64{other, sig}}, eperm},
		{"pidfd_open(other)", guarded, seccompCall{native, 434, [6]uint64{other}}, eperm},
		{"fcntl(F_SETOWN, other)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, other}}, eperm},
		{"fcntl(F_SETOWN, -pgid)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, neg(pgid)}}, eperm},
		{"fcntl(F_SETOWN, -own)", guarded, seccompCall{native, 72, [6]uint64{3, fSetown, neg(own)}}, allow},
		{"x32 setpriority(PRIO_PROCESS, other)", guarded, seccompCall{native, x32 | 141, [6]uint64{prioProcess, other, 19}}, eperm},
		{"x32 sched_setaffinity(other)", guarded, seccompCall{native, x32 | 203, [6]uint64{other, 8, 0x10000}}, eperm},
		{"x32 ioprio_set(USER)", guarded, seccompCall{native, x32 | 251, [6]uint64{ioprioUser, 0, 7}}, eperm},
		{"i386 setpriority(PRIO_USER)", guarded, seccompCall{i386, 97, [6]uint64{prioUser, 0, 19}}, eperm},
		{"i386 sched_setaffinity(other)", guarded, seccompCall{i386, 241, [6]uint64{other, 4, 0x10000}}, eperm},
		{"i386 sched_setattr(pid)", guarded, seccompCall{i386, 351, [6]uint64{pid, 0x10000, 0}}, eperm},
		{"i386 ioprio_set(PROCESS, other)", guarded, seccompCall{i386, 289, [6]uint64{ioprioProcess, other, 7}}, eperm},
		{"i386 kill(-1)", guarded, seccompCall{i386, 37, [6]uint64{neg(1), sig}}, eperm},
		// Through the helper, in no domain with darman: untouched.
		{"helper: setpriority(PRIO_USER)", plain, seccompCall{native, 141, [6]uint64{prioUser, 0, 19}}, allow},
		{"helper: sched_setaffinity(other)", plain, seccompCall{native, 203, [6]uint64{other, 8, 0x7ffd0000}}, allow},
	})
	// darman's many threads: the last one named is refused, and the
	// jumps still fit.
	many := guard{pid: pid, tid: tid, pgid: pgid}
	for i := uint32(0); i < 400; i++ {
		many.tasks = append(many.tasks, 5000+i)
	}
	prog := program("amd64", nil, many)
	last := uint64(5000 + maxTasks - 3) // named() puts tid and pid first
	checkFilter(t, []filterCase{
		{"sched_setaffinity(the last thread named)", prog, seccompCall{native, 203, [6]uint64{last, 8, 0x7ffd0000}}, eperm},
		{"sched_setaffinity(a thread past the bound)", prog, seccompCall{native, 203, [6]uint64{5399, 8, 0x7ffd0000}}, allow},
		{"kill(pid)", prog, seccompCall{native, 62, [6]uint64{pid, sig}}, eperm},
	})
}

// TestThreadGuardNamesTheThreads: the guard of a confined thread names
// every thread the process has then.
func TestThreadGuardNamesTheThreads(t *testing.T) {
	g := threadGuard()
	if g.pid != uint32(syscall.Getpid()) || g.tid != uint32(syscall.Gettid()) || g.pgid != uint32(syscall.Getpgrp()) {
		t.Fatalf("guard = %+v", g)
	}
	var want []uint32
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n, _ := strconv.Atoi(e.Name())
		want = append(want, uint32(n))
	}
	for _, w := range want {
		if !slices.Contains(g.tasks, w) {
			t.Errorf("thread %d is not in the guard's %v", w, g.tasks)
		}
	}
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
		{"setpriority(PRIO_USER)", guarded, seccompCall{native, 140, [6]uint64{prioUser, 0, 19}}, retEperm},
		{"setpriority(PRIO_PROCESS, pid)", guarded, seccompCall{native, 140, [6]uint64{prioProcess, pid, 19}}, retEperm},
		{"setpriority(PRIO_PROCESS, 0)", guarded, seccompCall{native, 140, [6]uint64{prioProcess, 0, 19}}, retAllow},
		{"ioprio_set(PROCESS, pid)", guarded, seccompCall{native, 30, [6]uint64{ioprioProcess, pid, 7}}, retEperm},
		{"sched_setaffinity(pid)", guarded, seccompCall{native, 122, [6]uint64{pid, 8, 0x7ffd0000}}, retEperm},
		{"sched_setscheduler(tid)", guarded, seccompCall{native, 119, [6]uint64{tid, 5, 0x7ffd0000}}, retEperm},
		{"sched_setparam(pid)", guarded, seccompCall{native, 118, [6]uint64{pid, 0x7ffd0000}}, retEperm},
		{"sched_setattr(pid)", guarded, seccompCall{native, 274, [6]uint64{pid, 0x7ffd0000, 0}}, retEperm},
		{"sched_setattr(0)", guarded, seccompCall{native, 274, [6]uint64{0, 0x7ffd0000, 0}}, retAllow},
		{"arm setpriority(PRIO_USER)", guarded, seccompCall{arm, 97, [6]uint64{prioUser, 0, 19}}, retEperm},
		{"arm ioprio_set(USER)", guarded, seccompCall{arm, 314, [6]uint64{ioprioUser, 0, 7}}, retEperm},
		{"arm sched_setaffinity(pid)", guarded, seccompCall{arm, 241, [6]uint64{pid, 4, 0x10000}}, retEperm},
		{"arm sched_setattr(tid)", guarded, seccompCall{arm, 380, [6]uint64{tid, 0x10000, 0}}, retEperm},
		{"helper: kill(tid)", plain, seccompCall{native, 129, [6]uint64{tid, 9}}, retAllow},
		{"helper: ioctl(TIOCSTI)", plain, seccompCall{native, 29, [6]uint64{0, tiocsti}}, retEperm},
		{"socket(AF_PACKET)", plain, seccompCall{native, 198, [6]uint64{afPacket, sockRaw}}, retDeny},
		{"socket(AF_NETLINK)", plain, seccompCall{native, 198, [6]uint64{afNetlink, sockRaw}}, retDeny},
		{"arm socket(AF_PACKET)", plain, seccompCall{arm, 281, [6]uint64{afPacket, sockRaw}}, retDeny},
		{"mount", plain, seccompCall{native, 40, [6]uint64{}}, retEperm},
		{"umount2", guarded, seccompCall{native, 39, [6]uint64{}}, retEperm},
		{"process_vm_readv", plain, seccompCall{native, 270, [6]uint64{}}, retEperm},
		{"bpf", plain, seccompCall{native, 280, [6]uint64{}}, retEperm},
		{"keyctl", plain, seccompCall{native, 219, [6]uint64{}}, retEperm},
		{"sethostname", plain, seccompCall{native, 161, [6]uint64{}}, retEperm},
		{"syslog", plain, seccompCall{native, 116, [6]uint64{}}, retEperm},
		{"finit_module", plain, seccompCall{native, 273, [6]uint64{}}, retEperm},
		{"kexec_file_load", plain, seccompCall{native, 294, [6]uint64{}}, retEperm},
		{"fsmount", plain, seccompCall{native, 432, [6]uint64{}}, retEperm},
		{"arm mount", plain, seccompCall{arm, 21, [6]uint64{}}, retEperm},
		{"arm process_vm_writev", plain, seccompCall{arm, 377, [6]uint64{}}, retEperm},
		{"arm perf_event_open", guarded, seccompCall{arm, 364, [6]uint64{}}, retEperm},
		{"arm kexec_file_load", plain, seccompCall{arm, 401, [6]uint64{}}, retEperm},
		{"arm read", plain, seccompCall{arm, 3, [6]uint64{}}, retAllow},
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
