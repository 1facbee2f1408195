package acp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/darman-dev/darman/server/rpc"
)

// The JSON-RPC error codes darman's handlers choose.
const (
	codeInvalidParams = -32602
	codeInternalError = -32603
	codeNotFound      = -32002
)

// Error is a JSON-RPC error: a handler returns one to choose the code; any
// other error is answered as an internal error with its text.
type Error = rpc.Error

func invalidParams(format string, a ...any) *Error {
	return &Error{Code: codeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// conn is the connection to the client: server/rpc's engine speaking ACP
// (newline-delimited JSON-RPC 2.0, $/cancel_request). It lives for one
// Serve.
type conn struct {
	rc *rpc.Conn
	// ctx is Serve's: notifications are not part of any request.
	ctx context.Context
}

// unbounded are the client calls that wait as long as their context
// lets them: a person answers them, or they last as long as a command
// runs. The others wait at most rpc's call timeout.
var unbounded = map[string]bool{
	"session/request_permission": true,
	"terminal/wait_for_exit":     true,
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.rc.Notify(c.ctx, method, params)
}

// call sends a request to the client and decodes its answer into result.
// The client's error answer comes back as a *callError (its Message
// after the method), which unwraps to the *Error.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	var err error
	if unbounded[method] {
		err = c.rc.CallWait(ctx, 0, method, params, result)
	} else {
		err = c.rc.Call(ctx, method, params, result)
	}
	var e *Error
	if errors.As(err, &e) {
		return &callError{method: method, err: e}
	}
	return err
}

// pending is a question sent to the client whose answer is not yet read.
type pending struct {
	p      *rpc.Pending
	method string
}

// ask writes a request a person answers (no time limit but ctx's) to the
// client now, after every update sent before it; wait reads the answer.
func (c *conn) ask(ctx context.Context, method string, params any) (*pending, error) {
	p, err := c.rc.Send(ctx, 0, method, params)
	if err != nil {
		return nil, err
	}
	return &pending{p: p, method: method}, nil
}

// wait reads the answer into result, as call does.
func (p *pending) wait(result any) error {
	err := p.p.Wait(result)
	var e *Error
	if errors.As(err, &e) {
		return &callError{method: p.method, err: e}
	}
	return err
}

type callError struct {
	method string
	err    *Error
}

func (e *callError) Error() string { return e.method + ": " + e.err.Message }
func (e *callError) Unwrap() error { return e.err }

// stdio joins Serve's reader and writer. Closing it closes neither: they
// are the caller's, and a Read of r still blocked when Serve ends returns
// only when the caller closes r.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }
