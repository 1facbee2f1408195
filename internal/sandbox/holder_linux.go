//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/darman-dev/darman/internal/sandbox/early"
)

// The namespace holder: how an unprivileged darman gives a command the
// protected paths' mount namespace without starting a helper per command.
//
// A multi-threaded process cannot make a user namespace, and without one
// an unprivileged darman may not mount, so its commands with protected
// paths used to go through "darman sandbox-exec" (a second darman
// process per command, whose Go runtime start costs milliseconds). The
// holder is one such process per workspace instead, "darman sandbox-exec
// --hold", started once in a user and mount namespace of its own, where
// its threads may mount: it starts each command sent to it as darman
// starts one in-thread (startOS: a disposable thread of its own takes a
// mount namespace of its own for the read-only view and the protected
// paths, enters the holder's PID namespace, confines itself and forks the
// command). Each command still pays for its own policy, mounts,
// confinement and fork; what is done once is the user namespace and the
// PID namespace's init.
//
// darman talks to it over a socketpair (SOCK_SEQPACKET; holdRequest and
// holdReply as JSON, the command's standard streams as SCM_RIGHTS). The
// holder forks each command with CLONE_PARENT, so the command is darman's
// child, not the holder's: darman waits for it as for any other (exec.Cmd.Wait,
// a real os.ProcessState), signals and stops its group as before, and a
// command outlives a holder that dies. What Pdeathsig did for a command
// (it cannot be set for a child of another process: Go's child checks its
// parent is the forker) the holder does: it gets SIGTERM when darman's
// thread that started it ends (Pdeathsig), and reads end of file when
// darman's end of the socket closes, and either way kills the groups of
// the commands it started, then exits.
//
// The holder holds no secret: it is started with an empty environment,
// each command's own comes with its request and is not kept. It is
// non-dumpable, so a command (which shares the Landlock domain of the
// holder's thread that forks it while that thread lives) cannot reach its
// memory or files through /proc; its seccomp filter names the holder's
// pid and that thread (early.ConfineThread in the holder), so it cannot
// signal them; darman is outside every command's domain (no thread of
// darman's confines itself for it), which Landlock's signal scope keeps
// commands from signalling.

// holdRequest is what darman sends the holder.
type holdRequest struct {
	ID uint64 `json:"id"`
	// Op is "start" (a command), "watch" (kill PGIDs too when darman
	// dies: a holder that died started them) or "release" (start no more,
	// exit once the commands started have ended).
	Op      string   `json:"op"`
	PGIDs   []int    `json:"pgids,omitempty"`
	Path    string   `json:"path,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []string `json:"env,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Policy  *Policy  `json:"policy,omitempty"`
	Setpgid bool     `json:"setpgid,omitempty"`
	Pgid    int      `json:"pgid,omitempty"`
	Setsid  bool     `json:"setsid,omitempty"`
	// Files is how many descriptors come with the request: the command's
	// stdin, stdout, stderr, then its ExtraFiles.
	Files int `json:"files,omitempty"`
}

// holdReply answers a request: the command's pid, or why it did not
// start. ID 0 is the holder saying it is ready, with its own pid.
type holdReply struct {
	ID    uint64 `json:"id"`
	PID   int    `json:"pid,omitempty"`
	Err   string `json:"err,omitempty"`
	Errno int    `json:"errno,omitempty"`
}

// holdChunk is the most of a message one datagram carries; a longer one
// (a large environment or policy) goes in several, each but the last
// flagged.
const holdChunk = 60 << 10

// maxHoldFiles is the most descriptors one request passes.
const maxHoldFiles = 64

// sendHold sends v, and files with its first datagram, on fd.
func sendHold(fd int, v any, files []int) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, min(len(js), holdChunk)+1)
	for first := true; first || len(js) > 0; first = false {
		n := min(len(js), holdChunk)
		more := byte(0)
		if n < len(js) {
			more = 1
		}
		buf = append(append(buf[:0], more), js[:n]...)
		var oob []byte
		if first && len(files) > 0 {
			oob = syscall.UnixRights(files...)
		}
		for {
			err = syscall.Sendmsg(fd, buf, oob, nil, 0)
			if err != syscall.EINTR {
				break
			}
		}
		if err != nil {
			return err
		}
		js = js[n:]
	}
	return nil
}

