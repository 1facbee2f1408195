package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// slowScript streams a long answer, one word every few milliseconds.
var slowScript = llmtest.Script{Steps: []llmtest.Step{{
	Text:  strings.Repeat("word ", 2000),
	Delay: llmtest.Duration(3 * time.Millisecond),
}}}

// readText reads events until n text deltas arrived.
func readText(t *testing.T, s *llm.Stream, n int) {
	t.Helper()
	for got := 0; got < n; {
		if !s.Next() {
			t.Fatalf("stream ended early: %v", s.Err())
		}
		if s.Event().Kind == llm.EventTextDelta {
			got++
		}
	}
}

func TestCancelMidStreamClosesTheConnection(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, slowScript)
			c := newClient(t, api.settings(srv), fastRetry)
			ctx, cancel := context.WithCancel(ctxT(t))
			s := c.Stream(ctx, ask("hi"))
			defer s.Close()
			readText(t, s, 3)

			cancel()
			canceled := time.Now()
			// The answer streams for at least 6 s (2,000 words, 3 ms
			// apart): a connection left open reaches its end, while one
			// the cancel closed is seen going before it. Watching for
			// that, not a 100 ms bound, keeps a loaded machine from
			// failing a cancel that works.
			call := srv.ModelCalls()[0]
			select {
			case <-call.ClientGone():
			case <-call.Done():
				select {
				case <-call.ClientGone():
				default:
					t.Fatalf("the server streamed the answer to its end: the cancel did not close the connection")
				}
			}
			t.Logf("server saw the client leave %v after cancel", time.Since(canceled))

			for s.Next() {
				if k := s.Event().Kind; k != llm.EventTextDelta {
					t.Fatalf("got %v after cancel", k)
				}
			}
			if !errors.Is(s.Err(), llm.ErrCanceled) || !errors.Is(s.Err(), context.Canceled) {
				t.Errorf("err = %v, want ErrCanceled wrapping context.Canceled", s.Err())
			}
		})
	}
}

func TestCloseMidStreamClosesTheConnection(t *testing.T) {
	srv := llmtest.Start(t, slowScript)
	c := newClient(t, apis[0].settings(srv), fastRetry)
	s := c.Stream(ctxT(t), ask("hi"))
	readText(t, s, 2)
	s.Close()
	select {
	case <-srv.ModelCalls()[0].ClientGone():
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the closed stream's connection go")
	}
	if s.Next() {
		t.Error("Next after Close returned an event")
	}
	if !errors.Is(s.Err(), llm.ErrCanceled) {
		t.Errorf("err = %v", s.Err())
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultStatus, Status: 429, RetryAfter: "30"}))
	c := newClient(t, apis[0].settings(srv), llm.RetryPolicy{MaxDelay: time.Minute})
	ctx, cancel := context.WithCancel(ctxT(t))
	s := c.Stream(ctx, ask("hi"))
	defer s.Close()
	if !s.Next() || s.Event().Kind != llm.EventRetry || s.Event().Retry.Delay != 30*time.Second {
		t.Fatalf("want a 30 s retry first, got %v %v", s.Event().Kind, s.Err())
	}
	cancel()
	// Next now waits out the delay or the cancellation, whichever first.
	if s.Next() {
		t.Fatalf("got %v after cancel", s.Event().Kind)
	}
	if !errors.Is(s.Err(), llm.ErrCanceled) {
		t.Errorf("err = %v", s.Err())
	}
}
