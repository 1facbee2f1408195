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
	"syscall"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// proc is a shell command running in a process group of its own, with its
// stdout and stderr interleaved on one pipe that a goroutine copies into a
// sink. Everything the command starts joins its group, so stopping the group
// stops them too (a process that makes a new session or group of its own
// escapes; nothing short of a container catches those).
//
// The waiter goroutine reaps the main process as soon as it exits; the
// reader goroutine ends when the last writer closes the pipe or when
// stopReading gives up on it. stop and release end both.
type proc struct {
	cmd    *exec.Cmd
	pgid   int
	out    *os.File
	exited chan struct{} // closed once the main process has exited and been reaped
	read   chan struct{} // closed once the reader is done

	mu   sync.Mutex
	sink io.Writer

	closeOnce sync.Once
	// forget removes the group from the children registry.
	forget func()
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

// startProc starts command with "bash -c" in dir, with stdin empty, and
// records its group in reg (nil records nothing). confine, when not nil,
// rewrites the command before it starts (the OS sandbox, see sandbox.go).
func startProc(command, dir string, sink io.Writer, reg *child.Registry, confine func(*exec.Cmd) error) (*proc, error) {
	sh, err := shell()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("make the output pipe: %w", err)
	}
	cmd := exec.Command(sh, "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	// Nothing may wait for a person at a terminal: no pagers, no prompts.
	cmd.Env = append(os.Environ(), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	cmd.SysProcAttr = child.SysProcAttr()
	if confine != nil {
		if err := confine(cmd); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(sh), err)
	}
	// Only the command's processes hold the write end now, so the pipe
	// ends when the last of them exits.
	w.Close()
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, out: r, exited: make(chan struct{}), read: make(chan struct{}), sink: sink}
	p.forget = reg.Add(p.pgid, "bash: "+command)
	go func() {
		cmd.Wait()
		close(p.exited)
		if !child.GroupAlive(p.pgid) {
			p.forget()
		}
	}()
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
func (p *proc) exitCode() (int, string) {
	st := p.cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return st.ExitCode(), ""
}

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
	child.StopGroup(p.pgid, p.exited, grace)
	p.forget()
	if !p.waitRead(200 * time.Millisecond) {
		// Something outside the group still holds the pipe.
		p.stopReading()
	}
	p.closeOut()
}
