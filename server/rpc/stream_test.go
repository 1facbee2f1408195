package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/server/rpc"
)

func pingServer(t *testing.T, opts *rpc.Options) *rawClient {
	t.Helper()
	h := rpc.Handlers{
		Initialize: echo,
		Requests: map[string]rpc.RequestFunc{
			"ping": func(_ context.Context, p json.RawMessage) (any, error) { return "pong", nil },
		},
	}
	c := serve(t, h, opts)
	c.initialize()
	return c
}

// Headers as clients really write them are all understood.
func TestFramingVariants(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	n := len(body)
	cases := map[string]string{
		"canonical":        frame(body),
		"lower case name":  "content-length: " + itoa(n) + "\r\n\r\n" + body,
		"no space":         "Content-Length:" + itoa(n) + "\r\n\r\n" + body,
		"upper case":       "CONTENT-LENGTH: " + itoa(n) + "\r\n\r\n" + body,
		"content type":     "Content-Length: " + itoa(n) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body,
		"type first":       "Content-Type: application/vscode-jsonrpc; charset=utf8\r\nContent-Length: " + itoa(n) + "\r\n\r\n" + body,
		"LF only":          "Content-Length: " + itoa(n) + "\n\n" + body,
		"unknown header":   "X-Trace: 1\r\nContent-Length: " + itoa(n) + "\r\n\r\n" + body,
		"padded value":     "Content-Length:   " + itoa(n) + "  \r\n\r\n" + body,
		"blank line first": "\r\n" + frame(body),
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			c := pingServer(t, nil)
			c.write(input)
			if got := c.reply("1").result(t); got != `"pong"` {
				t.Errorf("got %s", got)
			}
		})
	}
}

// Every kind of broken frame gets an error reply, and the next good frame
// is served: the server neither exits nor hangs.
func TestMalformedFrames(t *testing.T) {
	good := frame(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	cases := []struct {
		name  string
		input string
		id    string // the error reply's id
		code  int64
		text  string
	}{
		{"body not JSON", frame(`{"jsonrpc":"2.0","id":1,`), "null", jsonrpc2.CodeParseError, "not valid JSON"},
		{"JSON but not a message", frame(`{"hello":"world"}`), "null", jsonrpc2.CodeInvalidRequest, "not a JSON-RPC"},
		{"method of the wrong type", frame(`{"jsonrpc":"2.0","id":5,"method":3}`), "5", jsonrpc2.CodeInvalidRequest, "not a JSON-RPC"},
		{"array", frame(`[1,2]`), "null", jsonrpc2.CodeInvalidRequest, "not a JSON-RPC"},
		{"number", frame(`42`), "null", jsonrpc2.CodeInvalidRequest, "not a JSON-RPC"},
		{"empty body", "Content-Length: 0\r\n\r\n", "null", jsonrpc2.CodeParseError, "not valid JSON"},
		{"no Content-Length", "Content-Type: x\r\n\r\n{}", "null", jsonrpc2.CodeParseError, "no Content-Length"},
		{"bad Content-Length", "Content-Length: many\r\n\r\n{}", "null", jsonrpc2.CodeParseError, "not a byte count"},
		{"negative Content-Length", "Content-Length: -4\r\n\r\n{}", "null", jsonrpc2.CodeParseError, "not a byte count"},
		{"raw JSON without headers", `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\r\n", "null", jsonrpc2.CodeParseError, "malformed header"},
		{"garbage line", "hello there\r\n", "null", jsonrpc2.CodeParseError, "malformed header"},
		{"header line too long", strings.Repeat("x", 5000) + "\r\n", "null", jsonrpc2.CodeParseError, "longer than"},
		{"wrong charset", "Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n{}", "null", jsonrpc2.CodeParseError, "charset"},
		{"over the size limit", frame(`{"jsonrpc":"2.0","id":8,"method":"ping","params":"` + strings.Repeat("a", 2000) + `"}`), "8", jsonrpc2.CodeInvalidRequest, "(ping) has 2052 bytes, over the limit of 1024 bytes"},
		{"over the size limit, params first", frame(`{"params":"` + strings.Repeat("a", 5000) + `","jsonrpc":"2.0","id":8,"method":"ping"}`), "null", jsonrpc2.CodeInvalidRequest, "over the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := pingServer(t, &rpc.Options{MaxBody: 1024})
			c.write(tc.input + good)
			m := c.next()
			if m.Method != "" || string(m.ID) != tc.id || m.code(t) != tc.code || !strings.Contains(m.Error.Message, tc.text) {
				t.Errorf("got %s, want error %d with id %s mentioning %q", m, tc.code, tc.id, tc.text)
			}
			if got := c.reply("99").result(t); got != `"pong"` {
				t.Errorf("the good frame after it: %s", got)
			}
		})
	}
}

// A broken response from the client is logged, not answered: answering a
// response would start a loop of errors.
func TestBrokenResponseIsNotAnswered(t *testing.T) {
	c := pingServer(t, nil)
	c.write(frame(`{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":"x"}}`))
	c.write(frame(`{"jsonrpc":"2.0","id":"x","error":"not an object"}`))
	c.request(99, "ping", nil)
	if got := c.reply("99").result(t); got != `"pong"` {
		t.Errorf("got %s", got)
	}
}

// The input ending inside a frame ends the connection: no hang.
func TestTruncatedInputEnds(t *testing.T) {
	for name, input := range map[string]string{
		"in the headers": "Content-Len",
		"in the body":    "Content-Length: 100\r\n\r\n{\"jsonrpc\"",
		"after a header": "Content-Length: 10\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := pingServer(t, nil)
			c.write(input)
			c.conn.Close()
			res := <-c.done
			c.done <- res
			if res.Exit {
				t.Errorf("got %+v", res)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestOversizedMessageIsNotKept: a message over the size limit (the
// default, 64 MiB) is answered with its id and method and skipped
// without being held: the server allocates a fraction of it while reading
// past it, and answers the next request.
func TestOversizedMessageIsNotKept(t *testing.T) {
	c := pingServer(t, nil)
	const size = 100 << 20
	head := `{"jsonrpc":"2.0","id":7,"method":"textDocument/didOpen","params":{"text":"`
	tail := `"}}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.write("Content-Length: " + itoa(size) + "\r\n\r\n" + head)
	chunk := bytes.Repeat([]byte("a"), 64<<10) // written as is: the test allocates nothing per chunk
	for left := size - len(head) - len(tail); left > 0; left -= len(chunk) {
		if _, err := c.conn.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	c.write(tail)
	m := c.reply("7")
	runtime.ReadMemStats(&after)
	if m.code(t) != jsonrpc2.CodeInvalidRequest || !strings.Contains(m.Error.Message, "(textDocument/didOpen) has 104857600 bytes, over the limit of 64 MiB") {
		t.Errorf("got %s", m)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("skipping a %d-byte message allocated %d bytes", size, grew)
	if grew > 8<<20 {
		t.Errorf("that is too much: the message was kept")
	}
	c.request(8, "ping", nil)
	if got := c.reply("8").result(t); got != `"pong"` {
		t.Errorf("the next request: %s", got)
	}
}