// recvHold reads one message from fd: its JSON and the descriptors that
// came with it (close-on-exec). io.EOF when the other end has closed.
func recvHold(fd int) ([]byte, []int, error) {
	buf := make([]byte, holdChunk+1)
	oob := make([]byte, syscall.CmsgSpace(4*maxHoldFiles))
	var js []byte
	var fds []int
	fail := func(err error) ([]byte, []int, error) {
		for _, f := range fds {
			syscall.Close(f)
		}
		return nil, nil, err
	}
	for {
		n, oobn, flags, _, err := syscall.Recvmsg(fd, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail(err)
		}
		if oobn > 0 {
			msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return fail(err)
			}
			for _, m := range msgs {
				got, err := syscall.ParseUnixRights(&m)
				if err == nil {
					fds = append(fds, got...)
				}
			}
		}
		if n == 0 {
			return fail(io.EOF)
		}
		if flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) != 0 {
			return fail(errors.New("sandbox holder: a message was truncated"))
		}
		js = append(js, buf[1:n]...)
		if buf[0] == 0 {
			return js, fds, nil
		}
	}
}

// holderPool is a Sandbox's holders, one per workspace root, started on
// first use.
type holderPool struct {
	helper string
	pid    bool // the holders run commands in a PID namespace of theirs
	mu     sync.Mutex
	m      map[string]*holder
	// released are the holders let go whose namespaces' init darman may
	// still hold (see holder.initConn).
	released []*holder
	closed   bool
	// failed, when set, hears that a holder could not be started.
	failed func()
}

// maxHolders is how many holders a Sandbox keeps; starting one more
// releases the one used least recently.
const maxHolders = 8

func newHolderPool(helper string) *holderPool {
	return &holderPool{helper: helper, m: map[string]*holder{}}
}

// get returns the holder of root: a new one when there is none or when
// the last one exited.
func (pl *holderPool) get(root string) (*holder, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil, errors.New("sandbox: closed")
	}
	h := pl.m[root]
	if h != nil && h.exited() != nil {
		pl.let(h)
		delete(pl.m, root)
		h = nil
	}
	if h == nil {
		if len(pl.m) >= maxHolders {
			var oldest string
			for k, o := range pl.m {
				if oldest == "" || o.used.Before(pl.m[oldest].used) {
					oldest = k
				}
			}
			pl.let(pl.m[oldest])
			delete(pl.m, oldest)
		}
		var err error
		if h, err = pl.start(root, nil); err != nil {
			return nil, err
		}
	}
	h.used = time.Now()
	return h, nil
}

// start starts root's holder, which also watches the groups adopt;
// pl.mu is held.
func (pl *holderPool) start(root string, adopt []int) (*holder, error) {
	h, err := startHolder(pl.helper, pl.pid)
	if err != nil {
		if pl.failed != nil {
			pl.failed()
		}
		return nil, err
	}
	h.mu.Lock()
	h.pool, h.root = pl, root
	h.mu.Unlock()
	if adopt = alive(adopt); len(adopt) > 0 {
		h.mu.Lock()
		h.groups = adopt
		h.mu.Unlock()
		h.send.Lock()
		if h.fd >= 0 {
			sendHold(h.fd, holdRequest{Op: "watch", PGIDs: adopt}, nil)
		}
		h.send.Unlock()
	}
	pl.m[root] = h
	return h, nil
}

// replace starts a holder in place of h, which exited unasked, for the
// groups it started that still run: the new one kills them if darman
// dies. Commands running meanwhile go on (they are darman's children).
func (pl *holderPool) replace(h *holder) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed || pl.m[h.root] != h {
		return
	}
	delete(pl.m, h.root)
	pl.released = append(pl.released, h)
	h.mu.Lock()
	groups := h.groups
	h.mu.Unlock()
	if len(alive(groups)) == 0 {
		return // the next command starts one
	}
	pl.start(h.root, groups)
}

// alive is the groups of gs with a process left.
func alive(gs []int) []int {
	var out []int
	for _, g := range gs {
		if syscall.Kill(-g, 0) != syscall.ESRCH {
			out = append(out, g)
		}
	}
	return out
}

