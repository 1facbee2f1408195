package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/server/rpc"
)

// wait bounds every wait for the server in these tests: it only guards
// against a hang, it measures nothing.
const wait = 10 * time.Second

// message is any JSON-RPC message as the client sees it.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (m message) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// rawClient is the client end of a pipe: it writes bytes as they are given
// and reads the server's frames with its own, strict parser, of the
// framing of the server's protocol.
type rawClient struct {
	t       testing.TB
	srv     *rpc.Conn
	conn    net.Conn
	newline bool // ACP's newline framing, not LSP's Content-Length
	in      chan message
	done    chan rpc.Result
}

// serve starts a Conn with handlers on one end of a pipe and returns the
// client for the other end.
func serve(t testing.TB, h rpc.Handlers, opts *rpc.Options) *rawClient {
	t.Helper()
	server, client := net.Pipe()
	conn := rpc.NewConn(server, h, opts)
	c := &rawClient{t: t, conn: client, in: make(chan message, 1024), done: make(chan rpc.Result, 1)}
	c.newline = opts != nil && opts.Protocol == rpc.ACP
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.done <- conn.Run(ctx) }()
	go c.read()
	t.Cleanup(func() {
		cancel()
		client.Close()
		select {
		case <-c.done:
		case <-time.After(wait):
			t.Error("the connection did not end")
		}
	})
	c.srv = conn
	return c
}

func (c *rawClient) read() {
	defer close(c.in)
	if c.newline {
		c.readLines()
		return
	}
	r := bufio.NewReader(c.conn)
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if !strings.HasSuffix(line, "\r\n") {
				c.t.Errorf("the server wrote a header line without CRLF: %q", line)
				return
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line == "" {
				break
			}
			name, value, ok := strings.Cut(line, ": ")
			if !ok || name != "Content-Length" {
				c.t.Errorf("the server wrote an unexpected header: %q", line)
				return
			}
			length, err = strconv.Atoi(value)
			if err != nil {
				c.t.Errorf("bad Content-Length from the server: %q", line)
				return
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("the server wrote a body that is not JSON: %q", body)
			return
		}
		c.in <- m
	}
}

// readLines reads newline framing: every line one JSON object, LF only.
func (c *rawClient) readLines() {
	r := bufio.NewReader(c.conn)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		body := line[:len(line)-1]
		var m message
		if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &m) != nil {
			c.t.Errorf("the server wrote a line that is not one JSON object: %q", line)
			return
		}
		c.in <- m
	}
}

func (c *rawClient) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write to the server: %v", err)
	}
}

func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

func (c *rawClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.newline {
		c.write(string(b) + "\n")
		return
	}
	c.write(frame(string(b)))
}

func (c *rawClient) request(id any, method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

func (c *rawClient) notify(method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

// next returns the next message from the server.
func (c *rawClient) next() message {
	c.t.Helper()
	select {
	case m, ok := <-c.in:
		if !ok {
			c.t.Fatal("the server closed the connection")
		}
		return m
	case <-time.After(wait):
		c.t.Fatal("no message from the server")
	}
	return message{}
}

// reply returns the reply to the request with id, skipping nothing: it
// fails if another message comes first.
func (c *rawClient) reply(id string) message {
	c.t.Helper()
	m := c.next()
	if string(m.ID) != id || m.Method != "" {
		c.t.Fatalf("got %s, want the reply to request %s", m, id)
	}
	return m
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.request(0, "initialize", map[string]any{})
	if m := c.reply("0"); m.Error != nil {
		c.t.Fatalf("initialize failed: %s", m)
	}
	c.notify("initialized", map[string]any{})
}

// result is the reply's result, failing on an error reply.
func (m message) result(t *testing.T) string {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("got error %d %q, want a result", m.Error.Code, m.Error.Message)
	}
	return string(m.Result)
}

func (m message) code(t *testing.T) int64 {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("got result %s, want an error", m.Result)
	}
	return m.Error.Code
}

// echo answers initialize and returns its params.
func echo(_ context.Context, params json.RawMessage) (any, error) {
	if params == nil {
		return "none", nil
	}
	return params, nil
}
