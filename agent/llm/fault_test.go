package llm_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

const answer = "All good now, the retry worked."

// faulted is a script whose only step fails with faults, then answers.
func faulted(faults ...llmtest.Fault) llmtest.Script {
	return llmtest.Script{Steps: []llmtest.Step{{Text: answer, Faults: faults}}}
}

func TestRetryIsAnnounced(t *testing.T) {
	cases := []struct {
		name   string
		faults []llmtest.Fault
		// kinds of the announced errors, one per retry
		want      []llm.Kind
		wantDelay time.Duration // of the first retry, when the server says
	}{
		{"429 with retry-after-ms",
			[]llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 429, RetryAfterMs: "30"}},
			[]llm.Kind{llm.ErrRateLimited}, 30 * time.Millisecond},
		{"500 twice",
			[]llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 500, Times: 2}},
			[]llm.Kind{llm.ErrServer, llm.ErrServer}, 0},
		{"529 overloaded",
			[]llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 529}},
			[]llm.Kind{llm.ErrOverloaded}, 0},
		{"408, then 409",
			[]llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 408}, {Kind: llmtest.FaultStatus, Status: 409}},
			[]llm.Kind{llm.ErrTimeout, llm.ErrConflict}, 0},
		{"stream cut before any output",
			[]llmtest.Fault{{Kind: llmtest.FaultCut, After: 1}},
			[]llm.Kind{llm.ErrStreamCut}, 0},
	}
	for _, api := range apis {
		for _, tc := range cases {
			t.Run(api.name+"/"+tc.name, func(t *testing.T) {
				srv := llmtest.Start(t, faulted(tc.faults...))
				c := newClient(t, api.settings(srv), fastRetry)
				events, err := drain(c.Stream(ctxT(t), ask("hi")))
				if err != nil {
					t.Fatalf("the call failed after retries: %v", err)
				}
				retries := ofKind(events, llm.EventRetry)
				if len(retries) != len(tc.want) {
					t.Fatalf("got %d retry events, want %d: %v", len(retries), len(tc.want), kinds(events))
				}
				for i, r := range retries {
					if r.Retry.Err.Kind != tc.want[i] || r.Retry.Attempt != i+2 {
						t.Errorf("retry %d: attempt %d after %v, want attempt %d after %v", i, r.Retry.Attempt, r.Retry.Err.Kind, i+2, tc.want[i])
					}
					if !strings.HasPrefix(r.Retry.String(), "retrying in ") || !strings.Contains(r.Retry.String(), tc.want[i].String()) {
						t.Errorf("retry line %q", r.Retry.String())
					}
				}
				if tc.wantDelay > 0 && retries[0].Retry.Delay != tc.wantDelay {
					t.Errorf("delay = %v, want the server's %v", retries[0].Retry.Delay, tc.wantDelay)
				}
				if got := joined(events, llm.EventTextDelta); got != answer {
					t.Errorf("text = %q", got)
				}
				calls := srv.ModelCalls()
				if len(calls) != len(tc.want)+1 || calls[len(calls)-1].Attempt != len(tc.want) {
					t.Errorf("server saw %d calls, want %d", len(calls), len(tc.want)+1)
				}
			})
		}
	}
}

func TestRetryAnnouncedLine(t *testing.T) {
	r := llm.Retry{Attempt: 2, Delay: 4 * time.Second, Err: &llm.Error{Kind: llm.ErrRateLimited, Status: 429}}
	if got, want := r.String(), "retrying in 4 s: rate limited (429)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestErrorEventBeforeOutputIsRetried(t *testing.T) {
	// Anthropic sends overloaded_error as an event after the 200; the
	// OpenAI APIs send an error object. Nothing was shown yet: retry.
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultErrorEvent, After: 1}))
			c := newClient(t, api.settings(srv), fastRetry)
			events, err := drain(c.Stream(ctxT(t), ask("hi")))
			if err != nil {
				t.Fatal(err)
			}
			r := ofKind(events, llm.EventRetry)
			if len(r) != 1 {
				t.Fatalf("got %d retries: %v", len(r), kinds(events))
			}
			want := llm.ErrServer
			if api.name == "anthropic" {
				want = llm.ErrOverloaded
			}
			if r[0].Retry.Err.Kind != want {
				t.Errorf("retried after %v, want %v", r[0].Retry.Err.Kind, want)
			}
		})
	}
}

