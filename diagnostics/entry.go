package diagnostics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// entry is one server instance for one root, through its lifetime of
// starts, crashes and restarts. Its fields are guarded by the pool's mu.
type entry struct {
	pool *Pool
	srv  *server
	root string

	state  State
	reason string
	// exit and stderr are how the last failed start or crash ended and
	// the last words of the server's stderr.
	exit, stderr string
	lastErr      error // why the last start failed
	argv         []string
	client       *lsp.Client
	proc         *process
	starting     chan struct{} // closed when the start in progress ends
	failures     int           // consecutive failed starts and crashes
	restarts     int
	retryAt      time.Time
	lastUsed     time.Time
	startedAt    time.Time
	// spawnedAt is when the current instance's process was started: it
	// read every file not changed on disk since as it is now.
	spawnedAt time.Time
	// health is the current (or last) instance's loading of the
	// workspace; loadFailures counts the instances in a row that could
	// not load it, for the backoff before the next try.
	health       *health
	loadFailures int
	// anchored is the file anchor opened in the current instance, which
	// a later query waits for too (the first may still be waiting);
	// opened is closed once the server was sent it, or its open failed.
	anchored string
	opened   chan struct{}
	// reprobing says the start in progress replaces an instance that
	// could not load the workspace: it is not announced as a new start.
	reprobing bool
	// warm is the warm-up (Pool.Warm) while it runs.
	warm *warmup
}

const maxBackoff = time.Minute

// acquire returns the running client, starting the server when it is idle
// or its retry is due. It waits for a start in progress; ctx bounds only
// the wait, not the start, which the pool owns.
func (e *entry) acquire(ctx context.Context) (*lsp.Client, error) {
	p := e.pool
	p.mu.Lock()
	e.stopWarmLocked(ctx)
	started := false
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: the pool is closed", ErrUnavailable)
		}
		switch e.state {
		case StateRunning:
			if h := e.health; !started && h != nil && h.fail != nil && !h.fail.RetryAt.IsZero() && !time.Now().Before(h.fail.RetryAt) {
				// It could not load the workspace and its retry is due:
				// start it again, in case what it lacked is there now.
				e.reprobeLocked()
				started = true
				continue
			}
			e.lastUsed = time.Now()
			c := e.client
			p.mu.Unlock()
			return c, nil
		case StateStarting:
			ch := e.starting
			p.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for %s to start: %w", e.srv.name, ctx.Err())
			}
			p.mu.Lock()
			continue
		case StateMissing:
			if started {
				err := fmt.Errorf("lsp.%s: %w", e.srv.name, e.lastErr)
				p.mu.Unlock()
				return nil, err
			}
		case StateFailed, StateCrashed:
			if wait := time.Until(e.retryAt); started || wait > 0 {
				err := fmt.Errorf("%w: %s %s: %s", ErrUnavailable, e.srv.name, e.state, e.reason)
				if wait > 0 {
					err = fmt.Errorf("%w; next try in %v", err, wait.Round(time.Millisecond))
				}
				p.mu.Unlock()
				return nil, err
			}
			e.restarts++
		}
		// Idle, stopped, missing, or a failure whose retry is due: start.
		started = true
		e.state, e.reason = StateStarting, ""
		e.starting = make(chan struct{})
		p.wg.Add(1)
		go e.start(e.starting)
	}
}

// reprobeLocked replaces the running instance, which cannot load the
// workspace, with a new one: the old one is shut down, then the new one
// starts. The caller holds the pool's mu.
func (e *entry) reprobeLocked() {
	p := e.pool
	old, oldProc := e.client, e.proc
	e.client, e.proc = nil, nil
	e.state, e.reason = StateStarting, ""
	e.starting = make(chan struct{})
	e.restarts++
	e.reprobing = true
	done := e.starting
	p.log.Info("starting a language server again: it could not load the workspace", "server", e.srv.name, "root", e.root)
	p.wg.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 2*time.Second)
		old.Shutdown(ctx)
		cancel()
		oldProc.stop(2 * time.Second)
		e.start(done)
	}()
}

