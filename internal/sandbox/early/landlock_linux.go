//go:build linux

package early

import (
	"syscall"
	"unsafe"
)

// Landlock, straight through its three system calls (the same numbers on
// every architecture). The ruleset handles every access right the kernel's
// ABI knows, so that what the rules do not allow is refused; the rules
// are applied to the calling thread alone.

const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	createRulesetVersion = 1 << 0
	rulePathBeneath      = 1
)

// Filesystem access rights, by the ABI that brought them.
const (
	fsExecute     = 1 << 0
	fsWriteFile   = 1 << 1
	fsReadFile    = 1 << 2
	fsReadDir     = 1 << 3
	fsRemoveDir   = 1 << 4
	fsRemoveFile  = 1 << 5
	fsMakeChar    = 1 << 6
	fsMakeDir     = 1 << 7
	fsMakeReg     = 1 << 8
	fsMakeSock    = 1 << 9
	fsMakeFifo    = 1 << 10
	fsMakeBlock   = 1 << 11
	fsMakeSym     = 1 << 12
	fsRefer       = 1 << 13 // ABI 2
	fsTruncate    = 1 << 14 // ABI 3
	fsIoctlDev    = 1 << 15 // ABI 5
	fsResolveUnix = 1 << 16 // ABI 9

	fsRead  = fsExecute | fsReadFile | fsReadDir
	fsWrite = fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeChar | fsMakeDir | fsMakeReg |
		fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym | fsTruncate
	// fsFile are the rights that apply to a file (the rest are a
	// directory's).
	fsFile = fsExecute | fsWriteFile | fsTruncate | fsReadFile | fsIoctlDev
)

// rulesetAttr is struct landlock_ruleset_attr as of ABI 6; older kernels
// take it as long as the fields they do not know are zero.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which is packed:
// the kernel reads its 12 bytes, the Go struct's padding follows them.
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
}

// handled returns the rights the kernel's ABI knows, which the ruleset
// handles (refuses unless a rule allows).
func handled(abi int) rulesetAttr {
	var a rulesetAttr
	switch {
	case abi >= 9:
		a.handledFS = 1<<17 - 1
	case abi >= 5:
		a.handledFS = 1<<16 - 1
	case abi >= 3:
		a.handledFS = 1<<15 - 1
	case abi == 2:
		a.handledFS = 1<<14 - 1
	default:
		a.handledFS = 1<<13 - 1
	}
	switch {
	case abi >= 10:
		a.handledNet = 1<<4 - 1 // TCP bind and connect, UDP bind and send
	case abi >= 4:
		a.handledNet = 1<<2 - 1 // TCP bind and connect
	}
	if abi >= 6 {
		a.scoped = 1<<2 - 1 // abstract Unix sockets and signals
	}
	return a
}

// ABI returns the kernel's Landlock ABI version.
func ABI() (int, error) {
	v, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, createRulesetVersion)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}

// landlock builds pol's ruleset and restricts the calling thread with it.
func landlock(pol Policy, abi int) error {
	attr := handled(abi)
	if pol.Network {
		attr.handledNet = 0
	}
	fd, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return wrap("create the Landlock ruleset", e)
	}
	rs := int(fd)
	// Closed here rather than left to execve: a thread of darman's
	// confined in place (internal/sandbox's Start) does not execve.
	defer syscall.Close(rs)
	fs := attr.handledFS
	rw := uint64(fsRead | fsWrite)
	if abi >= 2 {
		rw |= fsRefer
	}
	rules := [...]struct {
		paths  []string
		access uint64
	}{
		{pol.ReadDirs, fsRead},
		{pol.ReadFiles, fsRead & fsFile},
		{pol.WriteDirs, rw},
		{pol.WriteFiles, rw & fsFile},
		{pol.Devices, fsRead | fsWrite | fsIoctlDev},
	}
	for _, r := range rules {
		for _, p := range r.paths {
			if err := addPath(rs, p, r.access&fs); err != nil {
				return err
			}
		}
	}
	if pol.UnixSockets && abi >= PathUnixABI {
		for _, p := range pol.WriteDirs {
			if err := addPath(rs, p, fsResolveUnix); err != nil {
				return err
			}
		}
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0); e != 0 {
		return wrap("enforce the Landlock ruleset", e)
	}
	return nil
}

// addPath allows access beneath path, skipping a path that does not
// exist. A path that is not a directory gets the file rights among
// access, as Landlock wants.
func addPath(rs int, path string, access uint64) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return wrap("open "+path, err)
	}
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFdcwd, uintptr(unsafe.Pointer(p)), oPath|syscall.O_CLOEXEC, 0, 0, 0)
	if e == syscall.ENOENT || e == syscall.ENOTDIR {
		return nil // gone since the policy was made
	}
	if e != 0 {
		return wrap("open "+path, e)
	}
	defer syscall.Close(int(fd))
	attr := pathBeneathAttr{allowed: access, parentFD: int32(fd)}
	_, _, e = syscall.RawSyscall6(sysLandlockAddRule, uintptr(rs), rulePathBeneath, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e == syscall.EINVAL && access&^fsFile != 0 {
		// Directory rights on a file (the policy saw a directory, or a
		// device list mixes both): the file's share.
		attr.allowed = access & fsFile
		_, _, e = syscall.RawSyscall6(sysLandlockAddRule, uintptr(rs), rulePathBeneath, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	}
	if e != 0 {
		return wrap("allow "+path+" in the Landlock ruleset", e)
	}
	return nil
}

// atFdcwd is AT_FDCWD (-100).
const atFdcwd = ^uintptr(99)

// scopeSignal is LANDLOCK_SCOPE_SIGNAL (ABI 6).
const scopeSignal = 1 << 1

// ThreadSignals reports whether a thread restricted by Landlock's signal
// scope may still signal the other threads of its process (kernels from
// 6.15 allow it; 6.12 to 6.14 may not): Go's runtime signals other threads
// to preempt their goroutines, also from a confined thread. It restricts
// the calling thread, which the caller must throw away (lock it and never
// unlock it), and is true where the kernel has no signal scope at all.
func ThreadSignals() bool {
	abi, err := ABI()
	if err != nil || abi < 6 {
		return true
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return false
	}
	attr := rulesetAttr{scoped: scopeSignal}
	fd, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return false
	}
	defer syscall.Close(int(fd))
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0); e != 0 {
		return false
	}
	// Signal 0 to the main thread: the permission check without a signal.
	pid := syscall.Getpid()
	return syscall.Tgkill(pid, pid, 0) == nil
}