func TestNoRetryAfterOutput(t *testing.T) {
	// Faults that strike after text was streamed: the text is delivered,
	// then a typed error, and the call is not repeated.
	cases := []struct {
		name  string
		fault llmtest.Fault
		want  llm.Kind
	}{
		{"cut", llmtest.Fault{Kind: llmtest.FaultCut, After: 6}, llm.ErrStreamCut},
		{"stall", llmtest.Fault{Kind: llmtest.FaultStall, After: 6}, llm.ErrStalled},
		{"error event", llmtest.Fault{Kind: llmtest.FaultErrorEvent, After: 6, Type: "overloaded_error"}, llm.ErrOverloaded},
	}
	for _, api := range apis {
		for _, tc := range cases {
			t.Run(api.name+"/"+tc.name, func(t *testing.T) {
				srv := llmtest.Start(t, faulted(tc.fault))
				s := api.settings(srv)
				s.IdleTimeout = 500 * time.Millisecond // the stall case waits it out; a loaded machine pauses less between chunks
				c := newClient(t, s, fastRetry)
				events, err := drain(c.Stream(ctxT(t), ask("hi")))
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if len(ofKind(events, llm.EventTextDelta)) == 0 {
					t.Errorf("no text before the fault: %v", kinds(events))
				}
				if n := len(ofKind(events, llm.EventRetry)); n != 0 {
					t.Errorf("%d retries after output was shown", n)
				}
				if n := len(ofKind(events, llm.EventFinish)); n != 0 {
					t.Errorf("a failed stream finished")
				}
				if n := len(srv.ModelCalls()); n != 1 {
					t.Errorf("server saw %d calls, want 1", n)
				}
				var e *llm.Error
				if !errors.As(err, &e) || e.Provider == "" || e.Model != "test-model" {
					t.Errorf("error lacks provider or model: %#v", e)
				}
				if tc.want == llm.ErrStalled && !strings.Contains(err.Error(), "sent nothing for 500 ms") {
					t.Errorf("stall message: %v", err)
				}
			})
		}
	}
}

func TestStallBeforeOutputIsRetried(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultStall, After: 1}))
			s := api.settings(srv)
			// Long enough that the retried stream, which pauses nowhere,
			// is not cut by a loaded machine's scheduling.
			s.IdleTimeout = 500 * time.Millisecond
			c := newClient(t, s, fastRetry)
			events, err := drain(c.Stream(ctxT(t), ask("hi")))
			if err != nil {
				t.Fatal(err)
			}
			if r := ofKind(events, llm.EventRetry); len(r) != 1 || r[0].Retry.Err.Kind != llm.ErrStalled {
				t.Fatalf("want one retry after a stall: %v", kinds(events))
			}
			calls := srv.ModelCalls()
			select {
			case <-calls[0].ClientGone():
			case <-time.After(5 * time.Second):
				t.Error("the server never saw the stalled request abandoned")
			}
		})
	}
}

func TestMalformedChunk(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultMalformed, After: 4, Times: -1}))
			c := newClient(t, api.settings(srv), fastRetry)
			_, err := drain(c.Stream(ctxT(t), ask("hi")))
			if !errors.Is(err, llm.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if n := len(srv.ModelCalls()); n != 1 {
				t.Errorf("a malformed answer was retried: %d calls", n)
			}
		})
	}
}

func TestRetriesGiveUp(t *testing.T) {
	srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultStatus, Status: 503, Times: -1}))
	c := newClient(t, apis[0].settings(srv), fastRetry)
	events, err := drain(c.Stream(ctxT(t), ask("hi")))
	if !errors.Is(err, llm.ErrServer) {
		t.Fatalf("err = %v", err)
	}
	if n := len(ofKind(events, llm.EventRetry)); n != fastRetry.MaxAttempts-1 {
		t.Errorf("%d retries, want %d", n, fastRetry.MaxAttempts-1)
	}
	if n := len(srv.ModelCalls()); n != fastRetry.MaxAttempts {
		t.Errorf("%d attempts, want %d", n, fastRetry.MaxAttempts)
	}
}

func TestRetryAfterLongerThanMaxDelayIsNotWaited(t *testing.T) {
	srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultStatus, Status: 429, RetryAfter: "3600"}))
	c := newClient(t, apis[0].settings(srv), fastRetry)
	events, err := drain(c.Stream(ctxT(t), ask("hi")))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrRateLimited || e.RetryAfter != time.Hour {
		t.Fatalf("err = %#v, want a rate limit asking for an hour", err)
	}
	if n := len(ofKind(events, llm.EventRetry)); n != 0 {
		t.Errorf("retried although the server asked for an hour")
	}
}

