package wire

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/darman-dev/darman/agent/llm"
)

// IdleWatch fails an HTTP exchange that receives nothing for its timeout:
// neither the response headers nor, afterwards, a byte of the body. It runs
// as an SDK middleware, so it sees every byte on the wire, the keep-alive
// pings that the SDKs swallow included.
type IdleWatch struct {
	Timeout time.Duration
}

type roundTrip = func(*http.Request) (*http.Response, error)

func (w IdleWatch) Do(req *http.Request, next roundTrip) (*http.Response, error) {
	if w.Timeout <= 0 {
		return next(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stall := &llm.Error{Kind: llm.ErrStalled, Idle: w.Timeout, URL: req.URL.String()}
	timer := time.AfterFunc(w.Timeout, func() { cancel(stall) })
	res, err := next(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		stalled := context.Cause(ctx) == error(stall)
		cancel(nil)
		if stalled {
			return nil, stall
		}
		return res, err
	}
	res.Body = &idleBody{rc: res.Body, timer: timer, timeout: w.Timeout, ctx: ctx, cancel: cancel, stall: stall}
	return res, nil
}

// idleBody pushes the stall deadline back on every read that returns data.
type idleBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stall   *llm.Error
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	if err != nil && err != io.EOF && context.Cause(b.ctx) == error(b.stall) {
		return n, b.stall
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