// start runs the server and the initialize handshake, then watches it.
func (e *entry) start(done chan struct{}) {
	p := e.pool
	defer p.wg.Done()
	defer close(done)
	argv, initOptions, err := e.srv.launch(e.root, p.lookPath)
	var proc *process
	var c *lsp.Client
	h := newHealth()
	p.mu.Lock()
	e.argv, e.health = argv, h
	p.mu.Unlock()
	spawned := time.Now()
	if err == nil {
		log := p.log.With("server", e.srv.name, "root", e.root)
		proc, err = startProcess(argv, e.root, e.env(), e.pool.opts.Children, log)
		if err == nil {
			ctx, cancel := context.WithTimeout(p.ctx, p.opts.StartTimeout)
			rwc := proc.rwc(p.opts.WriteTimeout, func() {
				// The stream is broken mid-message: end the connection,
				// which watch reports as a crash.
				if c := e.currentClient(); c != nil {
					c.Close()
				}
			})
			c, err = lsp.Connect(ctx, rwc, lsp.Options{
				Root:                  e.root,
				ClientVersion:         p.opts.ClientVersion,
				InitializationOptions: initOptions,
				Settings:              e.srv.settings,
				Logger:                log,
				OnNotice:              func(n lsp.Notice) { e.notice(h, n) },
			})
			cancel()
			if err != nil {
				err = e.explain(err, proc)
				proc.stop(time.Second)
			}
		}
	}

	p.mu.Lock()
	e.exit, e.stderr = "", ""
	reprobe := e.reprobing
	e.reprobing = false
	if err != nil {
		if proc != nil {
			e.exit, e.stderr = proc.ending, proc.stderrTail()
		}
		e.failures++
		e.lastErr = err
		e.state, e.reason = StateFailed, err.Error()
		e.retryAt = time.Now().Add(backoff(p.opts.Backoff, e.failures))
		if errors.Is(err, ErrNotInstalled) {
			// Looked for again on next use: it may have been installed.
			e.state, e.failures = StateMissing, 0
		}
		st := e.statusLocked()
		p.mu.Unlock()
		p.log.Warn("language server failed to start", "server", e.srv.name, "root", e.root, "err", err)
		p.notify(st)
		return
	}
	if p.closed {
		p.mu.Unlock()
		c.Close()
		proc.stop(time.Second)
		return
	}
	e.state, e.client, e.proc = StateRunning, c, proc
	h.client = c
	e.startedAt, e.lastUsed, e.spawnedAt = time.Now(), time.Now(), spawned
	st := e.statusLocked()
	p.mu.Unlock()
	p.log.Info("language server started", "server", e.srv.name, "root", e.root, "pid", proc.pid())
	if !reprobe || st.Load == LoadFailed {
		// A new instance of one that could not load is announced when
		// its load is known: failed again (told once by those who
		// watch) or recovered.
		p.notify(st)
	}
	p.wg.Add(1)
	go e.watch(c, proc)
}

