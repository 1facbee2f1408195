//go:build linux

package early

import (
	"errors"
	"syscall"
	"unsafe"
)

// The helper runs when darman is started as "darman sandbox-exec …". Go
// initializes every package a binary imports before main, in import-path
// order among those whose own imports are done, and darman imports a lot
// (the providers' SDKs alone take milliseconds). This package imports
// only syscall and unicode/utf8, so its initializer runs right after
// syscall's, before os and before the 130-odd initializers that sort
// after it: when darman was started as its own sandbox helper, the helper
// runs here and execve's the shell, and the rest of darman is never
// initialized. Without os, it reads its arguments from /proc/self/cmdline.
//
// This is the one side effect of an init in darman, on purpose. Where it
// cannot run (no /proc, a policy asking to re-execute in a namespace of
// its own), it returns and darman's own "sandbox-exec" subcommand runs the
// same helper through internal/sandbox.
func init() {
	args, ok := cmdlineArgs()
	if !ok {
		return
	}
	if len(args) > 0 && args[0] == "--probe" {
		syscall.Exit(Probe(args[1:]))
	}
	if len(args) > 0 && (args[0] == Hold || args[0] == Init) {
		return // the namespace holder and the PID namespace's init are darman's (internal/sandbox)
	}
	pol, code, msg := Parse(args, false)
	if code != 0 {
		fail(code, msg)
	}
	if pol.Reexec {
		// os/exec's work: internal/sandbox does it, reading the policy
		// again (so a policy file stays until then).
		return
	}
	removePolicyFile(args)
	// The main goroutine runs the initializers locked to the main thread,
	// so everything from here to execve happens on one thread, without
	// runtime.LockOSThread (which would start one more thread for execve
	// to stop).
	code, msg = Run(pol, args[1], args[2:])
	fail(code, msg)
}

func fail(code int, msg string) {
	if msg != "" {
		b := []byte(msg)
		syscall.Write(2, b)
	}
	syscall.Exit(code)
}

// Subcommand is the word darman is re-executed with, before the policy.
const Subcommand = "sandbox-exec"

// Hold, after Subcommand, starts the namespace holder of internal/sandbox
// (holder_linux.go), which this package leaves to darman.
const Hold = "--hold"

// Init, after Subcommand, starts the init of the commands' PID namespace
// (internal/sandbox's pidns_linux.go), which this package leaves to
// darman.
const Init = "--init"

// cmdlineArgs returns the arguments after "sandbox-exec" when it is this
// process's first argument, read from /proc/self/cmdline.
func cmdlineArgs() ([]string, bool) {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	// The first read shows whether this is the helper; darman's other
	// starts stop there.
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		buf = buf[:len(buf)+n]
		if n == 0 {
			break
		}
		if known, helper := isHelper(buf); known && !helper {
			return nil, false
		}
	}
	if _, helper := isHelper(buf); !helper {
		return nil, false
	}
	// argv[0] NUL "sandbox-exec" NUL the rest, each NUL-terminated.
	s := string(buf)
	i := indexByte(s, 0) + 1 + len(Subcommand) + 1
	var args []string
	for i < len(s) {
		j := indexByte(s[i:], 0)
		if j < 0 {
			j = len(s) - i
		}
		args = append(args, s[i:i+j])
		i += j + 1
	}
	return args, true
}

