package diagnostics

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// process is a language server started with child.Start: a process group
// of its own, so that stopping it stops whatever it started too, reaped as
// soon as it exits.
//
// Its stdin and stdout are the LSP stream; stderr goes to the log, and its
// last lines are kept to explain a failure. A reader goroutine drains
// stderr until every process of the group has closed it.
type process struct {
	child  *child.Process
	stdin  *os.File // write end
	stdout *os.File // read end
	exited <-chan struct{}
	// stderrDone is closed once the stderr reader has finished.
	stderrDone chan struct{}

	mu     sync.Mutex
	head   []string // the first lines of stderr, where usage errors are
	tail   []string // the last lines after head
	lines  int
	hang   error
	onHang func()
	// ending is how the child ended on its own, when it did before darman
	// stopped it (see entry.explain).
	ending string
}

const (
	headLines = 3
	tailLines = 5
)

func startProcess(argv []string, dir string, env []string, reg *child.Registry, log *slog.Logger) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	c, err := child.Start(cmd, child.Options{Name: "language server: " + strings.Join(argv, " "), Registry: reg, Stdin: true})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &process{child: c, stdin: c.Stdin, stdout: c.Stdout, exited: c.Exited(), stderrDone: make(chan struct{})}
	go p.readStderr(c.Stderr, log)
	return p, nil
}

func (p *process) readStderr(r *os.File, log *slog.Logger) {
	defer close(p.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		log.Debug("language server stderr", "line", line)
		p.mu.Lock()
		p.lines++
		if len(p.head) < headLines {
			p.head = append(p.head, line)
		} else {
			p.tail = append(p.tail, line)
			if len(p.tail) > tailLines {
				p.tail = p.tail[len(p.tail)-tailLines:]
			}
		}
		p.mu.Unlock()
	}
}

// stderrTail returns, in one line, the first and last lines the server
// wrote to stderr.
func (p *process) stderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := append([]string(nil), p.head...)
	if p.lines > len(p.head)+len(p.tail) {
		lines = append(lines, "…")
	}
	lines = append(lines, p.tail...)
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}

// exitReason describes how the child ended, once it has.
func (p *process) exitReason() string {
	select {
	case <-p.exited:
	default:
		return "still running"
	}
	code, signal := p.child.ExitCode()
	if signal != "" {
		return "killed by " + signal
	}
	return "exited with status " + strconv.Itoa(code)
}

// rwc is the LSP stream: reads from the child's stdout, writes to its
// stdin. A write that cannot complete within writeTimeout (the server
// stopped reading) fails and reports the hang.
func (p *process) rwc(writeTimeout time.Duration, onHang func()) *stream {
	p.onHang = onHang
	return &stream{p: p, timeout: writeTimeout}
}

// hangErr says why writing to the server failed, if it hung.
func (p *process) hangErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hang
}

type stream struct {
	p       *process
	timeout time.Duration
}

func (s *stream) Read(b []byte) (int, error) { return s.p.stdout.Read(b) }

func (s *stream) Write(b []byte) (int, error) {
	s.p.stdin.SetWriteDeadline(time.Now().Add(s.timeout))
	n, err := s.p.stdin.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.p.mu.Lock()
		if s.p.hang == nil {
			s.p.hang = fmt.Errorf("the server stopped reading its input for %v", s.timeout)
		}
		s.p.mu.Unlock()
		if s.p.onHang != nil {
			s.p.onHang()
		}
	}
	return n, err
}

func (s *stream) Close() error {
	s.p.stdin.Close()
	return s.p.stdout.Close()
}

// stop ends the child in steps: close its stdin, give it grace to exit,
// SIGTERM the group, then SIGKILL what is left. It returns once no process
// of the group is alive (or, if one cannot be killed, after a bounded
// wait) and the child has been reaped.
func (p *process) stop(grace time.Duration) {
	p.child.Stop(grace)
	select {
	case <-p.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	p.stdout.Close()
}

// pid is the child's process ID, also its group's ID.
func (p *process) pid() int { return p.child.PID() }
