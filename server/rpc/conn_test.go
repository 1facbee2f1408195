package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/server/rpc"
)

func TestLifecycle(t *testing.T) {
	notes := make(chan string, 10)
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"ping": func(context.Context, json.RawMessage) (any, error) { return "pong", nil },
		},
		Notifications: map[string]rpc.NotificationFunc{
			"note": func(_ context.Context, p json.RawMessage) error { notes <- string(p); return nil },
		},
	}
	c := serve(t, h, nil)

	c.request(1, "ping", nil)
	if got := c.reply("1").code(t); got != rpc.CodeServerNotInitialized {
		t.Errorf("ping before initialize: code %d, want %d", got, rpc.CodeServerNotInitialized)
	}
	c.notify("note", "early")
	c.request(2, "initialize", map[string]any{"x": 1})
	if got := c.reply("2").result(t); got != `{"x":1}` {
		t.Errorf("initialize result %s", got)
	}
	c.request(3, "initialize", map[string]any{})
	if got := c.reply("3").code(t); got != jsonrpc2.CodeInvalidRequest {
		t.Errorf("second initialize: code %d, want %d", got, jsonrpc2.CodeInvalidRequest)
	}
	c.notify("note", "late")
	c.request(4, "ping", nil)
	if got := c.reply("4").result(t); got != `"pong"` {
		t.Errorf("ping: %s", got)
	}
	if got := <-notes; got != `"late"` {
		t.Errorf("the first notification handled was %s; the one sent before initialize must be dropped", got)
	}
	c.request(5, "shutdown", nil)
	if got := c.reply("5").result(t); got != "null" {
		t.Errorf("shutdown result %s, want null", got)
	}
	c.request(6, "ping", nil)
	if got := c.reply("6").code(t); got != jsonrpc2.CodeInvalidRequest {
		t.Errorf("ping after shutdown: code %d, want %d", got, jsonrpc2.CodeInvalidRequest)
	}
	c.notify("exit", nil)
	res := <-c.done
	c.done <- res
	if !res.Exit || !res.Shutdown || res.ExitCode() != 0 {
		t.Errorf("after shutdown and exit: %+v, exit code %d; want exit code 0", res, res.ExitCode())
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	c := serve(t, rpc.Handlers{Initialize: echo}, nil)
	c.initialize()
	c.notify("exit", nil)
	res := <-c.done
	c.done <- res
	if !res.Exit || res.Shutdown || res.ExitCode() != 1 {
		t.Errorf("exit without shutdown: %+v, exit code %d; want 1", res, res.ExitCode())
	}
}

func TestEndOfInputEndsRun(t *testing.T) {
	c := serve(t, rpc.Handlers{Initialize: echo}, nil)
	c.initialize()
	c.conn.Close()
	select {
	case res := <-c.done:
		c.done <- res
		if res.Exit || res.ExitCode() != 1 {
			t.Errorf("end of input: %+v, exit code %d", res, res.ExitCode())
		}
	case <-time.After(wait):
		t.Fatal("Run did not return at the end of the input")
	}
}

// A request that runs long delays neither other requests nor
// notifications, and the ones sent after it are answered first.
func TestRequestsRunConcurrently(t *testing.T) {
	started := make(chan struct{})
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"slow": func(ctx context.Context, _ json.RawMessage) (any, error) {
				close(started)
				<-ctx.Done()
				return nil, ctx.Err()
			},
			"fast": func(context.Context, json.RawMessage) (any, error) { return "fast", nil },
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	c.request(1, "slow", nil)
	<-started
	for i := 2; i < 5; i++ {
		c.request(i, "fast", nil)
		if got := c.reply(fmt.Sprint(i)).result(t); got != `"fast"` {
			t.Fatalf("fast: %s", got)
		}
	}
	c.notify("$/cancelRequest", map[string]any{"id": 1})
	if got := c.reply("1").code(t); got != rpc.CodeRequestCancelled {
		t.Errorf("cancelled request: code %d, want %d", got, rpc.CodeRequestCancelled)
	}
}