// isHelper reports whether the start of a command line shows the helper:
// known is false until enough of it was read to tell.
func isHelper(b []byte) (known, helper bool) {
	i := 0
	for i < len(b) && b[i] != 0 {
		i++
	}
	if i == len(b) {
		return false, false
	}
	rest := b[i+1:]
	word := Subcommand + "\x00"
	if len(rest) < len(word) {
		return string(rest) != word[:len(rest)], false
	}
	return true, string(rest[:len(word)]) == word
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Exit codes of the helper when it cannot run the command: 125 when the
// sandbox could not be set up, 126 and 127 as a shell has them.
const (
	CodeSetup    = 125
	CodeNoExec   = 126
	CodeNotFound = 127
)

const prefix = "darman sandbox-exec: "

// Parse checks the helper's arguments, "POLICY PATH ARGV...", and reads
// the policy, from the argument or, as "@FILE", from a file, which it
// removes once read when remove is true. code is non-zero, with msg saying
// why, when it cannot.
func Parse(args []string, remove bool) (pol Policy, code int, msg string) {
	if len(args) < 3 {
		return Policy{}, CodeSetup, prefix + "usage: darman sandbox-exec POLICY PATH ARGV... (darman runs this itself)\n"
	}
	js := args[0]
	if len(js) > 0 && js[0] == '@' {
		b, err := readFile(js[1:])
		if err != nil {
			return Policy{}, CodeSetup, prefix + "bad policy: " + js[1:] + ": " + err.Error() + "\n"
		}
		if remove {
			syscall.Unlink(js[1:])
		}
		js = string(b)
	}
	pol, err := Decode(js)
	if err != nil {
		return Policy{}, CodeSetup, prefix + "bad policy: " + err.Error() + "\n"
	}
	return pol, 0, ""
}

// removePolicyFile removes the policy file args name, if any: the
// sandbox's own directory does not keep one per command.
func removePolicyFile(args []string) {
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '@' {
		syscall.Unlink(args[0][1:])
	}
}

func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	b := make([]byte, 0, st.Size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// Run confines the calling thread by pol and execve's path with argv and
// the process's environment. It returns only on failure, with the exit
// code and what went wrong. The caller must be locked to its thread: the
// restrictions are the thread's, and execve keeps them (after execve only
// that thread is left, and what it starts inherits them).
func Run(pol Policy, path string, argv []string) (code int, msg string) {
	if err := Confine(pol); err != nil {
		return CodeSetup, prefix + "the sandbox could not be set up: " + err.Error() + "\n"
	}
	err := syscall.Exec(path, argv, syscall.Environ())
	msg = prefix + "run " + path + ": " + err.Error() + "\n"
	if errors.Is(err, syscall.ENOENT) {
		return CodeNotFound, msg
	}
	return CodeNoExec, msg
}

// Probe is "darman sandbox-exec --probe [UID GID]", started in a user and
// mount namespace of its own: it exits 0 when it can mount there and make
// the read-only view (CodeNoView when only the former). With
// UID and GID it maps them first (see MapSelf).
func Probe(ids []string) int {
	if len(ids) == 2 {
		if err := MapSelf(ids[0], ids[1]); err != nil {
			syscall.Write(2, []byte(prefix+err.Error()+"\n"))
			return 1
		}
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		syscall.Write(2, []byte(prefix+err.Error()+"\n"))
		return 1
	}
	if err := ViewWorks(); err != nil {
		syscall.Write(2, []byte(prefix+err.Error()+"\n"))
		return CodeNoView
	}
	// Started as a PID namespace's first process: its /proc can be
	// mounted (a kernel may refuse one where /proc is partly hidden).
	if syscall.Getpid() == 1 {
		if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			syscall.Write(2, []byte(prefix+"mount a PID namespace's /proc: "+err.Error()+"\n"))
			return CodeNoPID
		}
	}
	return 0
}

// CodeNoPID is the probe's exit code when it has the read-only view but
// cannot mount its PID namespace's /proc.
const CodeNoPID = 4

// CodeNoView is the probe's exit code when a namespace can be made but
// the kernel lacks the mount API the read-only view needs.
const CodeNoView = 3

// MapSelf maps the user and group uid and gid (the caller's own outside)
// to themselves in the user namespace the calling process was started in
// without maps. darman cannot write them for it once it is non-dumpable
// (its children's /proc files are root's then, which a user other than
// root may not open), so a process of such a user started with a new
// user namespace, and CAP_SYS_ADMIN in its ambient set to write them and
// to mount, does it itself.
func MapSelf(uid, gid string) error {
	for _, w := range [...][2]string{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/gid_map", gid + " " + gid + " 1\n"},
		{"/proc/self/uid_map", uid + " " + uid + " 1\n"},
	} {
		fd, err := syscall.Open(w[0], syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return wrap("open "+w[0], err)
		}
		_, err = syscall.Write(fd, []byte(w[1]))
		syscall.Close(fd)
		if err != nil {
			return wrap("write "+w[0], err)
		}
	}
	return nil
}

// Confine applies pol to the calling thread: the read-only view and the
// read-only paths (in the helper's own mount namespace, when pol.NS), no
// capability left for the command, no_new_privs, the seccomp filter,
// then the Landlock ruleset.
func Confine(pol Policy) error { return confine(pol, guard{}) }

// ConfineThread is Confine for a thread of a process that goes on (darman
// confining one of its threads to start a command from it): the seccomp
// filter also keeps what the thread starts from signalling the thread or
// its process (see guard).
func ConfineThread(pol Policy) error {
	return confine(pol, threadGuard())
}

func confine(pol Policy, g guard) error {
	if pol.NS {
		if err := protect(pol); err != nil {
			return err
		}
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return wrap("set no_new_privs", e)
	}
	abi, err := ABI()
	if err != nil || abi < 1 {
		return wrap("the kernel offers no Landlock", err)
	}
	var families []uint32
	if !pol.Network {
		families = append(families, syscall.AF_INET, syscall.AF_INET6, afVsock)
	}
	if !pol.UnixSockets && abi < PathUnixABI {
		families = append(families, syscall.AF_UNIX)
	}
	if err := installSeccomp(filter(families, g)); err != nil {
		return wrap("install the seccomp filter", err)
	}
	return landlock(pol, abi)
}

// dropCapabilities leaves the command no capability, whoever runs it:
// the ambient set (a helper of a user other than root was given
// CAP_SYS_ADMIN there to mount in its namespace) is cleared, the
// bounding set, from which execve gives root (uid 0) its capabilities,
// emptied, and the inheritable set cleared. The calling thread keeps its
// own effective ones until it execve's (or forks the command, which
// execve's). Emptying the bounding set needs CAP_SETPCAP: a thread
// without it (a user other than root) has no capability execve could
// give, and no_new_privs keeps setuid and file capabilities from giving
// any.
func dropCapabilities() error {
	syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0)
	for c := uintptr(0); c < 64; c++ {
		_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0)
		if e == syscall.EINVAL {
			break // past the kernel's last capability
		}
		if e == syscall.EPERM && syscall.Geteuid() != 0 {
			break
		}
		if e != 0 {
			return wrap("drop the capabilities' bounding set", e)
		}
	}
	hdr := capHeader{version: linuxCapabilityVersion3}
	var data [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return wrap("read the capabilities", e)
	}
	if data[0].inheritable|data[1].inheritable != 0 {
		data[0].inheritable, data[1].inheritable = 0, 0
		if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
			return wrap("clear the inheritable capabilities", e)
		}
	}
	return nil
}

