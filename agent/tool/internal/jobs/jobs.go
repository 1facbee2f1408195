package jobs

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
	// JobBuffer is how much unread output a job keeps; older unread output
	// is dropped, and the next read says how much.
	JobBuffer = 1 << 20
	// StopGrace is how long a group has between SIGTERM and SIGKILL.
	StopGrace = 2 * time.Second
)

// Jobs are the background commands of one session: those started with
// run_in_background, and the processes a command left running when it
// exited (a server started with "&"). The agent loop makes one per session
// with NewJobs and closes it when the session ends; Close stops every
// process group still running. A Jobs is safe for concurrent use.
type Jobs struct {
	log *slog.Logger

	mu     sync.Mutex
	jobs   map[string]*Job
	next   int
	closed bool
	wg     sync.WaitGroup // one watcher per job
}

// New returns an empty registry. logger, nil to discard, hears about
// jobs starting and ending.
func New(logger *slog.Logger) *Jobs {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Jobs{log: logger, jobs: make(map[string]*Job)}
}

// Job is one background process group.
type Job struct {
	id, command string
	started     time.Time
	p           *Proc
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
	if over := len(o.unread) - JobBuffer; over > 0 {
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

// Start runs cmd, the command line command made ready to run, in the
// background; ended (nil: nothing) runs once it has ended, or was killed,
// and its output was read.
func (j *Jobs) Start(cmd *exec.Cmd, command string, reg *child.Registry, ended func()) (*Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.roomLocked(); err != nil {
		return nil, err
	}
	out := &jobOutput{}
	p, err := StartProc(cmd, "bash: "+command, out, reg)
	if err != nil {
		return nil, err
	}
	return j.addLocked(p, command, out, false, ended), nil
}

// Adopt takes over the processes a foreground command left running; their
// output from now on goes to the job. ok is false when the registry cannot
// take them (closed or full): the caller stops them instead. ended is as
// Start's.
func (j *Jobs) Adopt(p *Proc, command string, ended func()) (*Job, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.roomLocked() != nil {
		return nil, false
	}
	out := &jobOutput{}
	p.setSink(out)
	return j.addLocked(p, command, out, true, ended), true
}

// Running is how many of the jobs have not ended yet.
func (j *Jobs) Running() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.runningLocked()
}

func (j *Jobs) runningLocked() int {
	running := 0
	for _, jb := range j.jobs {
		select {
		case <-jb.done:
		default:
			running++
		}
	}
	return running
}

func (j *Jobs) roomLocked() error {
	if j.closed {
		return errors.New("the session is ending; no new background jobs")
	}
	if running := j.runningLocked(); running >= maxJobs {
		return fmt.Errorf("%d background jobs are already running; stop some with bash_kill first", running)
	}
	return nil
}

func (j *Jobs) addLocked(p *Proc, command string, out *jobOutput, leftover bool, ended func()) *Job {
	j.next++
	jb := &Job{id: fmt.Sprintf("job-%d", j.next), command: command, started: time.Now(), p: p, out: out, leftover: leftover, done: make(chan struct{})}
	j.jobs[jb.id] = jb
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		<-p.Exited()
		<-p.read
		p.CloseOut()
		close(jb.done)
		j.log.Debug("background job ended", "job", jb.id)
		if ended != nil {
			ended()
		}
	}()
	j.log.Debug("background job started", "job", jb.id, "pgid", p.child.PID(), "leftover", leftover)
	return jb
}

// Get returns the job with id.
func (j *Jobs) Get(id string) (*Job, error) {
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

// ID names the job to the model: "job-1", "job-2", … in the order the
// session started them.
func (jb *Job) ID() string { return jb.id }

// Command is the command line that started the job.
func (jb *Job) Command() string { return jb.command }

// Started is when the job started.
func (jb *Job) Started() time.Time { return jb.started }

// Take returns the output not read yet and how many bytes of it were
// dropped for lack of room (only the last JobBuffer bytes unread are
// kept), and marks it read.
func (jb *Job) Take() ([]byte, int64) { return jb.out.take() }

// Kill stops a job's whole process group.
func (jb *Job) Kill() {
	jb.mu.Lock()
	jb.killed = true
	jb.mu.Unlock()
	jb.p.Stop(StopGrace)
	<-jb.done
}

// Status describes where the job is, for the model.
func (jb *Job) Status() (text string, running bool, code int) {
	jb.mu.Lock()
	killed := jb.killed
	jb.mu.Unlock()
	select {
	case <-jb.p.Exited():
	default:
		return "running", true, 0
	}
	code, signal := jb.p.ExitCode()
	switch {
	case killed:
		return "stopped by bash_kill", false, code
	case jb.p.GroupAlive():
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
	jobs := make([]*Job, 0, len(j.jobs))
	for _, jb := range j.jobs {
		jobs = append(jobs, jb)
	}
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, jb := range jobs {
		select {
		case <-jb.done:
			if !jb.p.GroupAlive() {
				continue
			}
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			jb.p.Stop(StopGrace)
		}()
	}
	wg.Wait()
	j.wg.Wait()
	return nil
}