// Notifications are handled in the order they came, and before any
// request sent after them runs.
func TestNotificationsStayInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	h := rpc.Handlers{
		Initialize: echo,
		Notifications: map[string]rpc.NotificationFunc{
			"change": func(_ context.Context, p json.RawMessage) error {
				var n int
				if err := json.Unmarshal(p, &n); err != nil {
					return err
				}
				mu.Lock()
				seen = append(seen, n)
				mu.Unlock()
				return nil
			},
		},
		Requests: map[string]rpc.RequestFunc{
			"seen": func(context.Context, json.RawMessage) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				return len(seen), nil
			},
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	for i := range 200 {
		c.notify("change", i)
		if i%50 == 49 {
			c.request(i, "seen", nil)
			if got := c.reply(fmt.Sprint(i)).result(t); got != fmt.Sprint(i+1) {
				t.Fatalf("after %d changes the request saw %s", i+1, got)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range seen {
		if n != i {
			t.Fatalf("change %d handled in position %d", n, i)
		}
	}
}

func TestCancelRequest(t *testing.T) {
	started := make(chan struct{})
	handlerDone := make(chan error, 1)
	release := make(chan struct{})
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"stubborn": func(ctx context.Context, _ json.RawMessage) (any, error) {
				close(started)
				<-ctx.Done()
				handlerDone <- ctx.Err()
				<-release // a handler that returns late: its answer must be dropped
				return "late", nil
			},
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	c.request("abc", "stubborn", nil)
	<-started
	c.notify("$/cancelRequest", map[string]any{"id": "abc"})
	if got := c.reply(`"abc"`).code(t); got != rpc.CodeRequestCancelled {
		t.Errorf("code %d, want %d", got, rpc.CodeRequestCancelled)
	}
	if err := <-handlerDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the handler's context ended with %v", err)
	}
	close(release)
	// An unknown id is ignored, and the late answer never comes: the
	// next message is the reply to the next request.
	c.notify("$/cancelRequest", map[string]any{"id": 999})
	c.request(7, "shutdown", nil)
	c.reply("7")
}

func TestPanicsAnswerInternalError(t *testing.T) {
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"boom": func(context.Context, json.RawMessage) (any, error) { panic("kaboom") },
			"ok":   func(context.Context, json.RawMessage) (any, error) { return true, nil },
		},
		Notifications: map[string]rpc.NotificationFunc{
			"boom": func(context.Context, json.RawMessage) error { panic("kaboom") },
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	c.request(1, "boom", nil)
	m := c.reply("1")
	if m.code(t) != jsonrpc2.CodeInternalError || !strings.Contains(m.Error.Message, "kaboom") {
		t.Errorf("panic answered %s", m)
	}
	c.notify("boom", nil)
	c.request(2, "ok", nil)
	if got := c.reply("2").result(t); got != "true" {
		t.Errorf("after panics: %s", got)
	}
}

func TestErrorCodes(t *testing.T) {
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"fails": func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New("the disk is full")
			},
			"strict": func(_ context.Context, p json.RawMessage) (any, error) {
				var v struct {
					Name string `json:"name"`
				}
				if err := rpc.DecodeStrict(p, &v); err != nil {
					return nil, err
				}
				return v.Name, nil
			},
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	cases := []struct {
		method string
		params any
		code   int64
		text   string
	}{
		{"fails", nil, rpc.CodeRequestFailed, "the disk is full"},
		{"nosuch", nil, jsonrpc2.CodeMethodNotFound, "nosuch"},
		{"$/nosuch", nil, jsonrpc2.CodeMethodNotFound, "$/nosuch"},
		{"strict", map[string]any{"name": 3}, jsonrpc2.CodeInvalidParams, `field "name"`},
		{"strict", map[string]any{"nmae": "x"}, jsonrpc2.CodeInvalidParams, `unknown field "nmae"`},
	}
	for i, tc := range cases {
		c.request(i+1, tc.method, tc.params)
		m := c.reply(fmt.Sprint(i + 1))
		if m.code(t) != tc.code || !strings.Contains(m.Error.Message, tc.text) {
			t.Errorf("%s %v: got %s, want code %d mentioning %q", tc.method, tc.params, m, tc.code, tc.text)
		}
	}
}

func TestDuplicateRequestID(t *testing.T) {
	release := make(chan struct{})
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"hold": func(ctx context.Context, _ json.RawMessage) (any, error) {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return "held", nil
			},
		},
	}
	c := serve(t, h, nil)
	c.initialize()
	c.request(1, "hold", nil)
	c.request(1, "hold", nil)
	if got := c.reply("1").code(t); got != jsonrpc2.CodeInvalidRequest {
		t.Errorf("a second request with a pending id: code %d", got)
	}
	close(release)
	if got := c.reply("1").result(t); got != `"held"` {
		t.Errorf("the first request: %s", got)
	}
}