// capHeader and capData are struct __user_cap_header_struct and
// __user_cap_data_struct.
type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective, permitted, inheritable uint32
}

const linuxCapabilityVersion3 = 0x20080522

// protect makes pol's read-only paths read-only and pins its directories,
// in the private mount namespace the helper (or thread) was started in;
// with pol.View, everything else but the write trees is read-only first.
func protect(pol Policy) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return wrap("make the mounts private", err)
	}
	if pol.View {
		// The working directory of a helper was entered before the
		// mounts: entered again, it is the writable clone where there
		// is one.
		cwd, cwdErr := syscall.Getwd()
		if err := readOnlyView(pol); err != nil {
			return err
		}
		if cwdErr == nil {
			syscall.Chdir(cwd)
		}
	}
	for _, d := range pol.Pin {
		if err := Bind(d, false); err != nil {
			return err
		}
	}
	for _, p := range pol.ReadOnly {
		if err := Bind(p, true); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyView makes every mount of the calling thread's (private) mount
// namespace read-only but for pol's write trees and files, and mounts a
// tmpfs of the command's own on /dev/shm. A read-only mount refuses what
// Landlock does not look at (chmod, chown, utimes, extended attributes,
// on files anywhere) with EROFS, and whoever the command runs as. The
// write trees are cloned (with the mounts beneath them) before the rest
// is made read-only, and the clones put back over them after, so that
// they stay as writable as they were; parents go first, so a tree inside
// another stays on top.
func readOnlyView(pol Policy) error {
	paths := make([]string, 0, len(pol.WriteDirs)+len(pol.WriteFiles))
	paths = append(append(paths, pol.WriteDirs...), pol.WriteFiles...)
	sortByLength(paths)
	fds := make([]int, 0, len(paths))
	at := make([]string, 0, len(paths))
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	for _, p := range paths {
		fd, err := openTree(p)
		if err == syscall.ENOENT || err == syscall.ENOTDIR {
			continue // gone since the policy was made
		}
		if err != nil {
			return wrap("clone the mount of "+p, err)
		}
		fds, at = append(fds, fd), append(at, p)
	}
	if err := setReadOnly("/"); err != nil {
		return wrap("make the file system read-only", err)
	}
	for i, fd := range fds {
		if err := moveMount(fd, at[i]); err != nil {
			return wrap("keep "+at[i]+" writable", err)
		}
	}
	var st syscall.Stat_t
	if syscall.Stat("/dev/shm", &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		if err := syscall.Mount("tmpfs", "/dev/shm", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
			return wrap("mount a private /dev/shm", err)
		}
	}
	return nil
}

// sortByLength sorts paths, shortest first (an insertion sort: a few
// dozen paths, and no package beyond syscall).
func sortByLength(paths []string) {
	for i := 1; i < len(paths); i++ {
		for j := i; j > 0 && len(paths[j]) < len(paths[j-1]); j-- {
			paths[j], paths[j-1] = paths[j-1], paths[j]
		}
	}
}

// The mount API's calls (the same numbers on every architecture) and
// flags.
const (
	sysOpenTree     = 428
	sysMoveMount    = 429
	sysMountSetattr = 442

	openTreeClone   = 1
	openTreeCloexec = syscall.O_CLOEXEC
	atRecursive     = 0x8000
	atEmptyPath     = 0x1000
	moveMountFEmpty = 0x4
	mountAttrRdonly = 0x1
)

// mountAttr is struct mount_attr.
type mountAttr struct {
	set, clr, propagation, userns uint64
}

// openTree returns a detached clone of the mount tree at path.
func openTree(path string) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.RawSyscall(sysOpenTree, atFdcwd, uintptr(unsafe.Pointer(p)), openTreeClone|openTreeCloexec|atRecursive)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// moveMount attaches the detached tree fd at path.
func moveMount(fd int, path string) error {
	empty := [1]byte{}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.RawSyscall6(sysMoveMount, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), atFdcwd, uintptr(unsafe.Pointer(p)), moveMountFEmpty, 0)
	if e != 0 {
		return e
	}
	return nil
}

