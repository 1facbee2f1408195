package jobs

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// Proc is a shell command started with child.Start: a process group of
// its own, with its stdout and stderr interleaved on one pipe that a
// goroutine copies into a sink. Everything the command starts joins its
// group, so stopping the group stops them too (a process that makes a new
// session or group of its own escapes; nothing short of a container
// catches those).
//
// The reader goroutine ends when the last writer closes the pipe or when
// stopReading gives up on it; Stop ends both. Its methods are safe for
// concurrent use.
type Proc struct {
	child  *child.Process
	out    *os.File
	exited <-chan struct{} // closed once the main process has exited and been reaped
	read   chan struct{}   // closed once the reader is done

	mu   sync.Mutex
	sink io.Writer

	closeOnce sync.Once
}

// CloseOut closes the read end of the output pipe, once the reader is done
// with it.
func (p *Proc) CloseOut() {
	p.closeOnce.Do(func() { p.out.Close() })
}

// StartProc starts cmd, a command line made ready to run (see the bash
// tool's bashCommand), with stdin empty and its stdout and stderr going to
// sink, and records its group in reg as name (nil records nothing).
func StartProc(cmd *exec.Cmd, name string, sink io.Writer, reg *child.Registry) (*Proc, error) {
	c, err := child.Start(cmd, child.Options{Name: name, Registry: reg, MergeStderr: true})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	p := &Proc{child: c, out: c.Stdout, exited: c.Exited(), read: make(chan struct{}), sink: sink}
	go p.copy()
	return p, nil
}

// Exited is closed once the main process has exited and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// GroupAlive reports whether any process of the command's group is still
// running: the main process, or what it started.
func (p *Proc) GroupAlive() bool { return p.child.GroupAlive() }

func (p *Proc) copy() {
	defer close(p.read)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.out.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.sink.Write(buf[:n])
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// setSink sends the output that comes from now on to w.
func (p *Proc) setSink(w io.Writer) {
	p.mu.Lock()
	p.sink = w
	p.mu.Unlock()
}

// ExitCode is the main process's exit status once it has exited: its code,
// or -1 and the signal that killed it.
func (p *Proc) ExitCode() (int, string) { return p.child.ExitCode() }

// WaitRead waits up to d for the reader to finish, and reports whether it
// did.
func (p *Proc) WaitRead(d time.Duration) bool {
	select {
	case <-p.read:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.read:
		return true
	case <-t.C:
		return false
	}
}

// stopReading ends the reader even though some process still holds the
// pipe, and closes it.
func (p *Proc) stopReading() {
	p.out.SetReadDeadline(time.Now())
	<-p.read
	p.CloseOut()
}

// Stop ends the whole group: SIGTERM, then SIGKILL to what is left after
// grace. It returns once the group is gone (or, if something in it cannot
// be killed, after a bounded wait), the main process has been reaped and
// the reader is done.
func (p *Proc) Stop(grace time.Duration) {
	p.child.Stop(grace)
	if !p.WaitRead(200 * time.Millisecond) {
		// Something outside the group still holds the pipe.
		p.stopReading()
	}
	p.CloseOut()
}
