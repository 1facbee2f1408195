//go:build unix

package child

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// group is a child's process group, named by its leader's PID.
type group int

// prepare makes cmd the leader of a session of its own when it starts, and
// so of a group of its own whose ID is its PID (and, on Linux, has it
// killed when darman dies), keeping what else the caller set in its
// SysProcAttr. The session has no controlling terminal: what the child
// runs cannot open darman's as /dev/tty, type into it (TIOCSTI needs the
// terminal to be the caller's own, or CAP_SYS_ADMIN), read from it or get
// its signals. Setpgid is off: Go's forkExec would call setpgid after
// setsid, which a session leader may not. With sameSession the child leads
// a group in darman's session instead (Options.SameSession).
func prepare(cmd *exec.Cmd, sameSession bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if sameSession {
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = false, true, 0
	} else {
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, false, 0
	}
	setDeathSignal(cmd.SysProcAttr)
}

// attach returns the group of a started child: the kernel made it when
// the child started (Setsid), so there is nothing to do.
func attach(cmd *exec.Cmd) (group, error) { return group(cmd.Process.Pid), nil }

func (g group) id() int                                          { return int(g) }
func (g group) alive() bool                                      { return GroupAlive(int(g)) }
func (g group) ended() bool                                      { return !GroupAlive(int(g)) }
func (g group) stop(exited <-chan struct{}, grace time.Duration) { stopGroup(int(g), exited, grace) }

// exitSignal names the signal that ended a process, "" when it exited.
func exitSignal(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// stopGroup ends the process group pgid in steps: SIGTERM (and SIGCONT, so
// a stopped process can act on it), grace to exit, then SIGKILL to what is
// left. It returns once no process of the group is alive (or, if one cannot
// be killed, after a bounded wait) and exited, the leader's reaper, is
// closed (or two seconds have passed).
func stopGroup(pgid int, exited <-chan struct{}, grace time.Duration) {
	if GroupAlive(pgid) {
		syscall.Kill(-pgid, syscall.SIGTERM)
		syscall.Kill(-pgid, syscall.SIGCONT)
		waitGone(pgid, grace)
	}
	if GroupAlive(pgid) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		waitGone(pgid, 2*time.Second)
	}
	if exited != nil {
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
		}
	}
}

// waitGone waits up to d for the group to have no live process.
func waitGone(pgid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for GroupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// GroupAlive reports whether any process of the group is still running.
// Zombies do not count: they are dead, waiting for a parent to reap them
// (in containers whose init does not reap, they may wait forever).
func GroupAlive(pgid int) bool {
	// A group with no process at all, zombies included, needs no scan of
	// /proc, which costs milliseconds on a busy machine: the common case
	// once a child and what it started have exited.
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if alive, ok := procGroupAlive(pgid); ok {
		return alive
	}
	return syscall.Kill(-pgid, 0) == nil
}

// procGroupAlive answers GroupAlive from /proc; ok is false where there is
// no /proc to read.
func procGroupAlive(pgid int) (alive, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return false, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, false
	}
	want := []byte(strconv.Itoa(pgid))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so
		// the fields start after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || !bytes.Equal(f[2], want) {
			continue
		}
		if s := f[0]; len(s) == 1 && (s[0] == 'Z' || s[0] == 'X') {
			continue
		}
		return true, true
	}
	return false, true
}
