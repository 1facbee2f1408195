package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/child"
)

// conn is one live connection to a server: a session and, for a local
// server, its process group. Its owner is the binding; close stops it.
type conn struct {
	cs      *mcp.ClientSession
	started time.Time

	// Local servers only.
	proc   *child.Process
	exited <-chan struct{} // closed once the leader is reaped
	stderr *stderrLog

	closing atomic.Bool
	dead    chan struct{} // closed when the session has ended
	once    sync.Once

	// adopted is closed once the connection's first catalog is the
	// binding's, stopped once close began: a tools/list_changed that
	// arrives during the handshake waits for the one, or gives up on the
	// other.
	adopted     chan struct{}
	adoptOnce   sync.Once
	stopped     chan struct{}
	stoppedOnce sync.Once
}

func newConn() *conn {
	return &conn{dead: make(chan struct{}), adopted: make(chan struct{}), stopped: make(chan struct{}), started: time.Now()}
}

func (c *conn) adopt() { c.adoptOnce.Do(func() { close(c.adopted) }) }

// bound is ctx, also ended when the connection is being closed or life
// ends: a server's request to darman (a human's answer, a model call) must
// not hold the connection open, since closing waits for it.
func (c *conn) bound(ctx, life context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.stopped:
		case <-life.Done():
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

func (c *conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// close ends the session, then stops the process group in steps: stdin
// closed, a grace period, SIGTERM, SIGKILL.
func (c *conn) close() {
	c.once.Do(func() {
		c.closing.Store(true)
		c.stoppedOnce.Do(func() { close(c.stopped) })
		if c.cs != nil {
			c.cs.Close()
		}
		if c.proc == nil {
			return
		}
		c.proc.Stop(2 * time.Second)
	})
}

// exitStatus describes how the leader ended, "" while it runs.
func (c *conn) exitStatus() string {
	if c.proc == nil {
		return ""
	}
	if st := c.proc.State(); st != nil {
		return st.String()
	}
	return ""
}

// spawn starts a local server in its own process group, recorded in the
// registry before the handshake so nothing escapes a failed start.
func spawn(d Definition, children *child.Registry, log *slog.Logger) (*conn, mcp.Transport, *Failure) {
	path, err := exec.LookPath(d.Command)
	if err != nil {
		return nil, nil, &Failure{Class: FailureNotFound, Message: fmt.Sprintf("command %q: %v; install it or fix command", d.Command, err)}
	}
	cmd := exec.Command(path, d.Args...)
	cmd.Dir = d.Dir
	cmd.Env = os.Environ()
	if d.Environ != nil {
		cmd.Env = append([]string(nil), d.Environ...)
	}
	for k, v := range d.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p, err := child.Start(cmd, child.Options{Name: "mcp: " + d.Name, Registry: children, Stdin: true})
	if err != nil {
		return nil, nil, &Failure{Class: FailureSpawn, Message: fmt.Sprintf("starting %q: %v", d.Command, err)}
	}
	c := newConn()
	c.proc, c.exited = p, p.Exited()
	c.stderr = newStderrLog(p.Stderr, log, d.secrets())
	go func() {
		<-p.Exited()
		// A leader that exits ends the session even if a grandchild
		// still holds its stdout.
		p.Stdout.Close()
	}()
	return c, &mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}, nil
}

// remote prepares a connection to a remote server.
func remote(d Definition) (*conn, mcp.Transport) {
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: d.Headers}}
	c := newConn()
	if d.SSE {
		return c, sseTransport{&mcp.SSEClientTransport{Endpoint: d.URL, HTTPClient: hc}}
	}
	return c, &mcp.StreamableClientTransport{Endpoint: d.URL, HTTPClient: hc, MaxRetries: 2}
}

// sseTransport keeps the legacy transport's event stream open past the
// handshake: the SDK ties the stream's GET to the context given to
// Connect, which for darman is the startup deadline. The stream lives
// until the session is closed; only the wait for its first answer is
// bounded by ctx.
type sseTransport struct{ t *mcp.SSEClientTransport }

func (s sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	type result struct {
		conn mcp.Connection
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, err := s.t.Connect(streamCtx)
		done <- result{conn, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		return sseConn{Connection: r.conn, cancel: cancel}, nil
	case <-ctx.Done():
		cancel()
		go func() {
			if r := <-done; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// sseConn ends the event stream's request when the session closes.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// classify names the failure of a connect attempt.
func classify(ctx context.Context, c *conn, err error) FailureClass {
	msg := err.Error()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return FailureHandshakeTimeout
	case c.exitStatus() != "" && !strings.Contains(c.exitStatus(), "broken pipe"):
		// A server killed by SIGPIPE died writing to a connection the
		// SDK had already dropped, for what the server wrote before.
		return FailureExited
	case strings.Contains(msg, "unsupported protocol version"):
		return FailureProtocol
	case strings.Contains(msg, "401") || strings.Contains(msg, "403") ||
		strings.Contains(msg, "Unauthorized") || strings.Contains(msg, "Forbidden"):
		return FailureAuth
	case strings.Contains(msg, "invalid character") || strings.Contains(msg, "unmarshal") ||
		strings.Contains(msg, "decod") || strings.Contains(msg, "JSON"):
		return FailureProtocol
	case c.proc == nil:
		return FailureUnreachable
	default:
		return FailureProtocol
	}
}

const (
	maxStderrLine = 1024
	maxStderrLog  = 64 << 10
	stderrTailLen = 600
)

// stderrLog drains a server's stderr so it never blocks on a full pipe,
// logs it line by line up to a total, and keeps the tail for failure
// messages.
type stderrLog struct {
	mu   sync.Mutex
	tail []byte
	done chan struct{}
}

func newStderrLog(r io.ReadCloser, log *slog.Logger, secrets []string) *stderrLog {
	s := &stderrLog{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer r.Close()
		br := bufio.NewReaderSize(r, maxStderrLine)
		logged := 0
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				s.mu.Lock()
				s.tail = append(s.tail, line...)
				if len(s.tail) > stderrTailLen {
					s.tail = append(s.tail[:0], s.tail[len(s.tail)-stderrTailLen:]...)
				}
				s.mu.Unlock()
				if logged < maxStderrLog {
					logged += len(line)
					log.Debug("mcp server stderr", "line", scrub(string(line), secrets))
					if logged >= maxStderrLog {
						log.Debug("mcp server stderr: further output not logged")
					}
				}
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	}()
	return s
}

// Tail returns the last bytes the server wrote to stderr, waiting briefly
// for a reader that is still draining what an exited server left.
func (s *stderrLog) Tail() string {
	if s == nil {
		return ""
	}
	select {
	case <-s.done:
	case <-time.After(200 * time.Millisecond):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(string(s.tail))
}
