package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// RequestFunc answers a request. ctx ends when the client cancels the
// request, the connection ends or the server shuts down; the handler must
// then return promptly. params are the raw params (nil when absent).
type RequestFunc func(ctx context.Context, params json.RawMessage) (any, error)

// NotificationFunc handles a notification on the read goroutine (see the
// package documentation: it must not wait for the client). An error is
// logged.
type NotificationFunc func(ctx context.Context, params json.RawMessage) error

// Handlers are the methods a server implements.
type Handlers struct {
	// Initialize answers initialize, on the read goroutine; required for
	// LSP. The server counts as initialized once it returns without error.
	Initialize RequestFunc
	// Shutdown stops the server's work when the client sends shutdown, on
	// the read goroutine, before the reply; nil does nothing. Its error is
	// the reply's.
	Shutdown func(ctx context.Context) error
	// Requests and Notifications are the other methods, by name.
	Requests      map[string]RequestFunc
	Notifications map[string]NotificationFunc
}

// Protocol is the protocol a Conn speaks over JSON-RPC: it chooses the
// framing and the few rules that differ.
type Protocol int

const (
	// LSP: Content-Length framing; the initialize → shutdown → exit
	// lifecycle; $/cancelRequest {id}; a handler's plain error answers
	// RequestFailed (-32803).
	LSP Protocol = iota
	// ACP (the Agent Client Protocol): newline framing; no lifecycle
	// (initialize is answered on the read goroutine, like LSP's, but
	// gates nothing); $/cancel_request {requestId}; a handler's plain
	// error answers InternalError (-32603); "jsonrpc": "2.0" required.
	ACP
)

// dialect is what differs between the Protocols.
type dialect struct {
	name                      string // in log lines
	framing                   Framing
	lifecycle                 bool
	cancelMethod, cancelField string
	failedCode                int64
	strictVersion             bool
}

var dialects = [...]dialect{
	LSP: {name: "lsp", framing: ContentLength, lifecycle: true, cancelMethod: "$/cancelRequest", cancelField: "id", failedCode: CodeRequestFailed},
	ACP: {name: "acp", framing: Newline, cancelMethod: "$/cancel_request", cancelField: "requestId", failedCode: jsonrpc2.CodeInternalError, strictVersion: true},
}

// Options configure a Conn.
type Options struct {
	// Protocol is LSP (the zero value) or ACP.
	Protocol Protocol
	// CallTimeout bounds a server→client Call; zero means 30 seconds.
	CallTimeout time.Duration
	// MaxBody is the largest message accepted (see StreamOptions).
	MaxBody int64
	// Logger receives protocol problems and handler failures; nil discards.
	Logger *slog.Logger
}

// Result says how a connection ended.
type Result struct {
	// Shutdown is set when the client sent shutdown.
	Shutdown bool
	// Exit is set when the client sent exit; otherwise the input ended
	// (or the context given to Run was cancelled).
	Exit bool
	// Err is the read error that ended the connection, other than the
	// end of the input (nil then).
	Err error
}

// ExitCode is the process exit status LSP asks for: 0 after shutdown, 1
// without it.
func (r Result) ExitCode() int {
	if r.Shutdown {
		return 0
	}
	return 1
}

type state int32

const (
	stateNew state = iota
	stateInitialized
	stateShutdown
)

// Conn is one client connection: it dispatches what the client sends and
// lets the server notify and call the client. Make it with NewConn, start
// it with Run. Its methods are safe for concurrent use.
type Conn struct {
	handlers Handlers
	opts     Options
	d        dialect
	log      *slog.Logger
	stream   *Stream

	jc    atomic.Pointer[jsonrpc2.Conn]
	state atomic.Int32
	// exit is set by the exit notification, before the connection closes.
	exit atomic.Bool

	ctx     context.Context // the connection's lifetime, set by Run
	ready   chan struct{}   // closed once Run has set jc
	mu      sync.Mutex
	pending map[jsonrpc2.ID]*inflight
	closing bool           // Run is waiting for the handlers: start no more
	wg      sync.WaitGroup // request goroutines

	nextID atomic.Uint64
}

