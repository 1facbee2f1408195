package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// rawClient writes bytes to a conn and reads its lines.
type rawClient struct {
	t     *testing.T
	w     net.Conn
	lines chan message
	done  chan error
}

func serveRaw(t *testing.T, setup func(c *conn)) *rawClient {
	t.Helper()
	server, client := net.Pipe()
	c := newConn(server, server, slog.New(slog.DiscardHandler))
	setup(c)
	rc := &rawClient{t: t, w: client, lines: make(chan message, 100), done: make(chan error, 1)}
	go func() {
		rc.done <- c.run(context.Background())
		server.Close()
	}()
	go func() {
		sc := bufio.NewScanner(client)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("darman wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			rc.lines <- m
		}
		close(rc.lines)
	}()
	t.Cleanup(func() { client.Close() })
	return rc
}

func (rc *rawClient) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.w, s); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawClient) next() message {
	rc.t.Helper()
	select {
	case m, ok := <-rc.lines:
		if !ok {
			rc.t.Fatal("the connection ended")
		}
		return m
	case <-time.After(10 * time.Second):
		rc.t.Fatal("no answer")
	}
	return message{}
}

// TestConnAnswersBadInputAndLivesOn: every malformed line gets an error
// reply, a panicking handler gets -32603, and the next good request is
// answered as usual.
func TestConnAnswersBadInputAndLivesOn(t *testing.T) {
	rc := serveRaw(t, func(c *conn) {
		c.requests["echo"] = func(ctx context.Context, p json.RawMessage) (any, error) { return p, nil }
		c.requests["boom"] = func(ctx context.Context, p json.RawMessage) (any, error) { panic("kaboom") }
		c.requests["strict"] = func(ctx context.Context, p json.RawMessage) (any, error) {
			var v struct{ N int }
			return nil, decode("strict", p, &v)
		}
	})
	for _, tc := range []struct {
		line string
		code int
		id   string
	}{
		{"this is not json\n", codeParseError, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"boom"}` + "\n", codeInternalError, "1"},
		{`{"id":2,"method":"echo"}` + "\n", codeInvalidRequest, "2"},
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}` + "\n", codeMethodNotFound, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":"strict","params":{"N":"x"}}` + "\n", codeInvalidParams, "4"},
		{`{"jsonrpc":"2.0","id":5}` + "\n", codeInvalidRequest, "5"},
		{`[1,2]` + "\n", codeParseError, "null"},
	} {
		rc.send(tc.line)
		m := rc.next()
		if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id {
			t.Errorf("%q answered %+v (error %+v), want code %d id %s", tc.line, m, m.Error, tc.code, tc.id)
		}
	}
	// Blank lines and CRLF ends are fine.
	rc.send("\n\r\n" + `{"jsonrpc":"2.0","id":"s","method":"echo","params":{"a":1}}` + "\r\n")
	m := rc.next()
	if m.Error != nil || string(m.ID) != `"s"` || string(m.Result) != `{"a":1}` {
		t.Errorf("after bad input: %+v", m)
	}
	if m.Error != nil && strings.Contains(m.Error.Message, "kaboom") {
		t.Error("the panic's text leaked into the wrong answer")
	}
	rc.w.Close()
	select {
	case err := <-rc.done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not end at EOF")
	}
}

// TestConnCallsTheClient: a call to the client gets its answer, and ends
// when the input ends.
func TestConnCallsTheClient(t *testing.T) {
	var c *conn
	rc := serveRaw(t, func(cc *conn) { c = cc })
	got := make(chan error, 1)
	go func() {
		var res struct{ Content string }
		err := c.call(context.Background(), "fs/read_text_file", map[string]string{"path": "/x"}, &res)
		if err == nil && res.Content != "hello" {
			err = io.ErrUnexpectedEOF
		}
		got <- err
	}()
	req := rc.next()
	if req.Method != "fs/read_text_file" || req.ID == nil {
		t.Fatalf("request %+v", req)
	}
	rc.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"hello"}}` + "\n")
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	go func() { got <- c.call(context.Background(), "terminal/wait_for_exit", nil, nil) }()
	rc.next()
	rc.w.Close()
	select {
	case err := <-got:
		if err == nil {
			t.Error("a call pending at EOF succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call pending at EOF did not end")
	}
}

// A line over the limit is reported as too long however many reads it
// takes, keeps none of its bytes, and the next line reads whole.
func TestReadLineSkipsALineOverTheLimit(t *testing.T) {
	long := strings.Repeat("x", 100) // 6 reads through a 16-byte buffer
	br := bufio.NewReaderSize(strings.NewReader(long+"\n"+`{"ok":1}`+"\n"), 16)
	line, err := readLine(br, 40)
	if err != nil || string(line) != tooLong {
		t.Fatalf("the long line read as %q, %v; want the tooLong marker", line, err)
	}
	line, err = readLine(br, 40)
	if err != nil || string(line) != `{"ok":1}` {
		t.Fatalf("the next line read as %q, %v", line, err)
	}
	line, err = readLine(br, 40)
	if len(line) != 0 || err != io.EOF {
		t.Errorf("at the end: %q, %v; want nothing and EOF", line, err)
	}
}
