package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/darman-dev/darman/server/rpc"
)

// BenchmarkLargeDidOpen sends a didOpen of a 16 MiB document through a
// Conn over a pipe to a handler that decodes it, as darman lsp's does:
// what reading a large message costs (B/op: the body and the text should
// be all it allocates).
func BenchmarkLargeDidOpen(b *testing.B) {
	got := make(chan int, 1)
	h := rpc.Handlers{Initialize: echo, Notifications: map[string]rpc.NotificationFunc{
		"textDocument/didOpen": func(_ context.Context, p json.RawMessage) error {
			var v struct {
				TextDocument struct{ Text string } `json:"textDocument"`
			}
			err := rpc.Decode(p, &v)
			got <- len(v.TextDocument.Text)
			return err
		}}}
	c := serve(b, h, nil)
	c.initialize()
	const size = 16 << 20
	head := `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///big.txt","text":"`
	tail := `"}}}`
	msg := []byte("Content-Length: " + itoa(size) + "\r\n\r\n" + head)
	msg = append(msg, bytes.Repeat([]byte("a"), size-len(head)-len(tail))...)
	msg = append(msg, tail...)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if n := <-got; n != size-len(head)-len(tail) {
			b.Fatalf("the handler read %d bytes of text", n)
		}
	}
}