func TestTypedErrors(t *testing.T) {
	cases := []struct {
		name  string
		fault llmtest.Fault
		want  llm.Kind
		// msg is a part of the message a human reads, per API.
		msg map[string]string
	}{
		{"bad key", llmtest.Fault{Kind: llmtest.FaultStatus, Status: 401, Message: "invalid x-api-key"}, llm.ErrAuth,
			map[string]string{
				"anthropic": "the Anthropic API rejected the key from provider.anthropic.apiKey (401): invalid x-api-key",
				"responses": "the OpenAI API rejected the key from provider.openai.apiKey (401)",
				"chat":      "the Ollama API rejected the request's credentials (401)",
			}},
		{"unknown model", llmtest.Fault{Kind: llmtest.FaultStatus, Status: 404, Message: "model: test-model"}, llm.ErrUnknownModel,
			map[string]string{"anthropic": `does not know the model "test-model" (404)`, "chat": `does not know the model "test-model"`}},
		{"context too long",
			llmtest.Fault{Kind: llmtest.FaultStatus, Status: 400, Message: "prompt is too long: 212000 tokens > 200000 maximum"},
			llm.ErrContextTooLong,
			map[string]string{"anthropic": `the conversation does not fit "test-model"'s context window (400): prompt is too long`}},
		{"context too long, OpenAI code",
			llmtest.Fault{Kind: llmtest.FaultStatus, Status: 400, Type: "context_length_exceeded", Message: "Your input exceeds the context window of this model."},
			llm.ErrContextTooLong, nil},
		{"permission", llmtest.Fault{Kind: llmtest.FaultStatus, Status: 403}, llm.ErrPermission, nil},
		{"billing", llmtest.Fault{Kind: llmtest.FaultStatus, Status: 402}, llm.ErrBilling, nil},
		{"bad request", llmtest.Fault{Kind: llmtest.FaultStatus, Status: 400, Message: "messages: roles must alternate"}, llm.ErrBadRequest,
			map[string]string{"anthropic": "rejected the request (400): messages: roles must alternate"}},
	}
	for _, api := range apis {
		for _, tc := range cases {
			if tc.name == "context too long, OpenAI code" && api.name == "anthropic" {
				continue
			}
			t.Run(api.name+"/"+tc.name, func(t *testing.T) {
				srv := llmtest.Start(t, faulted(tc.fault))
				c := newClient(t, api.settings(srv), fastRetry)
				events, err := drain(c.Stream(ctxT(t), ask("hi")))
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if len(events) != 0 {
					t.Errorf("events before a %v: %v", tc.want, kinds(events))
				}
				if want := tc.msg[api.name]; want != "" && !strings.Contains(err.Error(), want) {
					t.Errorf("message %q\nlacks %q", err.Error(), want)
				}
				if n := len(srv.ModelCalls()); n != 1 {
					t.Errorf("a %v was retried: %d calls", tc.want, n)
				}
			})
		}
	}
}

func TestKeyFromEnvironmentIsNamed(t *testing.T) {
	srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultStatus, Status: 401}))
	env := func(k string) (string, bool) {
		if k == "ANTHROPIC_API_KEY" {
			return "sk-ant-from-env", true
		}
		return "", false
	}
	c, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: srv.URL}, &provider.Options{LookupEnv: env})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(c.Stream(ctxT(t), ask("hi")))
	if want := "the Anthropic API rejected the key from ANTHROPIC_API_KEY (401)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	// This SDK sends the key as a bearer token.
	if got := srv.ModelCalls()[0].Header.Get("Authorization"); got != "Bearer sk-ant-from-env" {
		t.Errorf("sent key %q", got)
	}
}

func TestUnreachable(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			s := api.settings(&llmtest.Server{URL: "http://" + addr})
			c := newClient(t, s, fastRetry)
			events, err := drain(c.Stream(ctxT(t), ask("hi")))
			if !errors.Is(err, llm.ErrUnreachable) {
				t.Fatalf("err = %v, want ErrUnreachable", err)
			}
			if !strings.Contains(err.Error(), "cannot reach the") || !strings.Contains(err.Error(), addr) {
				t.Errorf("message %q does not name the address tried", err)
			}
			if len(events) != 0 {
				t.Errorf("an unreachable server was retried: %v", kinds(events))
			}
		})
	}
}

func TestServerThatDoesNotStream(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, faulted(llmtest.Fault{Kind: llmtest.FaultNoStream, Times: -1}))
			c := newClient(t, api.settings(srv), fastRetry)
			_, err := drain(c.Stream(ctxT(t), ask("hi")))
			if !errors.Is(err, llm.ErrMalformed) || !strings.Contains(err.Error(), "answered with application/json instead of an event stream") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestCollectKeepsThePartialAnswer(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{
				Text:   "one two three four five six seven eight",
				Faults: []llmtest.Fault{{Kind: llmtest.FaultCut, After: 7}},
			}}})
			c := newClient(t, api.settings(srv), fastRetry)
			r, err := llm.Collect(c.Stream(ctxT(t), ask("hi")))
			if !errors.Is(err, llm.ErrStreamCut) {
				t.Fatalf("err = %v", err)
			}
			text := r.Text()
			if text == "" || !strings.HasPrefix("one two three four five six seven eight", text) || len(text) == 38 {
				t.Errorf("partial text %q", text)
			}
			if r.Message.Role != llm.RoleAssistant || r.Finish != "" {
				t.Errorf("partial response %+v", r)
			}
		})
	}
}