// inflight is a request being answered.
type inflight struct {
	method string
	cancel context.CancelFunc
	// replied is set by whoever answers first: the handler or a
	// $/cancelRequest.
	replied atomic.Bool
}

// NewConn returns a connection over rwc that serves handlers once Run is
// called. Closing happens when Run returns.
func NewConn(rwc io.ReadWriteCloser, handlers Handlers, opts *Options) *Conn {
	c := &Conn{handlers: handlers, pending: map[jsonrpc2.ID]*inflight{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.CallTimeout <= 0 {
		c.opts.CallTimeout = 30 * time.Second
	}
	if c.opts.Protocol < 0 || int(c.opts.Protocol) >= len(dialects) {
		c.opts.Protocol = LSP
	}
	c.d = dialects[c.opts.Protocol]
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.stream = NewStream(rwc, &StreamOptions{Framing: c.d.framing, MaxBody: c.opts.MaxBody, StrictVersion: c.d.strictVersion, Logger: c.log})
	c.ready = make(chan struct{})
	c.stream.handle = func(req *jsonrpc2.Request) {
		<-c.ready // the read loop starts before Run has the jsonrpc2 connection
		handler{c}.Handle(c.ctx, c.jc.Load(), req)
	}
	return c
}

// Run serves the connection until the client sends exit, the input ends or
// ctx is cancelled. Before returning it cancels the requests still running
// and waits for their handlers.
func (c *Conn) Run(ctx context.Context) Result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx
	jc := jsonrpc2.NewConn(ctx, c.stream, handler{c}, jsonrpc2.SetLogger(logAdapter{c.log}))
	c.jc.Store(jc)
	close(c.ready)
	<-jc.DisconnectNotify()
	cancel()
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.wg.Wait()
	return Result{Shutdown: state(c.state.Load()) == stateShutdown, Exit: c.exit.Load(), Err: c.stream.readFailure()}
}

// Initialized reports whether initialize has been answered and shutdown
// has not been asked (for ACP: whether initialize has been answered).
func (c *Conn) Initialized() bool { return state(c.state.Load()) == stateInitialized }

// Notify sends a notification to the client.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	jc := c.jc.Load()
	if jc == nil {
		return fmt.Errorf("%s: the connection is not running", method)
	}
	if err := jc.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("send %s to the editor: %w", method, err)
	}
	return nil
}

// Call sends a request to the client and decodes its answer into result
// (which may be nil). It waits at most Options.CallTimeout; when ctx ends
// or the time is up it tells the client to cancel ($/cancelRequest, ACP's
// $/cancel_request) and returns an error. A reply with an error is
// returned as a *jsonrpc2.Error (see IsMethodNotFound).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallWait(ctx, c.opts.CallTimeout, method, params, result)
}

// CallWait is Call with its own time limit instead of
// Options.CallTimeout, for a request a person answers (a permission
// question may take minutes) or that lasts as long as a command runs; a
// timeout of zero or less sets none: only ctx ends the wait.
func (c *Conn) CallWait(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	p, err := c.Send(ctx, timeout, method, params)
	if err != nil {
		return err
	}
	return p.Wait(result)
}

// Pending is a request sent to the client (Send) whose answer is not yet
// read: a front sends a question in its place among its notifications,
// and waits for the person's answer elsewhere.
type Pending struct {
	c       *Conn
	jc      *jsonrpc2.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	method  string
	id      jsonrpc2.ID
	w       jsonrpc2.Waiter
}

// Send writes a request to the client before it returns, so that it
// comes after everything sent before the call; Pending.Wait reads its
// answer with CallWait's time limit (none for a timeout of zero or less)
// under ctx.
func (c *Conn) Send(ctx context.Context, timeout time.Duration, method string, params any) (*Pending, error) {
	jc := c.jc.Load()
	if jc == nil {
		return nil, fmt.Errorf("%s: the connection is not running", method)
	}
	cancel := context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	w, err := jc.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("send %s to the editor: %w", method, err)
	}
	return &Pending{c: c, jc: jc, ctx: ctx, cancel: cancel, timeout: timeout, method: method, id: id, w: w}, nil
}

