package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLargeResultsAreDecodedWhole: a large result (kept aside from
// jsonrpc2's own decoding) reaches its call whole, as a small one does,
// and nothing of it stays with the client after the call.
func TestLargeResultsAreDecodedWhole(t *testing.T) {
	f := startFake(t)
	c := connect(t, f, Options{})
	ctx := context.Background()
	for _, n := range []int{1, 400} {
		uri := URIFromPath(filepath.Join(f.root, fmt.Sprintf("f%d.go", n)))
		var src strings.Builder
		for i := range n {
			fmt.Fprintf(&src, "func Fn%d_é\n", i)
		}
		if _, err := c.Sync(ctx, uri, "go", []byte(src.String())); err != nil {
			t.Fatal(err)
		}
		syms, err := c.DocumentSymbols(ctx, uri)
		if err != nil || len(syms) != n {
			t.Fatalf("%d functions: DocumentSymbols = %d symbols, %v", n, len(syms), err)
		}
		for i, s := range syms {
			if want := fmt.Sprintf("Fn%d_é", i); s.Name != want || int(s.Range.Start.Line) != i {
				t.Fatalf("%d functions: symbol %d = %+v; want %s on line %d", n, i, s, want, i)
			}
		}
	}
	c.kept.mu.Lock()
	defer c.kept.mu.Unlock()
	if len(c.kept.waiting) != 0 {
		t.Errorf("after the calls the client still keeps %d results", len(c.kept.waiting))
	}
}

// BenchmarkWorkspaceSymbolsCall is one workspace/symbol call answered
// with 200 symbols by a server in the same process, over a pipe: what a
// warm lookup costs darman's client besides the server's own time
// (jsonrpc2's reading of the answer and the call's decoding of it).
func BenchmarkWorkspaceSymbolsCall(b *testing.B) {
	payload := symbolPayload(200)
	client, server := net.Pipe()
	go answerSymbols(server, payload)
	ctx := context.Background()
	c, err := Connect(ctx, client, Options{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		syms, err := c.WorkspaceSymbols(ctx, "Handler")
		if err != nil || len(syms) != 200 {
			b.Fatalf("WorkspaceSymbols = %d symbols, %v", len(syms), err)
		}
	}
}

// answerSymbols is a language server that answers initialize, every
// workspace/symbol with payload, and any other request with null.
func answerSymbols(rw net.Conn, payload json.RawMessage) {
	defer rw.Close()
	r := bufio.NewReader(rw)
	for {
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &m)
		if m.ID == nil {
			continue // a notification
		}
		result := json.RawMessage("null")
		switch m.Method {
		case "initialize":
			result = json.RawMessage(`{"capabilities":{"workspaceSymbolProvider":true}}`)
		case "workspace/symbol":
			result = payload
		}
		out := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
		if _, err := fmt.Fprintf(rw, "Content-Length: %d\r\n\r\n%s", len(out), out); err != nil {
			return
		}
	}
}

// TestOddAnswersAreLeftToJSONRPC: a large message that is not a plain
// response to a call waited for, or not JSON, goes to jsonrpc2 as it came
// (which says what is wrong with it); a response is kept aside whatever
// the order of its members.
func TestOddAnswersAreLeftToJSONRPC(t *testing.T) {
	big := strings.Repeat(`{"name":"x","kind":12},`, 200)
	var k keptResults
	k.expect(3)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":4,"result":[` + big + `{}]}`,                       // no call waits for 4
		`{"jsonrpc":"2.0","id":"3","result":[` + big + `{}]}`,                     // not the id darman gave
		`{"jsonrpc":"2.0","id":3,"method":"x","params":[` + big + `{}]}`,          // a request
		`{"jsonrpc":"2.0","id":3,"result":[` + big,                                // cut short
		`{"jsonrpc":"2.0","id":3,"result":[` + big + `{}]} trailing`,              // more after it
		`{"jsonrpc":"2.0","id":3,"result":"` + strings.Repeat("\xff", 3000) + `"`, // not JSON's UTF-8, cut short
		`[{"jsonrpc":"2.0","id":3,"result":[` + big + `{}]}]`,                     // a batch
	} {
		if got := k.strip([]byte(msg)); string(got) != msg {
			t.Errorf("strip(%.60q...) = %.80q", msg, got)
		}
	}
	msg := `{"result":[` + big + `{}],"id":3,"jsonrpc":"2.0"}`
	if got := string(k.strip([]byte(msg))); got != `{"result":`+keptMarker+`,"id":3,"jsonrpc":"2.0"}` {
		t.Errorf("strip of a response, result first = %.80q", got)
	}
	if got := string(k.take(3)); got != `[`+big+`{}]` {
		t.Errorf("kept %.80q", got)
	}
}
