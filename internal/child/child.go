// Package child is how darman runs other programs — shell commands,
// language servers, MCP servers, the git of checkpoints, rg — so that none
// of them outlives it. Start makes the pipes, starts the program as the
// leader of a group of its own (so stopping the group stops what the
// program started too; on Unix the group is a session of its own, with no
// controlling terminal; on Linux the child also gets SIGKILL if darman
// dies), records the group in a Registry and reaps the leader as soon as it
// exits. Process.Stop ends a child in steps: close its stdin, wait, SIGTERM
// the group, wait, SIGKILL. The composition root makes one Registry and
// closes it last, so a child whose owner forgot it is stopped on the way
// out. One program darman starts otherwise: the git status of the system
// prompt (agent/prompt), bounded and awaited, since the fsmonitor daemon
// it may start is the user's and should outlive it.
//
// A process that starts a session or group of its own escapes its group;
// nothing short of a container catches those.
//
// What depends on the operating system is a small seam, in one file per
// OS (group_unix.go, group_windows.go): prepare sets up a command before it
// starts, attach makes the group of a started one, and a group says
// whether it is alive or has ended (and frees what it held) and stops
// itself. On Windows the group is a Job Object with kill-on-close (the
// child starts suspended and joins it before it runs), so the tree dies
// with darman however darman ends, and the child has a hidden console of
// its own rather than darman's;
// Windows has no SIGTERM, so Stop's second step terminates the job and
// ExitCode reports "killed" for the exit code it gives (KilledExitCode).
package child

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/sandbox"
)

// Options say how Start connects and records a child.
type Options struct {
	// Name is how the registry lists the child ("bash: go test ./...",
	// "language server: gopls"); "" lists it by its program.
	Name string
	// Registry records the child's group until the child has been
	// stopped or its whole group has exited; nil records nothing.
	Registry *Registry
	// Stdin gives the child a pipe for its standard input, written
	// through Process.Stdin. False leaves it none: it reads end of file.
	Stdin bool
	// MergeStderr sends the child's standard error down the pipe of its
	// standard output; false gives it a pipe of its own, Process.Stderr.
	MergeStderr bool
	// SameSession (Unix) makes the child's group in darman's session
	// rather than a session of its own: for darman's own short programs
	// with fixed arguments that run nothing of the workspace and touch no
	// terminal (rg). On Linux a new session is a new scheduling autogroup,
	// and on a loaded machine rg in one took 112 ms at the median where
	// it took 78 in darman's (docs/benchmarks.md).
	SameSession bool
}

// Process is a started child and the group it leads. Its owner reads
// Stdout (and Stderr) until they end and closes them; Stop closes Stdin.
// The methods are safe for concurrent use.
type Process struct {
	// Stdin is the write end of the child's standard input; nil unless
	// Options.Stdin.
	Stdin *os.File
	// Stdout is the read end of the child's standard output (and of its
	// standard error with Options.MergeStderr). It ends once every
	// process holding the other end has exited or closed it.
	Stdout *os.File
	// Stderr is the read end of the child's standard error; nil with
	// Options.MergeStderr.
	Stderr *os.File

	cmd    *exec.Cmd
	group  group
	exited chan struct{} // closed once the leader has exited and been reaped
	forget func()
	once   sync.Once
}

// Start starts cmd as a child: cmd names the program, its arguments,
// directory and environment, and must not have been started; Start sets
// its standard streams and adds to its SysProcAttr. The child is recorded
// in opts.Registry before Start returns. An error means nothing is left
// running; it wraps what the system said, without naming the program, so
// that callers can say it their way.
func Start(cmd *exec.Cmd, opts Options) (*Process, error) {
	var ends pipes
	defer ends.closeChild()
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	if opts.Stdin {
		r, w, err := ends.make(true)
		if err != nil {
			return nil, err
		}
		cmd.Stdin, p.Stdin = r, w
	}
	w, r, err := ends.make(false)
	if err != nil {
		ends.closeOurs()
		return nil, err
	}
	cmd.Stdout, p.Stdout = w, r
	if opts.MergeStderr {
		cmd.Stderr = w
	} else {
		w, r, err := ends.make(false)
		if err != nil {
			ends.closeOurs()
			return nil, err
		}
		cmd.Stderr, p.Stderr = w, r
	}
	prepare(cmd, opts.SameSession)
	// sandbox.Start is cmd.Start, or starts cmd on the thread the sandbox
	// confines (see sandbox.Wrap).
	if err := sandbox.Start(cmd); err != nil {
		ends.closeOurs()
		return nil, err
	}
	g, err := attach(cmd)
	if err != nil {
		ends.closeOurs()
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("put the child in a group of its own: %w", err)
	}
	p.group = g
	name := opts.Name
	if name == "" {
		name = cmd.Path
	}
	p.forget = opts.Registry.add(g, name)
	go func() {
		cmd.Wait()
		close(p.exited)
		if g.ended() {
			p.forget()
		}
	}()
	return p, nil
}

// pipes are the ends Start made: the child's ends, closed once it holds
// them (or failed to start), and ours, closed on failure.
type pipes struct{ child, ours []*os.File }

// make makes a pipe and returns the child's end first: the read end when
// childReads, else the write end.
func (e *pipes) make(childReads bool) (childEnd, ourEnd *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("make a pipe: %w", err)
	}
	if childReads {
		childEnd, ourEnd = r, w
	} else {
		childEnd, ourEnd = w, r
	}
	e.child = append(e.child, childEnd)
	e.ours = append(e.ours, ourEnd)
	return childEnd, ourEnd, nil
}

func (e *pipes) closeChild() {
	for _, f := range e.child {
		f.Close()
	}
}

func (e *pipes) closeOurs() {
	for _, f := range e.ours {
		f.Close()
	}
}

// PID is the leader's process ID, which is also its group's ID on Unix.
func (p *Process) PID() int { return p.group.id() }

// Exited is closed once the leader has exited and been reaped. Processes
// it started may still run (see GroupAlive).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// GroupAlive reports whether any process of the child's group is still
// running, the leader or what it started.
func (p *Process) GroupAlive() bool { return p.group.alive() }

// ExitCode is how the leader ended, once Exited is closed: its exit code,
// or -1 and the signal that killed it. Before, it is -1 and "".
func (p *Process) ExitCode() (code int, signal string) {
	select {
	case <-p.exited:
	default:
		return -1, ""
	}
	st := p.cmd.ProcessState
	if sig := exitSignal(st); sig != "" {
		return -1, sig
	}
	return st.ExitCode(), ""
}

// State is the leader's process state once Exited is closed, else nil.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// Stop ends the child and its group in steps: Stdin closed (a server's cue
// to exit) and up to grace for the leader to go; SIGTERM to the group and
// up to grace more; SIGKILL to what is left. It returns once no process of
// the group is alive (or, if one cannot be killed, after a bounded wait)
// and the leader has been reaped, and removes the child from the
// registry. The read ends are the owner's to close. Stop may be called
// more than once, concurrently too: later calls return once the first
// has.
func (p *Process) Stop(grace time.Duration) {
	p.once.Do(func() {
		if p.Stdin != nil {
			p.Stdin.Close()
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		p.group.stop(p.exited, grace)
		p.forget()
	})
}
