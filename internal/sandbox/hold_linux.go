//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/darman-dev/darman/internal/sandbox/early"
)

// holdFD is the holder's end of the socket (ExtraFiles[0]).
const holdFD = 3

// hold is the namespace holder, "darman sandbox-exec --hold [UID GID]" (see
// holder_linux.go), started by darman in a user and mount namespace of its
// own with its end of a socket as descriptor 3. It returns when darman is
// gone (its groups killed) or, released, once they have ended.
func hold(ids []string, stderr io.Writer) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(holdFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		fmt.Fprintln(stderr, "darman sandbox-exec --hold: darman runs this itself, with a socket as descriptor 3")
		return 125
	}
	syscall.CloseOnExec(holdFD) // no command may inherit it
	s := &holdServer{groups: map[int]bool{}}
	if len(ids) == 3 && ids[2] == "pid" {
		if self, err := os.Executable(); err == nil {
			s.pidns = newPidNS(self)
		}
		ids = ids[:2]
	} else if len(ids) == 1 && ids[0] == "pid" {
		if self, err := os.Executable(); err == nil {
			s.pidns = newPidNS(self)
		}
		ids = nil
	}
	// (While dumpable: the maps are files of its own in /proc.)
	if len(ids) == 2 {
		if err := early.MapSelf(ids[0], ids[1]); err != nil {
			s.reply(holdReply{Err: "the sandbox's namespace holder cannot map its user: " + err.Error()})
			return 125
		}
	}
	// No command may reach this process's memory and files through the
	// thread that starts it.
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	// darman's mounts still reach this namespace (a slave of its), this
	// namespace's do not reach darman's.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		s.reply(holdReply{Err: "the sandbox's namespace holder cannot mount: " + err.Error()})
		return 125
	}
	// Go decides once whether pidfds work: here, unconfined (as
	// inThreadOK does in darman).
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	go func() {
		<-sigs // darman's thread ended (Pdeathsig), or someone asks
		s.killAll()
		os.Exit(0)
	}()
	// The commands' PID namespace is made now, and darman is given the
	// init's socket too: the init (and the commands in its namespace)
	// lives on while darman does, should this holder die.
	var initConn []int
	if s.pidns != nil {
		if _, _, err := s.pidns.get(); err != nil {
			s.reply(holdReply{Err: "the sandbox's namespace holder: " + err.Error()})
			return 125
		}
		initConn = []int{s.pidns.conn}
	}
	s.send.Lock()
	sendHold(holdFD, holdReply{PID: os.Getpid()}, initConn)
	s.send.Unlock()
	for {
		js, fds, err := recvHold(holdFD)
		if err != nil {
			// darman is gone: so are its commands.
			s.killAll()
			return 0
		}
		var req holdRequest
		if err := json.Unmarshal(js, &req); err != nil {
			closeAll(fds)
			continue
		}
		switch req.Op {
		case "start":
			s.mu.Lock()
			s.starting++
			s.mu.Unlock()
			go func() {
				s.start(req, fds)
				s.mu.Lock()
				s.starting--
				s.mu.Unlock()
			}()
		case "watch":
			closeAll(fds)
			s.mu.Lock()
			for _, g := range req.PGIDs {
				s.groups[g] = true
			}
			s.mu.Unlock()
		case "release":
			closeAll(fds)
			go s.release()
		default:
			closeAll(fds)
			s.reply(holdReply{ID: req.ID, Err: "sandbox holder: unknown request " + req.Op})
		}
	}
}

func closeAll(fds []int) {
	for _, f := range fds {
		syscall.Close(f)
	}
}

// holdServer is the holder's state: the groups of the commands it
// started.
type holdServer struct {
	send   sync.Mutex
	mu     sync.Mutex
	groups map[int]bool
	// pidns is the commands' PID namespace, nil where the holder's
	// probe found none can be made (see pidns_linux.go).
	pidns *pidNS
	done  bool // released, or darman gone: start nothing more
	// starting counts the starts under way, which killAll waits for: a
	// command forked just before darman went is killed too.
	starting int
}

func (s *holdServer) reply(r holdReply) {
	s.send.Lock()
	defer s.send.Unlock()
	sendHold(holdFD, r, nil)
}

// start starts one command and answers with its pid.
func (s *holdServer) start(req holdRequest, fds []int) {
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "")
	}
	// Closed before the answer: the command's output ends when it (and
	// what it started) closes its copies, not when the holder does.
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	fail := func(err error) {
		closeFiles()
		r := holdReply{ID: req.ID, Err: err.Error()}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			r.Errno = int(errno)
		}
		s.reply(r)
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	switch {
	case done:
		fail(errors.New("sandbox holder: released"))
		return
	case req.Policy == nil || len(files) < 3 || len(files) != req.Files:
		fail(errors.New("sandbox holder: a start request needs a policy and the command's three standard streams"))
		return
	}
	cmd := &exec.Cmd{Path: req.Path, Args: req.Args, Env: req.Env, Dir: req.Dir,
		Stdin: files[0], Stdout: files[1], Stderr: files[2], ExtraFiles: files[3:]}
	// CLONE_PARENT: darman's child (see holder_linux.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: req.Setpgid, Pgid: req.Pgid, Setsid: req.Setsid, Cloneflags: syscall.CLONE_PARENT}
	// The thread that starts it takes a mount namespace of its own (the
	// holder may mount in its user namespace) for the read-only view and
	// the protected paths, as a thread of a darman that may mount does.
	cmd.Err = &inThread{pol: *req.Policy, pidns: s.pidns}
	if err := startOS(cmd); err != nil {
		fail(err)
		return
	}
	closeFiles()
	pid := cmd.Process.Pid
	cmd.Process.Release()
	if (req.Setpgid && req.Pgid == 0) || req.Setsid {
		s.mu.Lock()
		s.prune()
		s.groups[pid] = true
		s.mu.Unlock()
	}
	s.reply(holdReply{ID: req.ID, PID: pid})
}

// killAll kills the groups of the commands the holder started, once the
// starts under way have ended (a new one starts nothing).
func (s *holdServer) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	for deadline := time.Now().Add(5 * time.Second); s.starting > 0 && time.Now().Before(deadline); {
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
	}
	for g := range s.groups {
		syscall.Kill(-g, syscall.SIGKILL)
	}
}

// release starts nothing more and exits once every group the holder
// started has ended (darman going first still kills them: hold's loop).
func (s *holdServer) release() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	for {
		s.mu.Lock()
		s.prune()
		n := len(s.groups)
		s.mu.Unlock()
		if n == 0 {
			os.Exit(0)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// prune forgets the groups that have no process left; s.mu is held.
func (s *holdServer) prune() {
	for g := range s.groups {
		if syscall.Kill(-g, 0) == syscall.ESRCH {
			delete(s.groups, g)
		}
	}
}
