//go:build unix

package tool

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// The limits of a session's background jobs.
const (
	maxJobs = 16
	// jobBuffer is how much unread output a job keeps; older unread output
	// is dropped, and the next read says how much.
	jobBuffer = 1 << 20
	// stopGrace is how long a group has between SIGTERM and SIGKILL.
	stopGrace = 2 * time.Second
)

// Jobs are the background commands of one session: those started with
// run_in_background, and the processes a command left running when it
// exited (a server started with "&"). The agent loop makes one per session
// with NewJobs and closes it when the session ends; Close stops every
// process group still running. A Jobs is safe for concurrent use.
type Jobs struct {
	log *slog.Logger

	mu     sync.Mutex
	jobs   map[string]*job
	next   int
	closed bool
	wg     sync.WaitGroup // one watcher per job
}

// NewJobs returns an empty registry. logger, nil to discard, hears about
// jobs starting and ending.
func NewJobs(logger *slog.Logger) *Jobs {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Jobs{log: logger, jobs: make(map[string]*job)}
}

// job is one background process group.
type job struct {
	id, command string
	started     time.Time
	p           *proc
	out         *jobOutput
	// leftover is set for the processes a foreground command left behind;
	// its own exit code was reported with it.
	leftover bool
	done     chan struct{} // closed when the main process exited and the output ended

	mu     sync.Mutex
	killed bool
}

// jobOutput keeps a job's output that has not been read yet.
type jobOutput struct {
	mu      sync.Mutex
	unread  []byte
	dropped int64
	total   int64
}

func (o *jobOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.total += int64(len(p))
	o.unread = append(o.unread, p...)
	if over := len(o.unread) - jobBuffer; over > 0 {
		o.unread = append(o.unread[:0], o.unread[over:]...)
		o.dropped += int64(over)
	}
	return len(p), nil
}

// take returns the output not read yet and how many bytes of it were
// dropped for lack of room, and marks it read.
func (o *jobOutput) take() ([]byte, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out, dropped := o.unread, o.dropped
	o.unread, o.dropped = nil, 0
	return out, dropped
}

// start runs command in dir in the background, confined by confine (nil:
// as it is).
func (j *Jobs) start(command, dir string, reg *child.Registry, confine func(*exec.Cmd) error) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.roomLocked(); err != nil {
		return nil, err
	}
	out := &jobOutput{}
	p, err := startProc(command, dir, out, reg, confine)
	if err != nil {
		return nil, err
	}
	return j.addLocked(p, command, out, false), nil
}

// adopt takes over the processes a foreground command left running; their
// output from now on goes to the job. ok is false when the registry cannot
// take them (closed or full): the caller stops them instead.
func (j *Jobs) adopt(p *proc, command string) (*job, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.roomLocked() != nil {
		return nil, false
	}
	out := &jobOutput{}
	p.setSink(out)
	return j.addLocked(p, command, out, true), true
}

func (j *Jobs) roomLocked() error {
	if j.closed {
		return errors.New("the session is ending; no new background jobs")
	}
	running := 0
	for _, jb := range j.jobs {
		select {
		case <-jb.done:
		default:
			running++
		}
	}
	if running >= maxJobs {
		return fmt.Errorf("%d background jobs are already running; stop some with bash_kill first", running)
	}
	return nil
}

func (j *Jobs) addLocked(p *proc, command string, out *jobOutput, leftover bool) *job {
	j.next++
	jb := &job{id: fmt.Sprintf("job-%d", j.next), command: command, started: time.Now(), p: p, out: out, leftover: leftover, done: make(chan struct{})}
	j.jobs[jb.id] = jb
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		<-p.exited
		<-p.read
		p.closeOut()
		close(jb.done)
		j.log.Debug("background job ended", "job", jb.id)
	}()
	j.log.Debug("background job started", "job", jb.id, "pgid", p.pgid, "leftover", leftover)
	return jb
}

// get returns the job with id.
func (j *Jobs) get(id string) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if jb, ok := j.jobs[strings.TrimSpace(id)]; ok {
		return jb, nil
	}
	if len(j.jobs) == 0 {
		return nil, fmt.Errorf("there is no job %q: no background job was started in this session", id)
	}
	ids := make([]string, 0, len(j.jobs))
	for i := 1; i <= j.next; i++ {
		if _, ok := j.jobs[fmt.Sprintf("job-%d", i)]; ok {
			ids = append(ids, fmt.Sprintf("job-%d", i))
		}
	}
	return nil, fmt.Errorf("there is no job %q; the jobs of this session are %s", id, strings.Join(ids, ", "))
}

// kill stops a job's whole process group.
func (jb *job) kill() {
	jb.mu.Lock()
	jb.killed = true
	jb.mu.Unlock()
	jb.p.stop(stopGrace)
	<-jb.done
}

// status describes where the job is, for the model.
func (jb *job) status() (text string, running bool, code int) {
	jb.mu.Lock()
	killed := jb.killed
	jb.mu.Unlock()
	select {
	case <-jb.p.exited:
	default:
		return "running", true, 0
	}
	code, signal := jb.p.exitCode()
	switch {
	case killed:
		return "stopped by bash_kill", false, code
	case child.GroupAlive(jb.p.pgid):
		if jb.leftover {
			return "running (the command that started these processes has exited)", true, code
		}
		return fmt.Sprintf("running: the command exited with code %d, and processes it started are still running", code), true, code
	case signal != "":
		return "killed by signal " + signal, false, code
	default:
		return fmt.Sprintf("exited with code %d", code), false, code
	}
}

// Close stops every job's process group (SIGTERM, then SIGKILL to what is
// left after two seconds) and waits for them. The registry takes no new
// jobs afterwards. It is safe to call more than once.
func (j *Jobs) Close() error {
	j.mu.Lock()
	j.closed = true
	jobs := make([]*job, 0, len(j.jobs))
	for _, jb := range j.jobs {
		jobs = append(jobs, jb)
	}
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, jb := range jobs {
		select {
		case <-jb.done:
			if !child.GroupAlive(jb.p.pgid) {
				continue
			}
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			jb.p.stop(stopGrace)
		}()
	}
	wg.Wait()
	j.wg.Wait()
	return nil
}