// setReadOnly makes the mount at path and every mount beneath it
// read-only.
func setReadOnly(path string) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	attr := mountAttr{set: mountAttrRdonly}
	_, _, e := syscall.RawSyscall6(sysMountSetattr, atFdcwd, uintptr(unsafe.Pointer(p)), atRecursive, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return e
	}
	return nil
}

// ViewWorks reports whether the kernel has the mount API the read-only
// view needs (open_tree, move_mount, mount_setattr: Linux 5.12), trying
// it in the calling thread's mount namespace, which must be a private
// one of its own that is thrown away (a thread that unshared it, or a
// process started in one): it makes a clone of / read-only there and
// attaches it nowhere.
func ViewWorks() error {
	fd, err := openTree("/")
	if err != nil {
		return wrap("open_tree", err)
	}
	defer syscall.Close(fd)
	attr := mountAttr{set: mountAttrRdonly}
	empty := [1]byte{}
	_, _, e := syscall.RawSyscall6(sysMountSetattr, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), atEmptyPath|atRecursive, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return wrap("mount_setattr", e)
	}
	return nil
}

// Bind bind-mounts the existing path p over itself, in the calling
// thread's mount namespace: read-only (a protected path), or as it is (a
// directory pinned, which cannot be renamed away then). A path that does
// not exist (any more) is left alone.
func Bind(p string, readOnly bool) error {
	if err := syscall.Mount(p, p, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		if err == syscall.ENOENT {
			return nil // gone since the policy was made
		}
		if readOnly {
			return wrap("bind "+p, err)
		}
		return wrap("pin "+p, err)
	}
	if !readOnly {
		return nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return wrap("statfs "+p, err)
	}
	// A remount in a user namespace must keep the flags it cannot
	// change (nosuid, nodev, noexec, atime).
	flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
	for _, f := range [...][2]int64{
		{stNosuid, syscall.MS_NOSUID}, {stNodev, syscall.MS_NODEV}, {stNoexec, syscall.MS_NOEXEC},
		{stNoatime, syscall.MS_NOATIME}, {stNodiratime, syscall.MS_NODIRATIME}, {stRelatime, syscall.MS_RELATIME},
	} {
		if int64(st.Flags)&f[0] != 0 {
			flags |= uintptr(f[1])
		}
	}
	if err := syscall.Mount("", p, "", flags, ""); err != nil {
		return wrap("make "+p+" read-only", err)
	}
	return nil
}

// wrapped is an error with what was being done.
type wrapped struct {
	what string
	err  error
}

func (w *wrapped) Error() string {
	if w.err == nil {
		return w.what
	}
	return w.what + ": " + w.err.Error()
}
func (w *wrapped) Unwrap() error { return w.err }

func wrap(what string, err error) error {
	if e, ok := err.(syscall.Errno); ok && e == 0 {
		err = nil
	}
	return &wrapped{what, err}
}

// Linux's constants the syscall package lacks on some architectures.
const (
	prSetNoNewPrivs      = 38
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	prCapbsetDrop        = 24
	afVsock              = 40
	oPath                = 0x200000

	stNosuid     = 0x2
	stNodev      = 0x4
	stNoexec     = 0x8
	stNoatime    = 0x400
	stNodiratime = 0x800
	stRelatime   = 0x1000
)
