package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"
)

// Wire is one provider API as a Stream drives it: agent/llm/anthropic and
// agent/llm/openai implement it. Its methods may be called from several
// goroutines at once.
type Wire interface {
	// Open sends the request and returns the source of the answer's
	// events. Errors of the HTTP exchange may also surface from the
	// source's first Next.
	Open(ctx context.Context, req *Request, model ModelInfo) (Source, error)
	// Classify fills in e from an error of the wire (an error status, an
	// error event in the stream) and reports whether it recognised it.
	Classify(err error, e *Error) bool
	// Models lists the model ids the server offers.
	Models(ctx context.Context) ([]string, error)
}

// Source translates one answer's wire events into Events. It belongs to
// the goroutine of its Stream.
type Source interface {
	// Next appends the Events of the next wire event to buf and returns
	// it. It returns false at the end of the stream: Err then says whether
	// the answer was complete, and buf holds EventUsage and EventFinish
	// when it was.
	Next(buf []Event) ([]Event, bool)
	Err() error
	Close() error
}

// Stream is one model call in progress. It belongs to one goroutine:
// Next, Event, Err and Close must not be called concurrently. To abort it
// from elsewhere, cancel the context given to [Client.Stream].
//
// Reading a stream to its end releases everything it holds; a stream
// abandoned earlier must be closed.
type Stream struct {
	client *Client
	req    *Request
	model  ModelInfo
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger

	src     Source
	buf     []Event
	pos     int
	cur     Event
	err     error
	attempt int
	// shown is set once an event other than EventRetry was handed out:
	// from then on the call is never retried.
	shown bool
	// wait is the delay before the next attempt.
	wait time.Duration
	done bool
}

// Stream starts one model call. The HTTP request is sent by the first
// call to Next.
func (c *Client) Stream(ctx context.Context, req *Request) *Stream {
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{client: c, req: req, ctx: ctx, cancel: cancel}
	if err := validate(req); err != nil {
		err.Provider = c.display
		s.fail(err)
		return s
	}
	fitted, err := fitImages(req, c.imageLimit())
	if err != nil {
		s.fail(&Error{Kind: ErrBadRequest, Provider: c.display, Message: err.Error()})
		return s
	}
	s.req = fitted
	s.model = c.Model(req.Model)
	s.log = c.log.With("model", req.Model)
	return s
}

// Next advances to the next event and reports whether there is one. It
// blocks while the model thinks, and during the delay before a retry.
func (s *Stream) Next() bool {
	for {
		if s.pos < len(s.buf) {
			s.cur = s.buf[s.pos]
			s.pos++
			if s.cur.Kind != EventRetry {
				s.shown = true
			}
			return true
		}
		s.buf, s.pos = s.buf[:0], 0
		if s.done {
			return false
		}
		if s.src == nil {
			s.open()
			continue
		}
		var more bool
		s.buf, more = s.src.Next(s.buf)
		if more {
			continue
		}
		err := s.src.Err()
		s.src.Close()
		s.src = nil
		if err == nil {
			s.finish()
			continue
		}
		s.failed(err)
	}
}

// Event is the event Next advanced to.
func (s *Stream) Event() Event { return s.cur }

// Err is the terminal error, once Next returned false: nil when the model
// finished, else an [*Error].
func (s *Stream) Err() error { return s.err }

// Close aborts the call if it is still running and releases the stream.
// It is safe to call more than once.
func (s *Stream) Close() error {
	s.cancel()
	if s.src != nil {
		s.src.Close()
		s.src = nil
	}
	if !s.done {
		s.done = true
		if s.err == nil {
			s.err = &Error{Kind: ErrCanceled, Provider: s.client.display, Model: s.req.Model, Err: context.Canceled}
		}
	}
	s.buf, s.pos = nil, 0
	return nil
}

func (s *Stream) open() {
	if s.wait > 0 {
		t := time.NewTimer(s.wait)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			s.failed(s.ctx.Err())
			return
		}
		s.wait = 0
	}
	s.attempt++
	s.log.Debug("model call", "attempt", s.attempt)
	src, err := s.client.wire.Open(s.ctx, s.req, s.model)
	if err != nil {
		s.failed(err)
		return
	}
	s.src = src
}

// failed decides between retrying and ending the stream with err.
func (s *Stream) failed(err error) {
	e := s.classify(err)
	if e.Kind.retryable() && !s.shown && !visible(s.buf[s.pos:]) {
		if d, ok := s.client.retry.delay(s.attempt+1, e.RetryAfter); ok {
			s.wait = d
			r := Retry{Attempt: s.attempt + 1, Delay: d, Err: e}
			s.log.Warn("model call failed; retrying", "attempt", s.attempt, "delay", d, "err", e.Short())
			s.buf = append(s.buf, Event{Kind: EventRetry, Retry: r})
			return
		}
	}
	s.fail(e)
}

func (s *Stream) fail(e *Error) {
	s.err = e
	s.done = true
	s.cancel()
}

func (s *Stream) finish() {
	s.done = true
	s.cancel()
}

// visible reports whether events include any that the consumer shows.
func visible(events []Event) bool {
	for _, e := range events {
		if e.Kind != EventRetry {
			return true
		}
	}
	return false
}

// classify turns any error of a call into an *Error with the provider,
// model and endpoint filled in.
func (s *Stream) classify(err error) *Error {
	base := Error{Provider: s.client.display, Model: s.req.Model, URL: s.client.baseURL, KeySource: s.client.keySource}
	e := transportError(err, s.ctx, &base)
	if e == nil {
		e = &base
		e.Err = err
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case s.client.wire.Classify(err, e):
		case errors.Is(err, io.ErrUnexpectedEOF):
			e.Kind = ErrStreamCut
		case errors.As(err, &syn), errors.As(err, &typ):
			e.Kind = ErrMalformed
		default:
			e.Kind = ErrOther
		}
	}
	if e.Provider == "" {
		e.Provider = base.Provider
	}
	if e.Model == "" {
		e.Model = base.Model
	}
	if e.URL == "" {
		e.URL = base.URL
	}
	if e.KeySource == "" {
		e.KeySource = base.KeySource
	}
	return e
}