// Wait waits for the answer and decodes it into result (which may be
// nil), as CallWait does; call it once.
func (p *Pending) Wait(result any) error {
	defer p.cancel()
	ctx, method := p.ctx, p.method
	err := p.w.Wait(ctx, result)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Tell the client to stop; the late answer, if any, is dropped.
		p.jc.Notify(context.WithoutCancel(ctx), p.c.d.cancelMethod, map[string]jsonrpc2.ID{p.c.d.cancelField: p.id})
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: the editor did not answer within %s: %w", method, p.timeout, err)
		}
		return fmt.Errorf("%s: %w", method, err)
	case errors.Is(err, jsonrpc2.ErrClosed):
		return fmt.Errorf("%s: the connection to the editor is closed: %w", method, err)
	}
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return err
	}
	return fmt.Errorf("%s: cannot read the editor's answer: %w", method, err)
}

// handler adapts Conn to jsonrpc2.Handler; it runs on the read goroutine.
type handler struct{ c *Conn }

func (h handler) Handle(ctx context.Context, jc *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	c.jc.CompareAndSwap(nil, jc)
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		c.notification(ctx, jc, req.Method, params)
		return
	}
	c.request(ctx, jc, req, params)
}

func (c *Conn) notification(ctx context.Context, jc *jsonrpc2.Conn, method string, params json.RawMessage) {
	switch {
	case method == "exit" && c.d.lifecycle:
		c.exit.Store(true)
		jc.Close()
		return
	case method == c.d.cancelMethod:
		var p map[string]jsonrpc2.ID
		if err := Decode(params, &p); err != nil || p == nil {
			c.log.Warn(c.d.name+": "+method+" with unusable params", "err", err)
			return
		}
		if id, ok := p[c.d.cancelField]; ok {
			c.cancelRequest(ctx, jc, id)
		}
		return
	}
	switch state(c.state.Load()) {
	case stateNew:
		if c.d.lifecycle {
			c.log.Debug(c.d.name+": notification before initialize dropped", "method", method)
			return
		}
	case stateShutdown:
		c.log.Debug(c.d.name+": notification after shutdown dropped", "method", method)
		return
	}
	fn, ok := c.handlers.Notifications[method]
	if !ok {
		if !strings.HasPrefix(method, "$/") {
			c.log.Debug(c.d.name+": unhandled notification", "method", method)
		}
		return
	}
	if err := c.safely(method, func() (any, error) { return nil, fn(ctx, params) }); err != nil {
		c.log.Warn(c.d.name+": notification failed", "method", method, "err", err)
	}
}

func (c *Conn) request(ctx context.Context, jc *jsonrpc2.Conn, req *jsonrpc2.Request, params json.RawMessage) {
	reply := func(result any, err error) {
		c.reply(ctx, jc, req.ID, req.Method, result, err)
	}
	switch st := state(c.state.Load()); {
	case req.Method == "initialize" && (c.d.lifecycle || c.handlers.Initialize != nil):
		if st != stateNew && c.d.lifecycle {
			reply(nil, Errorf(jsonrpc2.CodeInvalidRequest, "initialize was already called; it may be sent once"))
			return
		}
		if c.handlers.Initialize == nil {
			reply(nil, Errorf(jsonrpc2.CodeInternalError, "the server has no initialize handler"))
			return
		}
		var result any
		err := c.safely(req.Method, func() (r any, err error) {
			result, err = c.handlers.Initialize(ctx, params)
			return result, err
		})
		if err == nil {
			c.state.Store(int32(stateInitialized))
		}
		result, after := split(result)
		reply(result, err)
		if err == nil && after != nil {
			after()
		}
		return
	case !c.d.lifecycle:
		// ACP has no lifecycle: every other request is served.
	case st == stateNew:
		reply(nil, Errorf(CodeServerNotInitialized, "the server is not initialized: send initialize first"))
		return
	case st == stateShutdown:
		reply(nil, Errorf(jsonrpc2.CodeInvalidRequest, "the server is shutting down: only exit is accepted after shutdown"))
		return
	case req.Method == "shutdown":
		c.state.Store(int32(stateShutdown))
		var err error
		if c.handlers.Shutdown != nil {
			err = c.safely(req.Method, func() (any, error) { return nil, c.handlers.Shutdown(ctx) })
		}
		reply(nil, err)
		return
	}
	fn, ok := c.handlers.Requests[req.Method]
	if !ok {
		reply(nil, Errorf(jsonrpc2.CodeMethodNotFound, "method not found: %s", req.Method))
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	f := &inflight{method: req.Method, cancel: cancel}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return // the connection is gone: there is no one to answer
	}
	if _, dup := c.pending[req.ID]; dup {
		c.mu.Unlock()
		cancel()
		reply(nil, Errorf(jsonrpc2.CodeInvalidRequest, "request id %s is already in use by a request that has not been answered", req.ID))
		return
	}
	c.pending[req.ID] = f
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer cancel()
		var result any
		err := c.safely(req.Method, func() (r any, err error) {
			result, err = fn(rctx, params)
			return result, err
		})
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		if f.replied.CompareAndSwap(false, true) {
			if err != nil && rctx.Err() != nil && errors.Is(err, context.Canceled) {
				err = Errorf(CodeRequestCancelled, "%s was cancelled", req.Method)
			}
			result, after := split(result)
			reply(result, err)
			if err == nil && after != nil {
				after()
			}
		}
	}()
}

