package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/jsonline"
)

// DefaultMaxLine is the longest line a Stdio transport passes on, the
// SDK's own default (mcp.DefaultMaxLineLength).
const DefaultMaxLine = mcp.DefaultMaxLineLength

// Stdio is the transport of `darman mcp`: newline-delimited JSON-RPC on a
// reader and a writer (stdin and stdout), as the SDK's StdioTransport
// speaks it, with darman's own line reader in front. The SDK's connection
// ends at the first line it cannot decode; this one answers such a line
// as JSON-RPC asks and reads on:
//   - a line that is not JSON, or nests deeper than the SDK decodes
//     (1,000 levels), is answered -32700 (id null);
//   - JSON that is not a JSON-RPC 2.0 message (no "jsonrpc": "2.0", an id
//     that is an object, neither a method nor an id), and a batch (MCP
//     has none since 2025-06-18, and the SDK ends the connection on one),
//     are answered -32600, with the id when it can be read;
//   - a line over the limit is read past in small pieces without being
//     kept, and answered -32600 with the id its first bytes show.
//
// Every other line goes to the SDK whole. Answers and the SDK's own
// writes never interleave: each is one Write of a whole line.
type Stdio struct {
	in      io.Reader
	out     *lineWriter
	maxLine int64
	log     *slog.Logger
}

// NewStdio returns a transport reading in and writing out; maxLine zero
// means DefaultMaxLine, and a nil log discards.
func NewStdio(in io.Reader, out io.Writer, maxLine int64, log *slog.Logger) *Stdio {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Stdio{in: in, out: &lineWriter{w: out}, maxLine: maxLine, log: log}
}

// Connect implements mcp.Transport. The SDK reads the lines that pass
// from a pipe; the SDK's connection is returned as is, so that it learns
// the session's state as it does over its own stdio. When the SDK
// closes the connection, lines still arriving are dropped; a Read of in
// still blocked then returns only when in is closed (as with the SDK's).
func (t *Stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	conn, err := (&mcp.IOTransport{Reader: pr, Writer: t.out, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	go t.pump(pw)
	return conn, nil
}

// pump reads lines from in, answers those the SDK cannot take and passes
// the others to pw, until in ends or the SDK stops reading.
func (t *Stdio) pump(pw *io.PipeWriter) {
	br := bufio.NewReaderSize(t.in, 64<<10)
	for {
		line, over, err := jsonline.Read(br, t.maxLine)
		switch {
		case over != nil:
			h, msg := over.Refusal(t.maxLine)
			t.refuse(validID(h.ID), h.Response, jsonrpc.CodeInvalidRequest, msg)
		case len(line) > 0:
			if !t.check(line) {
				break
			}
			line = append(line, '\n')
			if _, werr := pw.Write(line); werr != nil {
				return // the SDK closed the connection
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err) // nil: the SDK reads io.EOF
			return
		}
	}
}

// check answers a line the SDK would end the connection on, and reports
// whether the line may go to the SDK.
func (t *Stdio) check(line []byte) bool {
	if !json.Valid(line) {
		err := json.Unmarshal(line, new(json.RawMessage)) // says where
		t.refuse(nil, false, jsonrpc.CodeParseError, fmt.Sprintf("the line is not JSON (%v); send one JSON-RPC 2.0 message per line", err))
		return false
	}
	if line[0] == '[' {
		t.refuse(nil, false, jsonrpc.CodeInvalidRequest, "darman does not take JSON-RPC batches (MCP has none since 2025-06-18); send one message per line")
		return false
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		code := int64(jsonrpc.CodeInvalidRequest)
		if strings.Contains(err.Error(), "nesting depth") {
			code = jsonrpc.CodeParseError
		}
		h := jsonline.Peek(line)
		t.refuse(validID(h.ID), h.Response, code, fmt.Sprintf("the line is not a JSON-RPC 2.0 message darman can read: %v", err))
		return false
	}
	return true
}

// validID returns id if it is one a JSON-RPC answer can carry (a string
// or a number), else nil.
func validID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return nil
	}
	return id
}

// refuse answers a line that was not passed on (a broken answer to a
// call of ours is only logged: answering it would start a loop of errors).
func (t *Stdio) refuse(id json.RawMessage, isResponse bool, code int64, msg string) {
	t.log.Warn("darman mcp: skipped a line from the client", "code", code, "err", msg)
	if isResponse {
		return
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return
	}
	if _, err := t.out.Write(append(b, '\n')); err != nil {
		t.log.Debug("darman mcp: cannot answer", "err", err)
	}
}

// lineWriter serializes whole-line writes: the SDK writes each message
// with one Write, and so does refuse. Closing it closes nothing: stdout
// is the process's.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error { return nil }