// explain turns a failed handshake into a reason a person can act on.
func (e *entry) explain(err error, proc *process) error {
	// Give an exiting process a moment, so its status and last words
	// are known.
	select {
	case <-proc.exited:
		// Its last words may still be in the pipe.
		select {
		case <-proc.stderrDone:
		case <-time.After(200 * time.Millisecond):
		}
	case <-time.After(200 * time.Millisecond):
	}
	var parts []string
	parts = append(parts, err.Error())
	if hang := proc.hangErr(); hang != nil {
		parts = append(parts, hang.Error())
	}
	if r := proc.exitReason(); r != "still running" {
		proc.ending = r
		parts = append(parts, "the process "+r)
	}
	if tail := proc.stderrTail(); tail != "" {
		parts = append(parts, "its stderr: "+tail)
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
}

// watch waits for the client's connection to end. If that was not the
// pool's doing, the server crashed: its process group is stopped and the
// entry waits for its next use to restart.
func (e *entry) watch(c *lsp.Client, proc *process) {
	p := e.pool
	defer p.wg.Done()
	select {
	case <-c.Done():
	case <-proc.exited:
		c.Close()
	case <-p.ctx.Done():
		return // Close stops it
	}
	p.mu.Lock()
	if e.client != c {
		p.mu.Unlock()
		return // stopped on purpose
	}
	p.mu.Unlock()
	proc.stop(time.Second)

	var reason []string
	if err := c.Err(); err != nil {
		reason = append(reason, err.Error())
	}
	if err := proc.hangErr(); err != nil {
		reason = append(reason, err.Error())
	}
	reason = append(reason, "the process "+proc.exitReason())
	if tail := proc.stderrTail(); tail != "" {
		reason = append(reason, "its stderr: "+tail)
	}

	p.mu.Lock()
	if e.client != c {
		p.mu.Unlock()
		return
	}
	if time.Since(e.startedAt) > maxBackoff {
		e.failures = 0 // it ran well for a while: start the backoff over
	}
	e.failures++
	e.client, e.proc = nil, nil
	e.state, e.reason = StateCrashed, strings.Join(reason, "; ")
	e.exit, e.stderr = proc.exitReason(), proc.stderrTail()
	e.retryAt = time.Now().Add(backoff(p.opts.Backoff, e.failures))
	st := e.statusLocked()
	p.mu.Unlock()
	p.log.Warn("language server crashed", "server", e.srv.name, "root", e.root, "reason", st.Reason)
	p.notify(st)
}

// stop ends a running server and leaves the entry in state, with reason.
func (e *entry) stop(state State, reason string) {
	p := e.pool
	p.mu.Lock()
	for e.state == StateStarting {
		ch := e.starting
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	c, proc := e.client, e.proc
	e.client, e.proc = nil, nil
	if e.state == StateRunning {
		e.state, e.reason = state, reason
	}
	st := e.statusLocked()
	p.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 2*time.Second)
	c.Shutdown(ctx)
	cancel()
	proc.stop(2 * time.Second)
	p.notify(st)
}

func (e *entry) currentClient() *lsp.Client {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return e.client
}

func (e *entry) idleFor() time.Duration {
	if e.state != StateRunning {
		return 0
	}
	return time.Since(e.lastUsed)
}

func (e *entry) status() ServerStatus {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return e.statusLocked()
}

func (e *entry) statusLocked() ServerStatus {
	st := ServerStatus{Name: e.srv.name, Root: e.root, Command: e.argv, State: e.state, Reason: e.reason, Restarts: e.restarts, Extensions: e.srv.extensions}
	if e.state == StateFailed || e.state == StateCrashed {
		st.RetryAt = e.retryAt
		st.Exit, st.Stderr = e.exit, e.stderr
	}
	st.Load, st.LoadError = e.loadStateLocked()
	if st.Load != "" {
		st.LoadMillis = e.loadTimeLocked().Milliseconds()
	}
	if e.proc != nil {
		st.PID = e.proc.pid()
	}
	if e.client != nil {
		info := e.client.ServerInfo()
		version := ""
		if info.Version != nil {
			version = *info.Version
		}
		st.Server = strings.TrimSpace(info.Name + " " + shortVersion(version))
	}
	return st
}

// shortVersion reduces a server's version to one short line: gopls sends
// its whole build information as JSON, whose "Version" is what people
// want.
func shortVersion(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") {
		var build struct{ Version string }
		if json.Unmarshal([]byte(v), &build) == nil && build.Version != "" {
			return build.Version
		}
	}
	if i := strings.IndexAny(v, "\r\n"); i >= 0 {
		v = v[:i]
	}
	const max = 80
	if len(v) > max {
		v = v[:max] + "…"
	}
	return v
}

func (e *entry) env() []string {
	env := e.pool.opts.Env
	if len(e.srv.env) == 0 {
		return env
	}
	env = append([]string(nil), env...)
	for k, v := range e.srv.env {
		env = append(env, k+"="+v)
	}
	return env
}

func backoff(base time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}
