package lsp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"testing"

	"github.com/darman-dev/darman/server/lsp"
)

// BenchmarkInitialize is one answer to initialize, from the request's
// write to the answer's read, by a new server over a pipe (the agent,
// started after the answer, fails at once). Run with -benchtime 1x in a
// new process each time, it measures the first answer of a process, as
// `darman lsp` gives it: encoding/json's first use of the types.
func BenchmarkInitialize(b *testing.B) {
	root := b.TempDir()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{},"workspaceFolders":[{"uri":"file://%s","name":"p"}]}}`, root)
	frame := []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(req), req))
	for b.Loop() {
		b.StopTimer()
		srv, err := lsp.New(lsp.Options{
			Start: func(context.Context, lsp.Setup) (*lsp.Agent, error) {
				return nil, errors.New("no agent in this benchmark")
			},
			Root:    root,
			Version: "bench",
		})
		if err != nil {
			b.Fatal(err)
		}
		ours, theirs := net.Pipe()
		done := make(chan int, 1)
		go func() { done <- srv.Serve(context.Background(), theirs) }()
		r := textproto.NewReader(bufio.NewReader(ours))
		b.StartTimer()
		if _, err := ours.Write(frame); err != nil {
			b.Fatal(err)
		}
		h, err := r.ReadMIMEHeader()
		if err != nil {
			b.Fatal(err)
		}
		n, err := strconv.Atoi(h.Get("Content-Length"))
		if err != nil {
			b.Fatal(err)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r.R, body); err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(body, []byte(`"capabilities"`)) {
			b.Fatalf("initialize answered %s", body)
		}
		b.StopTimer()
		ours.Close()
		<-done
		b.StartTimer()
	}
}