// close releases every holder: each exits once its commands have ended
// (and kills them if darman exits first).
func (pl *holderPool) close() {
	if pl == nil {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.closed = true
	for k, h := range pl.m {
		pl.let(h)
		delete(pl.m, k)
	}
	// What the commands left running in the holders' namespaces goes now,
	// not once the holders have.
	for _, h := range pl.inits() {
		h.askInit(initKill)
	}
}

// let releases h, whose namespace lives on while its commands do;
// pl.mu is held.
func (pl *holderPool) let(h *holder) {
	h.release()
	pl.released = append(pl.released, h)
}

// inits are the holders whose PID namespace darman still holds: the
// pool's and those released whose commands still run; pl.mu is held.
func (pl *holderPool) inits() []*holder {
	var out []*holder
	for _, h := range pl.m {
		out = append(out, h)
	}
	kept := pl.released[:0]
	for _, h := range pl.released {
		h.mu.Lock()
		held := h.initConn >= 0
		h.mu.Unlock()
		if held {
			kept = append(kept, h)
			out = append(out, h)
		}
	}
	pl.released = kept
	return out
}

// alive counts the processes left in the holders' namespaces.
func (pl *holderPool) alive() (int, error) {
	if pl == nil {
		return 0, nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	total := 0
	for _, h := range pl.inits() {
		n, err := h.askInit(initCount)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// askInit asks the init of h's PID namespace op (see askInit); 0 when
// darman no longer holds it (its namespace is gone, or going with the
// holder's last command).
func (h *holder) askInit(op byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.initConn < 0 {
		return 0, nil
	}
	return askInit(h.initConn, op)
}

// holder is darman's end of one holder process.
type holder struct {
	pid  int
	fd   int
	used time.Time
	pool *holderPool
	root string

	send sync.Mutex // one message at a time on fd; fd is closed under it
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan holdReply
	gone error // why it can take no more requests
	// released: asked to exit; groups: those of the commands it started
	// (pruned as they end), which a holder that replaces it watches.
	released bool
	groups   []int
	// initConn is darman's copy of the socket of the holder's PID
	// namespace's init (-1 when none): the init exits, and the kernel
	// kills its namespace's processes, once every copy is closed. Kept
	// until the holder has exited and its commands have ended, so that
	// they outlive a holder that dies.
	initConn int
}

// startHolder starts a holder process and waits until it is ready.
func startHolder(helper string, pid bool) (*holder, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox holder: a socket pair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "sandbox-holder")
	args := append([]string{early.Subcommand, early.Hold}, selfMapArgs()...)
	if pid {
		args = append(args, "pid")
	}
	cmd := exec.Command(helper, args...)
	// No secret: the holder's environment is empty, and each command's
	// comes with its request.
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{theirs}
	// A group of its own (a terminal's ^C is not for it), and SIGTERM
	// when darman's thread that starts it ends, which is when the holder
	// has exited, or darman has (startOwnThread).
	cmd.SysProcAttr = selfMapAttr(&syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM})
	err = startOwnThread(cmd)
	theirs.Close()
	if err != nil {
		syscall.Close(fds[0])
		return nil, fmt.Errorf("sandbox holder: start %s: %w", helper, err)
	}
	h := &holder{pid: cmd.Process.Pid, fd: fds[0], initConn: -1, wait: map[uint64]chan holdReply{}}
	ready := make(chan holdReply, 1)
	h.wait[0] = ready
	go h.read(h.fd)
	go func() {
		cmd.Wait()
		h.fail(fmt.Errorf("the sandbox's namespace holder (pid %d) exited: %s", h.pid, cmd.ProcessState))
	}()
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case r := <-ready:
		if r.Err != "" {
			return nil, errors.New(r.Err)
		}
		return h, nil
	case <-t.C:
		cmd.Process.Kill()
		return nil, errors.New("sandbox holder: not ready after 10 s")
	}
}

// read takes the holder's replies to their requests until it exits.
// It alone closes the socket, once it has read its end.
func (h *holder) read(fd int) {
	for {
		js, fds, err := recvHold(fd)
		if err != nil {
			h.fail(fmt.Errorf("the sandbox's namespace holder (pid %d) went away: %w", h.pid, err))
			h.send.Lock()
			syscall.Close(fd)
			h.fd = -1
			h.send.Unlock()
			return
		}
		var r holdReply
		if json.Unmarshal(js, &r) != nil {
			closeAll(fds)
			continue
		}
		// The ready reply: the socket of the holder's PID namespace's
		// init, kept while the holder's commands run (see initConn).
		if r.ID == 0 && r.Err == "" && len(fds) > 0 {
			h.mu.Lock()
			h.initConn = fds[0]
			h.mu.Unlock()
			fds = fds[1:]
		}
		closeAll(fds)
		h.mu.Lock()
		ch := h.wait[r.ID]
		delete(h.wait, r.ID)
		h.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// fail ends the holder's requests with err: those waiting get it, later
// ones too; read sees the end of the socket.
func (h *holder) fail(err error) {
	h.mu.Lock()
	if h.gone != nil {
		h.mu.Unlock()
		return
	}
	h.gone = err
	waiting := h.wait
	h.wait = nil
	pool := h.pool
	unasked := !h.released && pool != nil
	h.mu.Unlock()
	if unasked {
		go pool.replace(h)
	}
	go h.dropInit()
	for _, ch := range waiting {
		ch <- holdReply{Err: err.Error()}
	}
	h.send.Lock()
	if h.fd >= 0 {
		syscall.Shutdown(h.fd, syscall.SHUT_RDWR)
	}
	h.send.Unlock()
}

// dropInit closes initConn once the gone holder's commands have ended.
func (h *holder) dropInit() {
	for {
		h.mu.Lock()
		groups := alive(h.groups)
		h.groups = groups
		fd := h.initConn
		if len(groups) == 0 {
			h.initConn = -1
		}
		h.mu.Unlock()
		if len(groups) == 0 {
			if fd >= 0 {
				syscall.Close(fd)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (h *holder) exited() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone
}

// request sends req with files and waits for the answer.
func (h *holder) request(req holdRequest, files []int) (holdReply, error) {
	ch := make(chan holdReply, 1)
	h.mu.Lock()
	if h.gone != nil {
		h.mu.Unlock()
		return holdReply{}, h.gone
	}
	h.next++
	req.ID = h.next
	h.wait[req.ID] = ch
	h.mu.Unlock()
	h.send.Lock()
	var err error = syscall.EBADF
	if h.fd >= 0 {
		err = sendHold(h.fd, req, files)
	}
	h.send.Unlock()
	if err != nil {
		h.mu.Lock()
		if h.wait != nil {
			delete(h.wait, req.ID)
		}
		h.mu.Unlock()
		return holdReply{}, fmt.Errorf("the sandbox's namespace holder (pid %d): %w", h.pid, err)
	}
	return <-ch, nil
}

// release tells the holder to start nothing more and exit once its
// commands have ended.
func (h *holder) release() {
	h.mu.Lock()
	gone := h.gone != nil
	h.released = true
	h.mu.Unlock()
	if gone {
		return
	}
	h.send.Lock()
	if h.fd >= 0 {
		sendHold(h.fd, holdRequest{Op: "release"}, nil)
	}
	h.send.Unlock()
}

// startHeld starts cmd through the holder of root, confined by pol, and
// sets cmd.Process: the command is darman's child (see above), so
// cmd.Wait waits for it.
func startHeld(cmd *exec.Cmd, pool *holderPool, root string, pol Policy) error {
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	if err := heldAttrOK(attr); err != nil {
		return err
	}
	if cmd.Cancel != nil {
		return errors.New("sandbox: a command with a context cannot be started through the namespace holder; cancel it by stopping its group")
	}
	var files []int
	var null *os.File
	defer func() {
		if null != nil {
			null.Close()
		}
	}()
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if s == nil {
			if null == nil {
				var err error
				if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return err
				}
			}
			s = null
		}
		f, ok := s.(*os.File)
		if !ok {
			return fmt.Errorf("sandbox: standard stream %d of a command started through the namespace holder must be an *os.File (child.Start gives it pipes), not %T", i, s)
		}
		files = append(files, int(f.Fd()))
	}
	for _, f := range cmd.ExtraFiles {
		if f == nil {
			return errors.New("sandbox: a nil ExtraFiles entry cannot be passed to the namespace holder")
		}
		files = append(files, int(f.Fd()))
	}
	if len(files) > maxHoldFiles {
		return fmt.Errorf("sandbox: at most %d descriptors can be passed to a command", maxHoldFiles)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	dir := cmd.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	h, err := pool.get(root)
	if err != nil {
		return fmt.Errorf("the sandbox could not be set up: %w", err)
	}
	req := holdRequest{Op: "start", Path: cmd.Path, Args: cmd.Args, Env: env, Dir: dir, Policy: &pol,
		Setpgid: attr.Setpgid, Pgid: attr.Pgid, Setsid: attr.Setsid, Files: len(files)}
	r, err := h.request(req, files)
	runtime.KeepAlive(cmd)
	runtime.KeepAlive(null)
	if err == nil && r.Err != "" && r.PID == 0 {
		err = errors.New(r.Err)
		if r.Errno != 0 {
			err = &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(r.Errno)}
		}
	}
	if err != nil {
		return err
	}
	p, err := os.FindProcess(r.PID)
	if err != nil {
		return err
	}
	cmd.Process = p
	if (attr.Setpgid && attr.Pgid == 0) || attr.Setsid {
		h.mu.Lock()
		h.groups = append(alive(h.groups), r.PID)
		h.mu.Unlock()
	}
	if attr.PidFD != nil {
		*attr.PidFD = -1
	}
	return nil
}

// heldAttrOK says whether the holder can give a command what attr asks:
// a process group or session of its own. The parent-death signal is the
// holder's to give (see above).
func heldAttrOK(attr *syscall.SysProcAttr) error {
	a := *attr
	a.Setpgid, a.Pgid, a.Setsid, a.Pdeathsig, a.PidFD = false, 0, false, 0, nil
	if !isZeroAttr(&a) {
		return errors.New("sandbox: the namespace holder starts commands in a process group or session of their own and nothing more; this command's SysProcAttr asks for more")
	}
	return nil
}

func isZeroAttr(a *syscall.SysProcAttr) bool {
	return a.Chroot == "" && a.Credential == nil && !a.Ptrace && !a.Setctty && !a.Noctty && a.Ctty == 0 &&
		!a.Foreground && a.Cloneflags == 0 && a.Unshareflags == 0 && len(a.UidMappings) == 0 &&
		len(a.GidMappings) == 0 && len(a.AmbientCaps) == 0 && !a.UseCgroupFD
}
