package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/server/rpc"
)

// acpServer serves handlers with the ACP protocol: newline framing, no
// lifecycle.
func acpServer(t *testing.T, h rpc.Handlers, opts *rpc.Options) *rawClient {
	t.Helper()
	o := rpc.Options{}
	if opts != nil {
		o = *opts
	}
	o.Protocol = rpc.ACP
	return serve(t, h, &o)
}

var acpHandlers = rpc.Handlers{
	Initialize: echo,
	Requests: map[string]rpc.RequestFunc{
		"echo": func(_ context.Context, p json.RawMessage) (any, error) { return p, nil },
		"boom": func(context.Context, json.RawMessage) (any, error) { panic("kaboom") },
		"fail": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("the disk is full") },
		"strict": func(_ context.Context, p json.RawMessage) (any, error) {
			var v struct{ N int }
			return nil, rpc.Decode(p, &v)
		},
		"block": func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	},
}

// TestACPAnswersBadInputAndLivesOn: every malformed line gets an error
// answer (with the request's id when it can be read), a panicking handler
// gets -32603, a plain error -32603 with its text, and the next good
// request is answered as usual.
func TestACPAnswersBadInputAndLivesOn(t *testing.T) {
	c := acpServer(t, acpHandlers, &rpc.Options{MaxBody: 1024})
	for _, tc := range []struct {
		line string
		code int64
		id   string
		text string
	}{
		{"this is not json\n", jsonrpc2.CodeParseError, "null", "not valid JSON"},
		{`{"jsonrpc":"2.0","id":1,"method":"boom"}` + "\n", jsonrpc2.CodeInternalError, "1", "internal error in boom: kaboom"},
		{`{"jsonrpc":"2.0","id":1,"method":"fail"}` + "\n", jsonrpc2.CodeInternalError, "1", "the disk is full"},
		{`{"id":2,"method":"echo"}` + "\n", jsonrpc2.CodeInvalidRequest, "2", `lacks "jsonrpc": "2.0"`},
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}` + "\n", jsonrpc2.CodeMethodNotFound, "3", "method not found: nope"},
		{`{"jsonrpc":"2.0","id":4,"method":"strict","params":{"N":"x"}}` + "\n", jsonrpc2.CodeInvalidParams, "4", `field "N"`},
		{`{"jsonrpc":"2.0","id":5}` + "\n", jsonrpc2.CodeInvalidRequest, "5", "not a JSON-RPC"},
		{`[1,2]` + "\n", jsonrpc2.CodeInvalidRequest, "null", "not a JSON-RPC"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}` + "\n", jsonrpc2.CodeInvalidRequest, "null", "not a JSON-RPC"},
		{`{"jsonrpc":"2.0","id":6,"method":"echo","params":"` + strings.Repeat("a", 3000) + `"}` + "\n", jsonrpc2.CodeInvalidRequest, "6", "(echo) has 3053 bytes, over the limit of 1024 bytes"},
		{`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":` + "\n", jsonrpc2.CodeParseError, "null", "not valid JSON"},
	} {
		c.write(tc.line)
		m := c.next()
		if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id || !strings.Contains(m.Error.Message, tc.text) {
			t.Errorf("%.80q answered %s, want code %d id %s mentioning %q", tc.line, m, tc.code, tc.id, tc.text)
		}
	}
	// Blank lines, CRLF ends and a request before initialize are fine:
	// ACP has no lifecycle.
	c.write("\n\r\n" + `{"jsonrpc":"2.0","id":"s","method":"echo","params":{"a":1}}` + "\r\n")
	if got := c.reply(`"s"`).result(t); got != `{"a":1}` {
		t.Errorf("after bad input: %s", got)
	}
	// LSP's exit means nothing here.
	c.notify("exit", nil)
	c.request(8, "echo", []int{1})
	if got := c.reply("8").result(t); got != `[1]` {
		t.Errorf("after exit: %s", got)
	}
	c.conn.Close()
	if res := <-c.done; res.Err != nil || res.Exit {
		t.Errorf("Run at the end of input: %+v", res)
	}
	c.done <- rpc.Result{}
}

// TestACPCancelRequest: $/cancel_request names the request by requestId;
// it is answered at once with -32800 and its context ends.
func TestACPCancelRequest(t *testing.T) {
	c := acpServer(t, acpHandlers, nil)
	c.request("b", "block", nil)
	c.notify("$/cancelRequest", map[string]any{"id": "b"}) // LSP's: not ACP's
	c.request(1, "echo", "x")
	c.reply("1")
	c.notify("$/cancel_request", map[string]any{"requestId": "b"})
	if m := c.reply(`"b"`); m.code(t) != rpc.CodeRequestCancelled {
		t.Errorf("got %s", m)
	}
}

// TestACPCallsTheClient: a call to the client gets its answer; one that
// gives up tells the client with $/cancel_request; one pending when the
// input ends fails.
func TestACPCallsTheClient(t *testing.T) {
	c := acpServer(t, acpHandlers, nil)
	c.request(0, "echo", nil) // Run has started
	c.reply("0")
	got := make(chan error, 1)
	go func() {
		var res struct{ Content string }
		err := c.srv.Call(context.Background(), "fs/read_text_file", map[string]string{"path": "/x"}, &res)
		if err == nil && res.Content != "hello" {
			err = errors.New("wrong content " + res.Content)
		}
		got <- err
	}()
	req := c.next()
	if req.Method != "fs/read_text_file" || req.ID == nil {
		t.Fatalf("request %s", req)
	}
	c.write(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"hello"}}` + "\n")
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- c.srv.CallWait(ctx, 0, "session/request_permission", nil, nil) }()
	req = c.next()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call returned %v", err)
	}
	if m := c.next(); m.Method != "$/cancel_request" || string(m.Params) != `{"requestId":`+string(req.ID)+`}` {
		t.Errorf("after giving up: %s", m)
	}

	go func() { got <- c.srv.Call(context.Background(), "terminal/wait_for_exit", nil, nil) }()
	c.next()
	c.conn.Close()
	if err := <-got; err == nil {
		t.Error("a call pending at the end of input succeeded")
	}
}

// TestAfterReply: what a handler leaves for after its answer (Then.After)
// goes out after it, and only after a success.
func TestAfterReply(t *testing.T) {
	var srv *rpc.Conn
	after := func(ok bool) rpc.RequestFunc {
		return func(ctx context.Context, p json.RawMessage) (any, error) {
			then := rpc.Then{Result: "answer", After: func() { srv.Notify(ctx, "after", p) }}
			if !ok {
				return then, errors.New("no")
			}
			return then, nil
		}
	}
	h := rpc.Handlers{Initialize: after(true), Requests: map[string]rpc.RequestFunc{"ok": after(true), "fails": after(false)}}
	for _, proto := range []rpc.Protocol{rpc.LSP, rpc.ACP} {
		c := serve(t, h, &rpc.Options{Protocol: proto})
		srv = c.srv
		c.request(0, "initialize", "i")
		c.reply("0")
		if m := c.next(); m.Method != "after" || string(m.Params) != `"i"` {
			t.Errorf("protocol %d: after initialize's answer: %s", proto, m)
		}
		c.request(1, "fails", "f")
		c.reply("1")
		c.request(2, "ok", "o")
		c.reply("2")
		if m := c.next(); m.Method != "after" || string(m.Params) != `"o"` {
			t.Errorf("protocol %d: after ok's answer: %s", proto, m)
		}
	}
}
