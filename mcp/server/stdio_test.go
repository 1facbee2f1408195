package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioRefusesWhatTheSDKCannotRead runs an SDK server behind Stdio
// over pipes: a line the SDK would end the connection on is answered (a
// broken response only logged), the rest reaches the server, and the end
// of the input ends Run.
func TestStdioRefusesWhatTheSDKCannotRead(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), NewStdio(inR, outW, 1<<20, nil)) }()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			line, err := lines.ReadBytes('\n')
			if err == nil {
				json.Unmarshal(line, &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","result":{}}`) // a broken response: not answered
	send(`  `)                            // a blank line: nothing
	send(`{"jsonrpc":"2.0","id":"x","method":"ping","params":{"a":` + strings.Repeat("b", 2<<20))
	if m := next(); m["id"] != "x" || m["error"].(map[string]any)["code"] != -32600.0 {
		t.Errorf("over the limit: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":1.5e0,"method":"ping"`)
	if m := next(); m["id"] != nil || m["error"].(map[string]any)["code"] != -32700.0 {
		t.Errorf("truncated: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := next(); m["id"] != 2.0 || m["result"] == nil {
		t.Errorf("ping: %v", m)
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not end with the input")
	}
}

// FuzzStdio sends arbitrary bytes, then a ping on a line of its own: the
// server must answer the ping (nothing before it ended the connection),
// write only JSON lines, and end with its input.
func FuzzStdio(f *testing.F) {
	f.Add([]byte("not json\n[]\n{\"id\":{}}\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	f.Add([]byte(strings.Repeat("[", 3000)))
	f.Fuzz(func(t *testing.T, input []byte) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		done := make(chan error, 1)
		go func() { done <- srv.Run(context.Background(), NewStdio(inR, outW, 1<<16, nil)) }()
		go func() {
			inW.Write(input)
			inW.Write([]byte("\n" + `{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"))
		}()
		answered := make(chan bool, 1)
		go func() {
			lines := bufio.NewReader(outR)
			for {
				line, err := lines.ReadBytes('\n')
				if err != nil {
					answered <- false
					return
				}
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(line, &m) != nil {
					t.Errorf("a line that is not JSON: %q", line)
				}
				if string(m.ID) == `"last"` {
					answered <- true
					io.Copy(io.Discard, outR)
					return
				}
			}
		}()
		select {
		case ok := <-answered:
			if !ok {
				t.Fatal("the output ended before the ping was answered")
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the ping after the input was not answered")
		}
		inW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not end with the input")
		}
		outW.Close()
	})
}