// Then is a handler's answer with work for once it is written: Result is
// the answer, and After (when set) runs once it is written, on the
// goroutine that wrote it — what the client must learn after the answer
// (a session's commands, once it knows the session's id). An error
// answer, or a request cancelled first, drops After.
type Then struct {
	Result any
	After  func()
}

// split is a handler's result as the answer and the work after it.
func split(result any) (any, func()) {
	if t, ok := result.(Then); ok {
		return t.Result, t.After
	}
	return result, nil
}

// cancelRequest answers a running request with RequestCancelled at once and
// cancels its context. An unknown id (already answered) is ignored, as LSP
// asks.
func (c *Conn) cancelRequest(ctx context.Context, jc *jsonrpc2.Conn, id jsonrpc2.ID) {
	c.mu.Lock()
	f := c.pending[id]
	c.mu.Unlock()
	if f == nil {
		return
	}
	// Claim the answer before cancelling, so that the handler, returning
	// at once with the context's error, does not answer first.
	answer := f.replied.CompareAndSwap(false, true)
	f.cancel()
	if answer {
		c.reply(ctx, jc, id, f.method, nil, Errorf(CodeRequestCancelled, "%s was cancelled by the client", f.method))
	}
}

// panicError is a handler's panic.
type panicError struct {
	method string
	value  any
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error in %s: %v", e.method, e.value)
}

// safely runs fn, turning a panic into a *panicError and logging its stack.
func (c *Conn) safely(method string, fn func() (any, error)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error(c.d.name+": handler panicked; the server carries on", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = &panicError{method: method, value: r}
		}
	}()
	_, err = fn()
	return err
}

// reply answers a request. It writes the response to the stream itself:
// jsonrpc2's Reply encodes the result twice (once to a RawMessage, once
// more inside the response, re-compacting it), which for a large answer
// (a hundred code actions) costs more than the handler.
func (c *Conn) reply(_ context.Context, jc *jsonrpc2.Conn, id jsonrpc2.ID, method string, result any, err error) {
	if err == nil {
		var b []byte
		if b, err = json.Marshal(result); err == nil {
			err = c.stream.writeResult(id, b)
			if err != nil {
				c.logSendError(method, err)
			}
			return
		}
		err = fmt.Errorf("cannot encode the result of %s: %w", method, err)
	}
	if sendErr := c.stream.WriteObject(errorReply{JSONRPC: "2.0", ID: &id, Error: toRPCError(err, c.d.failedCode)}); sendErr != nil {
		c.logSendError(method, sendErr)
	}
}

func (c *Conn) logSendError(method string, err error) {
	c.log.Debug(c.d.name+": cannot send the reply", "method", method, "err", err)
}

func toRPCError(err error, failedCode int64) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	var pe *panicError
	switch {
	case errors.As(err, &je):
		return je
	case errors.As(err, &pe):
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: pe.Error()}
	}
	return &jsonrpc2.Error{Code: failedCode, Message: err.Error()}
}

// logAdapter sends jsonrpc2's own log lines to slog.
type logAdapter struct{ log *slog.Logger }

func (l logAdapter) Printf(format string, v ...any) {
	l.log.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
