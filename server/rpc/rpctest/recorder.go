package rpctest

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// Frame is one message on the wire, or a step's beginning (Step set).
type Frame struct {
	FromClient bool
	Body       []byte
	Raw        bool   // bytes the test wrote as they are (malformed frames)
	Step       string // a step begins here
}

// Recorder is the client's end of the pipe, recording the messages that
// cross it in the order the client wrote and read them, split into the
// steps of a scenario: what the wire transcripts are made of.
type Recorder struct {
	net.Conn
	lines bool // newline-delimited (ACP), else Content-Length frames (LSP)

	mu      sync.Mutex
	frames  []Frame
	out, in bytes.Buffer // bytes written and read, not yet a whole message
}

// NewRecorder records c in codec's framing (LSP or ACP); what crosses
// before the first Step is under first.
func NewRecorder(c net.Conn, codec jsonrpc2.ObjectCodec, first string) *Recorder {
	_, lines := codec.(jsonrpc2.PlainObjectCodec)
	return &Recorder{Conn: c, lines: lines, frames: []Frame{{Step: first}}}
}

func (w *Recorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.out.Write(p)
	w.cut(&w.out, true)
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *Recorder) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	w.mu.Lock()
	w.in.Write(p[:n])
	w.cut(&w.in, false)
	w.mu.Unlock()
	return n, err
}

// WriteRaw sends bytes as they are, recorded as they are.
func (w *Recorder) WriteRaw(t testing.TB, s string) {
	t.Helper()
	w.mu.Lock()
	w.frames = append(w.frames, Frame{FromClient: true, Body: []byte(s), Raw: true})
	w.mu.Unlock()
	if _, err := w.Conn.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// Step begins a step of the scenario: what crosses the wire from now on
// is shown under its name.
func (w *Recorder) Step(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frames = append(w.frames, Frame{Step: name})
}

// Frames returns what was recorded so far.
func (w *Recorder) Frames() []Frame {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.frames)
}

// cut moves the whole messages at the start of buf to w.frames. w.mu is
// held.
func (w *Recorder) cut(buf *bytes.Buffer, fromClient bool) {
	for {
		body, ok := w.next(buf)
		if !ok {
			return
		}
		if body != nil {
			w.frames = append(w.frames, Frame{FromClient: fromClient, Body: body})
		}
	}
}

// next takes the first whole message off buf: ok false when there is
// none yet, a nil body for a blank line.
func (w *Recorder) next(buf *bytes.Buffer) (body []byte, ok bool) {
	b := buf.Bytes()
	if w.lines {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, false
		}
		line := bytes.TrimSpace(bytes.Clone(buf.Next(i + 1)))
		if len(line) == 0 {
			return nil, true
		}
		return line, true
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	length := -1
	for _, line := range strings.Split(string(b[:end]), "\r\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(value))
		}
	}
	if length < 0 || len(b) < end+4+length {
		return nil, false
	}
	body = slices.Clone(b[end+4 : end+4+length])
	buf.Next(end + 4 + length)
	return body, true
}
