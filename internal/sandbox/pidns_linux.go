//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/darman-dev/darman/internal/sandbox/early"
)

// The PID namespace the commands run in, and its /proc.
//
// A command must see only the sandbox's processes: the /proc of the
// machine shows every process, and the environment of darman's own parent
// (tokens, keys) in /proc/PID/environ. A PID namespace gives a /proc of
// its own, but its procfs can only be mounted by a process inside it, and
// os/exec's child runs no code of darman's before execve: the command
// itself would be the namespace's first process (its init, which the
// kernel keeps the signals without a handler from, so ^C and darman's
// SIGTERM would do nothing). So the namespace is made once, by a small
// init of its own, "darman sandbox-exec --init" (initNS): started in a new
// PID and mount namespace, it mounts the namespace's procfs on /proc in
// its mount namespace, sends darman that mount namespace and its PID
// namespace as descriptors, then reaps what is left to it until darman
// goes. Each command's thread enters that mount namespace (and takes a
// private copy of it, where the read-only view is made) and sets the PID
// namespace for its children: the command is a process of that namespace
// (not its init) and darman's child as before. It sees the init, with an
// empty environment, and the other commands of this darman, whose
// memory and environment Landlock (each command is in a domain of its
// own) and their capabilities being gone keep from it.
//
// The init is darman's (root's) or the namespace holder's (a user other
// than root's: it is started in the holder's user namespace). When darman
// (or the holder) goes, the init reads the end of its socket and exits,
// and the kernel kills every process of the namespace: the commands'
// parent-death signal, which os/exec cannot set for a child in another
// PID namespace (its child checks its parent's pid, which reads 0 there).
// The init is non-dumpable, and the commands have no CAP_SYS_PTRACE, so
// they cannot reach its memory; it ignores the signals a command could
// send it (the kernel keeps SIGKILL and SIGSTOP from a namespace's own
// processes from its init), and Landlock's signal scope refuses them too.

// pidNS is darman's end of an init: the descriptors of its namespaces.
type pidNS struct {
	helper string

	mu       sync.Mutex
	mnt, pid int // -1 until started
	conn     int
	exited   chan struct{}
	err      error // why the last start failed
	failedAt time.Time
	// failed, when set, hears that a start failed.
	failed func()
}

func newPidNS(helper string) *pidNS { return &pidNS{helper: helper, mnt: -1, pid: -1, conn: -1} }

// get returns the descriptors of the mount and PID namespaces, starting
// the init when there is none or the last one exited.
func (n *pidNS) get() (mnt, pid int, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mnt >= 0 {
		select {
		case <-n.exited:
			n.closeLocked()
		default:
			return n.mnt, n.pid, nil
		}
	}
	// A failed start is not tried again for a while: every command
	// would pay for it.
	if n.err != nil && time.Since(n.failedAt) < 10*time.Second {
		return -1, -1, n.err
	}
	if err := n.start(); err != nil {
		n.err, n.failedAt = err, time.Now()
		if n.failed != nil {
			n.failed()
		}
		return -1, -1, err
	}
	n.err = nil
	return n.mnt, n.pid, nil
}

func (n *pidNS) closeLocked() {
	for _, fd := range []*int{&n.mnt, &n.pid, &n.conn} {
		if *fd >= 0 {
			syscall.Close(*fd)
			*fd = -1
		}
	}
}

// close kills what is left in the namespace, waits until none of it can
// run (a process that left its command's session, setsid, included),
// then lets the init go: it reads the end of its socket and exits.
func (n *pidNS) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn >= 0 {
		select {
		case <-n.exited:
		default:
			askInit(n.conn, initKill)
		}
	}
	n.closeLocked()
}

// start starts an init and takes its namespaces; n.mu is held.
func (n *pidNS) start() error {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the sandbox's PID namespace: a socket pair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "sandbox-init")
	cmd := exec.Command(n.helper, early.Subcommand, early.Init)
	cmd.Env = []string{} // nothing for a command to read there
	cmd.Dir = "/"
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		syscall.Close(fds[0])
		return fmt.Errorf("the sandbox's PID namespace: start %s: %w", n.helper, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	type reply struct {
		fds []int
		err error
	}
	got := make(chan reply, 1)
	go func() {
		js, fds, err := recvHold(fds[0])
		var msg string
		switch {
		case err != nil:
			err = fmt.Errorf("the sandbox's PID namespace: its init went away: %w", err)
		case json.Unmarshal(js, &msg) != nil || msg != "ok":
			err = fmt.Errorf("the sandbox's PID namespace: %s", msg)
		case len(fds) != 2:
			err = errors.New("the sandbox's PID namespace: its init sent no namespaces")
		}
		got <- reply{fds, err}
	}()
	var r reply
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		r.err = errors.New("the sandbox's PID namespace: its init is not ready after 10 s")
	}
	if r.err != nil {
		for _, fd := range r.fds {
			syscall.Close(fd)
		}
		cmd.Process.Kill()
		syscall.Close(fds[0])
		return r.err
	}
	n.mnt, n.pid, n.conn, n.exited = r.fds[0], r.fds[1], fds[0], exited
	return nil
}

// enter puts the calling thread, which is thrown away after, in a
// private copy of the init's mount namespace and sets the init's PID
// namespace for its children.
func (n *pidNS) enter(mnt, pid int) error {
	if err := syscall.Unshare(syscall.CLONE_FS); err != nil {
		return fmt.Errorf("unshare the thread's file system state: %w", err)
	}
	if err := setns(mnt, syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("enter the sandbox's mount namespace: %w", err)
	}
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("a mount namespace: %w", err)
	}
	if err := setns(pid, syscall.CLONE_NEWPID); err != nil {
		return fmt.Errorf("enter the sandbox's PID namespace: %w", err)
	}
	return nil
}

