//go:build unix

package tool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// proc is a shell command started with child.Start: a process group of
// its own, with its stdout and stderr interleaved on one pipe that a
// goroutine copies into a sink. Everything the command starts joins its
// group, so stopping the group stops them too (a process that makes a new
// session or group of its own escapes; nothing short of a container
// catches those).
//
// The reader goroutine ends when the last writer closes the pipe or when
// stopReading gives up on it. stop and release end both.
type proc struct {
	child  *child.Process
	pgid   int
	out    *os.File
	exited <-chan struct{} // closed once the main process has exited and been reaped
	read   chan struct{}   // closed once the reader is done

	mu   sync.Mutex
	sink io.Writer

	closeOnce sync.Once
}

// closeOut closes the read end of the output pipe, once the reader is done
// with it.
func (p *proc) closeOut() {
	p.closeOnce.Do(func() { p.out.Close() })
}

// shell returns the shell commands run in: bash when there is one.
func shell() (string, error) {
	if p, err := exec.LookPath("bash"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("sh"); err == nil {
		return p, nil
	}
	return "", errors.New("neither bash nor sh was found on PATH")
}

// bashCommand is the program a command line runs as: sh -c command, in
// dir, with an environment in which nothing waits for a person at a
// terminal (no pagers, no prompts).
func bashCommand(sh, command, dir string) *exec.Cmd {
	cmd := exec.Command(sh, "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// startProc starts command with "bash -c" in dir, with stdin empty, and
// records its group in reg (nil records nothing).
func startProc(command, dir string, sink io.Writer, reg *child.Registry) (*proc, error) {
	sh, err := shell()
	if err != nil {
		return nil, err
	}
	c, err := child.Start(bashCommand(sh, command, dir), child.Options{Name: "bash: " + command, Registry: reg, MergeStderr: true})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(sh), err)
	}
	p := &proc{child: c, pgid: c.PID(), out: c.Stdout, exited: c.Exited(), read: make(chan struct{}), sink: sink}
	go p.copy()
	return p, nil
}

func (p *proc) copy() {
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
func (p *proc) setSink(w io.Writer) {
	p.mu.Lock()
	p.sink = w
	p.mu.Unlock()
}

// exitCode is the main process's exit status once it has exited: its code,
// or -1 and the signal that killed it.
func (p *proc) exitCode() (int, string) { return p.child.ExitCode() }

// waitRead waits up to d for the reader to finish, and reports whether it
// did.
func (p *proc) waitRead(d time.Duration) bool {
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
func (p *proc) stopReading() {
	p.out.SetReadDeadline(time.Now())
	<-p.read
	p.closeOut()
}

// stop ends the whole group: SIGTERM, then SIGKILL to what is left after
// grace. It returns once the group is gone (or, if something in it cannot
// be killed, after a bounded wait), the main process has been reaped and
// the reader is done.
func (p *proc) stop(grace time.Duration) {
	p.child.Stop(grace)
	if !p.waitRead(200 * time.Millisecond) {
		// Something outside the group still holds the pipe.
		p.stopReading()
	}
	p.closeOut()
}
