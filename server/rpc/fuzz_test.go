package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/server/rpc"
)

// memRWC reads from a fixed input and records what is written.
type memRWC struct {
	r   *bytes.Reader
	out bytes.Buffer
}

func (m *memRWC) Read(b []byte) (int, error)  { return m.r.Read(b) }
func (m *memRWC) Write(b []byte) (int, error) { return m.out.Write(b) }
func (m *memRWC) Close() error                { return nil }

// readFrames parses what the server wrote, strictly; it fails on anything
// that is not a sequence of well-formed frames with JSON bodies.
func readFrames(t *testing.T, out []byte) []json.RawMessage {
	t.Helper()
	var bodies []json.RawMessage
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return bodies
		}
		name, value, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ": ")
		if err != nil || !ok || name != "Content-Length" {
			t.Fatalf("bad header line %q in the output", line)
		}
		n, err := strconv.Atoi(value)
		if err != nil {
			t.Fatalf("bad length %q", value)
		}
		if blank, _ := r.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("no blank line after the header: %q", blank)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || !json.Valid(body) {
			t.Fatalf("bad body %q (%v)", body, err)
		}
		bodies = append(bodies, body)
	}
}

// readLines parses what the server wrote in newline framing, strictly.
func readLines(t *testing.T, out []byte) []json.RawMessage {
	t.Helper()
	var bodies []json.RawMessage
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			t.Fatalf("output %q does not end with a line end", out)
		}
		if !json.Valid(out[:i]) {
			t.Fatalf("bad line %q", out[:i])
		}
		bodies = append(bodies, out[:i])
		out = out[i+1:]
	}
	return bodies
}

var framings = []rpc.Framing{rpc.ContentLength, rpc.Newline}

// FuzzStream feeds arbitrary bytes to the reader, in either framing: it
// must end (no hang), never panic, and every reply it writes must be a
// well-formed frame holding an error response.
func FuzzStream(f *testing.F) {
	for _, seed := range []string{
		frame(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		"content-length:2\n\n{}",
		"Content-Length: 5\r\n\r\n{\"a\":",
		"garbage\r\n" + frame(`{"jsonrpc":"2.0","method":"n"}`),
		"Content-Length: 3\r\nContent-Type: text/plain; charset=koi8\r\n\r\nabc",
		frame(`[{"jsonrpc":"2.0","id":1,"method":"a"}]`),
		"Content-Length: 99999999999999999999\r\n\r\n",
		"Content-Length: 10\r\n\r\n{\"id\":1}xxContent-Length: 2\r\n\r\n{}",
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n{\"id\":{}}\n[]\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"a\":\n" + strings.Repeat("[", 20000) + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		for _, framing := range framings {
			fuzzStream(t, framing, input)
		}
	})
}

func fuzzStream(t *testing.T, framing rpc.Framing, input []byte) {
	rwc := &memRWC{r: bytes.NewReader(input)}
	s := rpc.NewStream(rwc, &rpc.StreamOptions{Framing: framing, MaxBody: 1 << 16, StrictVersion: framing == rpc.Newline})
	for i := 0; ; i++ {
		if i > len(input)+1 {
			t.Fatalf("read %d messages from %d bytes", i, len(input))
		}
		var req jsonrpc2.Request
		err := s.ReadObject(&req)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("ReadObject: %v", err)
			}
			break
		}
	}
	bodies := readLines
	if framing == rpc.ContentLength {
		bodies = readFrames
	}
	for _, body := range bodies(t, rwc.out.Bytes()) {
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc2.Error `json:"error"`
		}
		if err := json.Unmarshal(body, &reply); err != nil || reply.JSONRPC != "2.0" || reply.Error == nil || reply.ID == nil {
			t.Fatalf("the stream wrote %s, want an error response", body)
		}
	}
}

// FuzzWriteRead checks that what WriteObject writes, ReadObject reads
// back, in both framings.
func FuzzWriteRead(f *testing.F) {
	f.Add("initialize", "{}", uint64(1))
	f.Add("textDocument/didChange", `{"text":"é\r\n𝄞"}`, uint64(0))
	f.Fuzz(func(t *testing.T, method, params string, id uint64) {
		if !json.Valid([]byte(params)) {
			return
		}
		raw := json.RawMessage(params)
		sent := jsonrpc2.Request{Method: method, Params: &raw, ID: jsonrpc2.ID{Num: id}}
		for _, framing := range framings {
			opts := &rpc.StreamOptions{Framing: framing, StrictVersion: framing == rpc.Newline}
			out := &memRWC{r: bytes.NewReader(nil)}
			if err := rpc.NewStream(out, opts).WriteObject(sent); err != nil {
				t.Fatalf("WriteObject: %v", err)
			}
			// Two messages back to back: the framing must end the first.
			wrote := bytes.Repeat(out.out.Bytes(), 2)
			in := rpc.NewStream(&memRWC{r: bytes.NewReader(wrote)}, opts)
			for range 2 {
				var got jsonrpc2.Request
				if err := in.ReadObject(&got); err != nil {
					t.Fatalf("framing %d: reading back %q: %v", framing, wrote, err)
				}
				// JSON carries text: invalid UTF-8 becomes U+FFFD, byte by byte.
				var want string
				b, _ := json.Marshal(method)
				json.Unmarshal(b, &want)
				if got.Method != want || got.ID != sent.ID || !sameJSON(*got.Params, raw) {
					t.Fatalf("framing %d: read back %+v, wrote %+v", framing, got, sent)
				}
			}
			var end jsonrpc2.Request
			if err := in.ReadObject(&end); !errors.Is(err, io.EOF) {
				t.Fatalf("framing %d: after the messages: %v, want EOF", framing, err)
			}
		}
	})
}

// FuzzConn runs the whole dispatcher on arbitrary input after a valid
// initialize, for each protocol: it must answer what it can and stop at
// the end of input.
func FuzzConn(f *testing.F) {
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
	f.Add([]byte(frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}`)))
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`) + frame(`{"jsonrpc":"2.0","method":"exit"}`)))
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":3,"method":"boom","params":[1]}`)))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":4}}` + "\nnot json\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		h := rpc.Handlers{
			Initialize: echo,
			Requests: map[string]rpc.RequestFunc{
				"ping": func(context.Context, json.RawMessage) (any, error) { return "pong", nil },
				"boom": func(context.Context, json.RawMessage) (any, error) { panic("boom") },
			},
			Notifications: map[string]rpc.NotificationFunc{
				"note": func(_ context.Context, p json.RawMessage) error {
					var v map[string]any
					return rpc.Decode(p, &v)
				},
			},
		}
		for _, proto := range []rpc.Protocol{rpc.LSP, rpc.ACP} {
			server, client := net.Pipe()
			conn := rpc.NewConn(server, h, &rpc.Options{Protocol: proto})
			done := make(chan rpc.Result, 1)
			go func() { done <- conn.Run(context.Background()) }()
			go io.Copy(io.Discard, client)
			init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`
			if proto == rpc.LSP {
				init = frame(init)
			}
			client.Write([]byte(init + "\n"))
			client.Write(input)
			client.Close()
			select {
			case <-done:
			case <-time.After(wait):
				t.Fatalf("protocol %d: Run did not return after the input ended", proto)
			}
		}
	})
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}
