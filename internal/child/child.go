//go:build unix

// Package child is how darman runs other programs — shell commands,
// language servers, MCP servers — so that none of them outlives it: each
// child leads a process group of its own, so stopping the group stops what
// the child started too; on Linux the child also gets SIGKILL if darman
// dies (Pdeathsig); and a Registry holds every group still running so the
// composition root can stop them all on the way out.
//
// A process that starts a session or group of its own escapes its group;
// nothing short of a container catches those.
package child

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// StopGroup ends the process group pgid in steps: SIGTERM (and SIGCONT, so
// a stopped process can act on it), grace to exit, then SIGKILL to what is
// left. It returns once no process of the group is alive (or, if one cannot
// be killed, after a bounded wait) and exited, the leader's reaper, is
// closed (or two seconds have passed).
func StopGroup(pgid int, exited <-chan struct{}, grace time.Duration) {
	if GroupAlive(pgid) {
		syscall.Kill(-pgid, syscall.SIGTERM)
		syscall.Kill(-pgid, syscall.SIGCONT)
		WaitGone(pgid, grace)
	}
	if GroupAlive(pgid) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		WaitGone(pgid, 2*time.Second)
	}
	if exited != nil {
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
		}
	}
}

// WaitGone waits up to d for the group to have no live process.
func WaitGone(pgid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for GroupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// GroupAlive reports whether any process of the group is still running.
// Zombies do not count: they are dead, waiting for a parent to reap them
// (in containers whose init does not reap, they may wait forever).
func GroupAlive(pgid int) bool {
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
