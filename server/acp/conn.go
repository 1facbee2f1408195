package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// The JSON-RPC error codes darman answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeCancelled      = -32800
	codeNotFound       = -32002
)

// maxLine bounds one message; a longer line is answered with an error and
// skipped.
const maxLine = 64 << 20

// Error is a JSON-RPC error: a handler returns one to choose the code; any
// other error is answered as an internal error with its text.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

func invalidParams(format string, a ...any) *Error {
	return &Error{Code: codeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// message is any JSON-RPC 2.0 message on the wire.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// requestFunc answers a request; ctx ends when the client cancels it
// ($/cancel_request) or the connection ends.
type requestFunc func(ctx context.Context, params json.RawMessage) (any, error)

// notificationFunc handles a notification on the read loop, in the order
// they came: it must not wait for the client.
type notificationFunc func(ctx context.Context, params json.RawMessage)

// conn is newline-delimited JSON-RPC 2.0 over a byte stream, both ways:
// every message is one line of JSON. Requests from the client run
// concurrently; notifications run in order on the read loop; what the
// server sends is written whole, one message at a time, in the order the
// writes were made. A handler's panic is answered with an internal error
// and the connection lives on; a line that is not a JSON-RPC message is
// answered with an error.
type conn struct {
	r   io.Reader
	w   io.Writer
	log *slog.Logger

	requests      map[string]requestFunc
	notifications map[string]notificationFunc
	// inline are the requests answered on the read loop, before anything
	// that follows them (initialize: the capabilities it sets apply to
	// every later message).
	inline map[string]bool

	wmu sync.Mutex

	mu       sync.Mutex
	pending  map[string]chan message // our calls, by id
	running  map[string]context.CancelFunc
	nextID   atomic.Int64
	closed   chan struct{}
	handlers sync.WaitGroup
}

func newConn(r io.Reader, w io.Writer, log *slog.Logger) *conn {
	return &conn{r: r, w: w, log: log,
		requests: map[string]requestFunc{}, notifications: map[string]notificationFunc{}, inline: map[string]bool{},
		pending: map[string]chan message{}, running: map[string]context.CancelFunc{}, closed: make(chan struct{})}
}

// run reads messages until the input ends or ctx is done, then cancels
// the running requests, fails the calls waiting for an answer and waits
// for the handlers to return.
func (c *conn) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(c.r, 64<<10)
		for {
			line, err := readLine(br, maxLine)
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	var err error
loop:
	for {
		select {
		case line := <-lines:
			c.dispatch(ctx, line)
		case err = <-readErr:
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
	}
	c.mu.Lock()
	close(c.closed)
	for _, stop := range c.running {
		stop()
	}
	c.mu.Unlock()
	cancel()
	c.handlers.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readLine returns the next line without its end, or the tooLong marker
// for a line longer than limit, whose rest is skipped without keeping it.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case skipping:
		case len(buf)+len(chunk) > limit:
			skipping, buf = true, nil
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if skipping {
			return []byte(tooLong), err
		}
		return bytes.TrimSpace(buf), err
	}
}

// tooLong stands for a line that was over maxLine.
const tooLong = "\x00too long"

func (c *conn) dispatch(ctx context.Context, line []byte) {
	if string(line) == tooLong {
		c.reply(nil, nil, &Error{Code: codeInvalidRequest, Message: fmt.Sprintf("the message is longer than %d bytes and was skipped", maxLine)})
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.reply(nil, nil, &Error{Code: codeParseError, Message: fmt.Sprintf("the line is not JSON: %v; send one JSON-RPC 2.0 message per line", err)})
		return
	}
	id := m.ID
	if string(id) == "null" {
		id = nil
	}
	switch {
	case m.JSONRPC != "2.0":
		c.reply(id, nil, &Error{Code: codeInvalidRequest, Message: `the message lacks "jsonrpc": "2.0"`})
	case m.Method != "" && id != nil:
		c.serveRequest(ctx, id, m)
	case m.Method != "":
		c.serveNotification(ctx, m)
	case id != nil && (m.Result != nil || m.Error != nil):
		c.mu.Lock()
		ch := c.pending[string(id)]
		delete(c.pending, string(id))
		c.mu.Unlock()
		if ch == nil {
			c.log.Warn("acp: an answer to no call of ours", "id", string(id))
			return
		}
		ch <- m
	default:
		c.reply(id, nil, &Error{Code: codeInvalidRequest, Message: "the message is neither a request, a notification nor a response"})
	}
}

func (c *conn) serveRequest(ctx context.Context, id json.RawMessage, m message) {
	h, ok := c.requests[m.Method]
	if !ok {
		c.reply(id, nil, &Error{Code: codeMethodNotFound, Message: fmt.Sprintf("darman does not implement %q", m.Method)})
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	after := &afterFuncs{}
	ctx = context.WithValue(ctx, afterKey{}, after)
	c.mu.Lock()
	c.running[string(id)] = cancel
	c.mu.Unlock()
	c.handlers.Add(1)
	serve := func() {
		defer c.handlers.Done()
		defer func() {
			c.mu.Lock()
			delete(c.running, string(id))
			c.mu.Unlock()
			cancel()
		}()
		result, err := c.safely(ctx, m.Method, func() (any, error) { return h(ctx, m.Params) })
		if err != nil && ctx.Err() != nil && !isRPCError(err) {
			err = &Error{Code: codeCancelled, Message: m.Method + " was cancelled"}
		}
		c.reply(id, result, err)
		if err == nil {
			for _, f := range after.list() {
				f()
			}
		}
	}
	if c.inline[m.Method] {
		serve()
		return
	}
	go serve()
}

type afterKey struct{}

// afterFuncs are what a request handler wants done once its answer is
// written.
type afterFuncs struct {
	mu sync.Mutex
	fs []func()
}

func (a *afterFuncs) list() []func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fs
}

// afterReply runs f once the answer to the request ctx belongs to is
// written, if it is a success; outside a request it runs f now.
func afterReply(ctx context.Context, f func()) {
	a, ok := ctx.Value(afterKey{}).(*afterFuncs)
	if !ok {
		f()
		return
	}
	a.mu.Lock()
	a.fs = append(a.fs, f)
	a.mu.Unlock()
}

func isRPCError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func (c *conn) serveNotification(ctx context.Context, m message) {
	if m.Method == "$/cancel_request" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			c.mu.Lock()
			stop := c.running[string(p.RequestID)]
			c.mu.Unlock()
			if stop != nil {
				stop()
			}
		}
		return
	}
	h, ok := c.notifications[m.Method]
	if !ok {
		c.log.Debug("acp: ignoring an unknown notification", "method", m.Method)
		return
	}
	c.safely(ctx, m.Method, func() (any, error) {
		h(ctx, m.Params)
		return nil, nil
	})
}