func setns(fd, kind int) error { return unix.Setns(fd, kind) }

// initFD is the init's end of its socket (ExtraFiles[0]).
const initFD = 3

// initNS is the init, "darman sandbox-exec --init", started by darman or
// a namespace holder in a new PID and mount namespace with its end of a
// socket as descriptor 3 (see above). It returns only when it could not
// set up.
func initNS(stderr io.Writer) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(initFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK || syscall.Getpid() != 1 {
		fmt.Fprintln(stderr, "darman sandbox-exec --init: darman runs this itself, as a PID namespace's first process with a socket as descriptor 3")
		return 125
	}
	syscall.CloseOnExec(initFD)
	fail := func(what string, err error) int {
		sendHold(initFD, what+": "+err.Error(), nil)
		return 125
	}
	// darman's mounts still reach this namespace, not the other way.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		return fail("make the mounts private", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fail("mount the namespace's /proc", err)
	}
	mnt, err := syscall.Open("/proc/self/ns/mnt", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("open its mount namespace", err)
	}
	pid, err := syscall.Open("/proc/self/ns/pid", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("open its PID namespace", err)
	}
	// No command may reach its memory (they have no CAP_SYS_PTRACE).
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	if err := sendHold(initFD, "ok", []int{mnt, pid}); err != nil {
		return 125
	}
	syscall.Close(mnt)
	syscall.Close(pid)
	gone := make(chan struct{})
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := syscall.Read(initFD, buf)
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 {
				close(gone) // darman (or its holder) is gone
				return
			}
			answerInit(buf[0])
		}
	}()
	for {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WALL, nil)
			if err == syscall.EINTR {
				continue
			}
			if pid <= 0 {
				break
			}
		}
		select {
		case <-children:
		case <-gone:
			os.Exit(0)
		}
	}
}

// What darman asks an init on its socket (askInit), one byte each; the
// init answers with the number of the namespace's processes, other than
// itself, that can still run (zombies do not count), in decimal.
const (
	initCount = 'n' // how many are left
	initKill  = 'k' // SIGKILL them all, wait (up to initKillWait) until none can run, then count
)

// initKillWait bounds how long an init waits, after killing its
// namespace's processes, for them to be gone.
const initKillWait = 5 * time.Second

// answerInit answers one of darman's questions (op) on the init's socket.
func answerInit(op byte) {
	switch op {
	case initCount:
	case initKill:
		// In a PID namespace, kill(-1) from its init reaches every
		// process of it but the init.
		syscall.Kill(-1, syscall.SIGKILL)
		for end := time.Now().Add(initKillWait); runnable() > 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	default:
		return
	}
	syscall.Write(initFD, []byte(strconv.Itoa(runnable())))
}

// runnable counts the processes of the init's namespace (its /proc), but
// itself, that have not exited: a killed command stays a zombie until
// darman, its parent outside, reaps it, and can do nothing more.
func runnable() int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		// pid (comm) state …: comm may hold anything, ")" included.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		n++
	}
	return n
}

// initAsk serialises darman's questions to its inits: a reply is read
// from the socket the question went out on.
var initAsk sync.Mutex

// askInit asks the init at the other end of conn op and returns its
// answer: how many of its namespace's processes can still run.
func askInit(conn int, op byte) (int, error) {
	initAsk.Lock()
	defer initAsk.Unlock()
	if _, err := syscall.Write(conn, []byte{op}); err != nil {
		return 0, fmt.Errorf("the sandbox's PID namespace: %w", err)
	}
	wait := 2 * time.Second
	if op == initKill {
		wait += initKillWait
	}
	fds := []unix.PollFd{{Fd: int32(conn), Events: unix.POLLIN}}
	for end := time.Now().Add(wait); ; {
		left := time.Until(end)
		if left <= 0 {
			return 0, errors.New("the sandbox's PID namespace: its init does not answer")
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("the sandbox's PID namespace: %w", err)
		}
		if n > 0 {
			break
		}
	}
	buf := make([]byte, 32)
	n, err := syscall.Read(conn, buf)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("the sandbox's PID namespace: its init went away: %v", err)
	}
	count, err := strconv.Atoi(string(buf[:n]))
	if err != nil || count < 0 {
		return 0, fmt.Errorf("the sandbox's PID namespace: its init answered %q", buf[:n])
	}
	return count, nil
}

// ask asks the running init, if any, op (askInit); ok is false when there
// is none.
func (n *pidNS) ask(op byte) (count int, ok bool, err error) {
	if n == nil {
		return 0, false, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn < 0 {
		return 0, false, nil
	}
	select {
	case <-n.exited:
		return 0, true, nil // gone, and its namespace with it
	default:
	}
	count, err = askInit(n.conn, op)
	return count, true, err
}

// alive counts the processes left in the PID namespaces of c's commands,
// darman's own init's and its holders'; ok is false when commands run in
// none (see Sandbox.Alive).
func (c capabilities) alive() (n int, ok bool) {
	if !c.pidOK {
		return 0, false
	}
	own, _, err := c.pidns.ask(initCount)
	if err != nil {
		return 0, false
	}
	held, err := c.pool.alive()
	if err != nil {
		return 0, false
	}
	return own + held, true
}