// A handler may call the client and wait for the answer: the read loop
// stays free to read it.
func TestCallFromAHandler(t *testing.T) {
	var srv *rpc.Conn
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"ask": func(ctx context.Context, _ json.RawMessage) (any, error) {
				var answer string
				err := srv.Call(ctx, "client/question", map[string]string{"q": "color?"}, &answer)
				if rpc.IsMethodNotFound(err) {
					return "unsupported", nil
				}
				return answer, err
			},
		},
	}
	c := serve(t, h, nil)
	srv = c.srv
	c.initialize()

	c.request(1, "ask", nil)
	q := c.next()
	if q.Method != "client/question" || string(q.Params) != `{"q":"color?"}` {
		t.Fatalf("got %s, want the server's question", q)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": "blue"})
	if got := c.reply("1").result(t); got != `"blue"` {
		t.Errorf("the handler got %s", got)
	}

	c.request(2, "ask", nil)
	q = c.next()
	c.send(map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{"code": -32601, "message": "Unhandled method"}})
	if got := c.reply("2").result(t); got != `"unsupported"` {
		t.Errorf("MethodNotFound reached the handler as %s", got)
	}
}

func TestCallTimesOutAndCancels(t *testing.T) {
	var srv *rpc.Conn
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"ask": func(ctx context.Context, _ json.RawMessage) (any, error) {
				err := srv.Call(ctx, "client/question", nil, nil)
				return nil, err
			},
		},
	}
	c := serve(t, h, &rpc.Options{CallTimeout: 50 * time.Millisecond})
	srv = c.srv
	c.initialize()
	c.request(1, "ask", nil)
	q := c.next()
	cancel := c.next()
	if cancel.Method != "$/cancelRequest" || string(cancel.Params) != fmt.Sprintf(`{"id":%s}`, q.ID) {
		t.Errorf("after the timeout the client got %s, want $/cancelRequest for %s", cancel, q.ID)
	}
	m := c.reply("1")
	if m.code(t) != rpc.CodeRequestFailed || !strings.Contains(m.Error.Message, "did not answer") {
		t.Errorf("the timed-out call ended the request with %s", m)
	}
	// A late answer is harmless.
	c.send(map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": nil})
	c.request(2, "shutdown", nil)
	c.reply("2")
}

// When the request that is waiting for the client is cancelled, the
// server's call is cancelled at the client too.
func TestCancelledCallTellsTheClient(t *testing.T) {
	var srv *rpc.Conn
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"ask": func(ctx context.Context, _ json.RawMessage) (any, error) {
				return nil, srv.Call(ctx, "client/question", nil, nil)
			},
		},
	}
	c := serve(t, h, nil)
	srv = c.srv
	c.initialize()
	c.request(1, "ask", nil)
	q := c.next()
	c.notify("$/cancelRequest", map[string]any{"id": 1})
	got := map[string]message{}
	for range 2 {
		m := c.next()
		got[m.Method] = m
	}
	if m, ok := got[""]; !ok || m.code(t) != rpc.CodeRequestCancelled {
		t.Errorf("the request was not answered as cancelled: %v", got)
	}
	if m, ok := got["$/cancelRequest"]; !ok || string(m.Params) != fmt.Sprintf(`{"id":%s}`, q.ID) {
		t.Errorf("the client was not told to cancel %s: %v", q.ID, got)
	}
}

func TestNotifyAndCallBeforeRun(t *testing.T) {
	conn := rpc.NewConn(nopRWC{}, rpc.Handlers{}, nil)
	if err := conn.Notify(context.Background(), "x", nil); err == nil {
		t.Error("Notify before Run succeeded")
	}
	if err := conn.Call(context.Background(), "x", nil, nil); err == nil {
		t.Error("Call before Run succeeded")
	}
}

type nopRWC struct{}

func (nopRWC) Read([]byte) (int, error)    { return 0, errors.New("closed") }
func (nopRWC) Write(b []byte) (int, error) { return len(b), nil }
func (nopRWC) Close() error                { return nil }