// safely runs a handler, turning a panic into an internal error.
func (c *conn) safely(ctx context.Context, method string, f func() (any, error)) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("acp: a handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: codeInternalError, Message: fmt.Sprintf("darman failed while handling %s: %v (a bug; the log has the stack)", method, r)}
		}
	}()
	return f()
}

func (c *conn) reply(id json.RawMessage, result any, err error) {
	m := message{JSONRPC: "2.0", ID: id}
	if id == nil {
		m.ID = json.RawMessage("null")
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: codeInternalError, Message: err.Error()}
		}
		m.Error = e
	} else {
		b, merr := json.Marshal(result)
		if merr != nil {
			m.Error = &Error{Code: codeInternalError, Message: "darman could not encode its answer: " + merr.Error()}
		} else {
			m.Result = b
		}
	}
	c.write(m)
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(message{JSONRPC: "2.0", Method: method, Params: b})
}

// call sends a request to the client and decodes its answer into result.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan message, 1)
	c.mu.Lock()
	select {
	case <-c.closed:
		c.mu.Unlock()
		return errors.New("the client is gone")
	default:
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(message{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method, Params: b}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: the client's answer does not decode: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		c.notify("$/cancel_request", map[string]any{"requestId": json.RawMessage(id)})
		return ctx.Err()
	case <-c.closed:
		return fmt.Errorf("%s: the client is gone", method)
	}
}

func (c *conn) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(b)
	return err
}
