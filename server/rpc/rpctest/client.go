// Package rpctest is the editor's side of darman's JSON-RPC fronts for
// their tests, in either framing: a client that records every message
// darman sends in the order it came, answers darman's requests off its
// read loop (as editors do: an answer may take a person's time), and
// waits for a message a test names. Only _test.go files import it.
package rpctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The framings of darman's fronts.
var (
	// LSP is Content-Length framing, as VS Code writes it.
	LSP jsonrpc2.ObjectCodec = jsonrpc2.VSCodeObjectCodec{}
	// ACP is newline-delimited JSON.
	ACP jsonrpc2.ObjectCodec = jsonrpc2.PlainObjectCodec{}
)

// Message is a message darman sent the client: a notification, or a
// request (ID set).
type Message struct {
	Method string
	Params json.RawMessage
	ID     *jsonrpc2.ID
}

// Answer answers darman's requests to the client: a result, or an error
// (a *jsonrpc2.Error for a JSON-RPC error reply with its code; any other
// error is an internal error with its text).
type Answer func(method string, params json.RawMessage) (any, error)

// Options describe a client.
type Options struct {
	// Codec is the framing: LSP or ACP.
	Codec jsonrpc2.ObjectCodec
	// Answer answers darman's requests; nil answers every one
	// MethodNotFound, like a client that offers nothing.
	Answer Answer
	// Wait bounds Await and each call (20 s when zero); it only guards
	// against a hang.
	Wait time.Duration
	// Peer is what failures call darman ("the server"; "darman" when
	// empty).
	Peer string
	// Log sends jsonrpc2's own complaints to t.Logf.
	Log bool
}

// Client is a recording JSON-RPC client.
type Client struct {
	// Conn is the connection, for what the helpers do not cover.
	Conn *jsonrpc2.Conn

	t testing.TB
	o Options

	mu      sync.Mutex
	msgs    []Message
	changed chan struct{}
}

// New makes a client on stream; closing it (Conn.Close) is the caller's,
// who knows in what order the ends must go.
func New(ctx context.Context, t testing.TB, stream io.ReadWriteCloser, o Options) *Client {
	if o.Wait == 0 {
		o.Wait = 20 * time.Second
	}
	if o.Peer == "" {
		o.Peer = "darman"
	}
	if o.Answer == nil {
		o.Answer = func(method string, _ json.RawMessage) (any, error) {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no " + method + " in this client"}
		}
	}
	c := &Client{t: t, o: o, changed: make(chan struct{})}
	var opts []jsonrpc2.ConnOpt
	if o.Log {
		opts = append(opts, jsonrpc2.SetLogger(logger{t}))
	}
	c.Conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(stream, o.Codec), c, opts...)
	return c
}

type logger struct{ t testing.TB }

func (l logger) Printf(format string, v ...any) { l.t.Logf("client jsonrpc2: "+format, v...) }

// Handle records a message from darman and answers it when it is a
// request.
func (c *Client) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	m := Message{Method: req.Method, Params: params}
	if !req.Notif {
		id := req.ID
		m.ID = &id
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if req.Notif {
		return
	}
	go func() {
		result, err := c.o.Answer(req.Method, params)
		if err != nil {
			je, ok := err.(*jsonrpc2.Error)
			if !ok {
				je = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
			}
			conn.ReplyWithError(ctx, req.ID, je)
			return
		}
		conn.Reply(ctx, req.ID, result)
	}()
}

// Await returns the first message from index from on that match accepts,
// and its index; it fails the test, listing what came, after Wait.
func (c *Client) Await(from int, what string, match func(Message) bool) (Message, int) {
	c.t.Helper()
	deadline := time.After(c.o.Wait)
	for {
		c.mu.Lock()
		for i := from; i < len(c.msgs); i++ {
			if match(c.msgs[i]) {
				m := c.msgs[i]
				c.mu.Unlock()
				return m, i
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no %s from %s; got:\n%s", what, c.o.Peer, c.Dump())
		}
	}
}

// Dump lists the messages so far, one a line, their params cut short.
func (c *Client) Dump() string {
	var b strings.Builder
	for i, m := range c.Since(0) {
		p := string(m.Params)
		if len(p) > 300 {
			p = p[:300] + "…"
		}
		fmt.Fprintf(&b, "%3d %s %s\n", i, m.Method, p)
	}
	return b.String()
}

// Count is how many messages came so far.
func (c *Client) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// Since returns the messages from index from on.
func (c *Client) Since(from int) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs[min(from, len(c.msgs)):]...)
}

// All returns the messages with the method so far.
func (c *Client) All(method string) []Message {
	var out []Message
	for _, m := range c.Since(0) {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Call calls darman, bounded by Wait.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Wait)
	defer cancel()
	return c.Conn.Call(ctx, method, params, result)
}

// MustCall is Call that fails the test on an error.
func (c *Client) MustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.Call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// Notify sends a notification, failing the test when it cannot.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	if err := c.Conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}
