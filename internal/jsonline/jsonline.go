// Package jsonline reads newline-delimited JSON-RPC, one message per line,
// with a bound on a line's length that costs no memory past it: what
// darman's JSON-RPC engine (server/rpc, for ACP) and its MCP stdio
// transport (mcp/server) both read.
package jsonline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// HeadSize is how much of a line over the limit is kept, to find its id
// and method for the error answer.
const HeadSize = 4096

// Skipped is a line over the limit: its size with its line end, and its
// first HeadSize bytes.
type Skipped struct {
	Head []byte
	Size int64
}

// Read returns the next line without its end and surrounding space
// (empty for a blank line). A line longer than limit is not kept: it is
// read to its end in the reader's buffer-sized pieces and returned as
// Skipped, however many reads it takes. The error is the reader's, with
// the line it ended (io.EOF after a last line without its end).
func Read(br *bufio.Reader, limit int64) ([]byte, *Skipped, error) {
	var buf []byte
	var over *Skipped
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case over != nil:
			over.Size += int64(len(chunk))
			if n := len(over.Head); n < HeadSize {
				over.Head = append(over.Head, chunk[:min(len(chunk), HeadSize-n)]...)
			}
		case int64(len(buf)+len(chunk)) > limit:
			over = &Skipped{Size: int64(len(buf) + len(chunk))}
			if len(buf) < HeadSize {
				buf = append(buf, chunk[:min(len(chunk), HeadSize-len(buf))]...)
			}
			over.Head = bytes.Clone(buf[:min(len(buf), HeadSize)])
			buf = nil
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over != nil {
			return nil, over, err
		}
		return bytes.TrimSpace(buf), nil, err
	}
}

// Head is what the first bytes of a message show.
type Head struct {
	// ID is the raw id, nil when the head does not show one.
	ID json.RawMessage
	// Method is the method, empty when the head does not show it.
	Method string
	// Response is set when the head shows a result or an error before
	// any method: the message answers a call, and must not be answered.
	Response bool
}

// Peek reads the id and method of a JSON-RPC message from its first
// bytes, as far as they go: the values it cannot see stay unset.
func Peek(head []byte) Head {
	var h Head
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for dec.More() && (h.ID == nil || h.Method == "") {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		if key == "result" || key == "error" {
			h.Response = h.Method == ""
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		switch key {
		case "id":
			h.ID = raw
		case "method":
			json.Unmarshal(raw, &h.Method)
		}
	}
	return h
}

// Refusal is what a message over limit bytes shows of itself, and the
// message of the error answer that refuses it.
func (s *Skipped) Refusal(limit int64) (Head, string) {
	h := Peek(s.Head)
	what := "the message"
	if h.Method != "" {
		what = fmt.Sprintf("the message (%.60s)", h.Method)
	}
	lim := fmt.Sprintf("%d bytes", limit)
	if limit%(1<<20) == 0 {
		lim = fmt.Sprintf("%d MiB", limit>>20)
	}
	return h, fmt.Sprintf("%s has %d bytes, over the limit of %s; darman skipped it", what, s.Size, lim)
}
