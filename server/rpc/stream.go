package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// DefaultMaxBody is the largest message body a Stream accepts when
// StreamOptions leave it zero: large enough for any source file an editor
// opens, small enough that a corrupt length cannot exhaust memory.
const DefaultMaxBody = 256 << 20

// maxHeaderLine bounds one header line; real headers are a few dozen bytes.
const maxHeaderLine = 4096

// StreamOptions configure a Stream.
type StreamOptions struct {
	// MaxBody is the largest body accepted, in bytes; a longer message is
	// skipped and answered with an error. Zero means DefaultMaxBody.
	MaxBody int64
	// Logger receives a line for every frame that is skipped; nil discards.
	Logger *slog.Logger
}

// Stream reads and writes JSON-RPC messages framed by Content-Length
// headers, as the LSP base protocol says, and implements
// jsonrpc2.ObjectStream. Reads are meant for one goroutine (jsonrpc2's read
// loop); writes are safe for concurrent use.
//
// A frame that cannot be used is answered (see the package documentation)
// and skipped; ReadObject returns only a message, io.EOF at a clean end of
// input, io.ErrUnexpectedEOF when the input ends inside a frame, or the
// underlying reader's error.
type Stream struct {
	r       *bufio.Reader
	closer  io.Closer
	maxBody int64
	log     *slog.Logger

	// resync is set after an unusable header: input is skipped up to the
	// next "Content-Length" header name.
	resync bool

	wmu sync.Mutex
	w   *bufio.Writer
}

// NewStream returns a Stream over rwc. Closing the Stream closes rwc.
func NewStream(rwc io.ReadWriteCloser, opts *StreamOptions) *Stream {
	s := &Stream{
		r:       bufio.NewReaderSize(rwc, maxHeaderLine),
		closer:  rwc,
		w:       bufio.NewWriterSize(rwc, 64<<10),
		maxBody: DefaultMaxBody,
		log:     slog.New(slog.DiscardHandler),
	}
	if opts != nil {
		if opts.MaxBody > 0 {
			s.maxBody = opts.MaxBody
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	return s
}

// frameError is a frame that cannot be used: it is answered and skipped.
type frameError struct {
	code int64
	// id is the id of the request the frame held, when it could be read.
	id *jsonrpc2.ID
	// reply is false for a broken response from the client, which must
	// not be answered.
	noReply bool
	msg     string
}

func (e *frameError) Error() string { return e.msg }

func badFrame(code int64, format string, args ...any) *frameError {
	return &frameError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ReadObject reads the next usable message into v, which jsonrpc2 passes
// as a pointer to its message type.
func (s *Stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err == nil {
			err = decodeMessage(body, v)
		}
		var fe *frameError
		if !errors.As(err, &fe) {
			return err
		}
		s.log.Warn("lsp: skipped a malformed message from the client", "code", fe.code, "err", fe.msg)
		if !fe.noReply {
			if err := s.writeError(fe); err != nil {
				return err
			}
		}
	}
}

// readFrame reads one header block and its body.
func (s *Stream) readFrame() ([]byte, error) {
	length := int64(-1)
	sawHeader := false
	var charsetErr *frameError
	for {
		var line string
		var err error
		if s.resync {
			line, err = s.skipToContentLength()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil, io.EOF // nothing usable was left
				}
				return nil, err
			}
			s.resync = false
		} else {
			line, err = s.readLine()
		}
		switch {
		case errors.Is(err, io.EOF) && !sawHeader && line == "":
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, io.ErrUnexpectedEOF
		case errors.Is(err, bufio.ErrBufferFull):
			s.resync = true
			return nil, badFrame(jsonrpc2.CodeParseError, "a header line is longer than %d bytes; expected \"Content-Length: N\" headers", maxHeaderLine)
		case err != nil:
			return nil, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank lines between messages
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			s.resync = true
			return nil, badFrame(jsonrpc2.CodeParseError, "malformed header line %q; expected \"Name: value\" headers, a blank line, then the JSON body", clip(line))
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "content-length":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				s.resync = true
				return nil, badFrame(jsonrpc2.CodeParseError, "Content-Length %q is not a byte count", clip(value))
			}
			length = n
		case "content-type":
			if _, params, err := mime.ParseMediaType(value); err == nil {
				if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "utf8" {
					charsetErr = badFrame(jsonrpc2.CodeParseError, "Content-Type charset %q is not supported; send utf-8", cs)
				}
			}
		}
	}
	if length < 0 {
		s.resync = true
		return nil, badFrame(jsonrpc2.CodeParseError, "the message has no Content-Length header")
	}
	if length > s.maxBody {
		if _, err := io.CopyN(io.Discard, s.r, length); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, badFrame(jsonrpc2.CodeParseError, "the message has %d bytes, over the limit of %d", length, s.maxBody)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if charsetErr != nil {
		return nil, charsetErr
	}
	return body, nil
}

// readLine reads a header line without its line end (CRLF, or a lone LF).
// A line longer than the buffer returns bufio.ErrBufferFull; the rest of it
// is left for skipToContentLength.
func (s *Stream) readLine() (string, error) {
	b, err := s.r.ReadSlice('\n')
	if err != nil {
		return string(b), err
	}
	b = bytes.TrimSuffix(b[:len(b)-1], []byte{'\r'})
	return string(b), nil
}

// skipToContentLength discards input up to the next "Content-Length"
// (in any case) and returns the header line that starts there, so that a
// frame that follows garbage, or a body whose header was unusable, is found
// again.
func (s *Stream) skipToContentLength() (string, error) {
	const want = "content-length"
	matched := 0
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case lower(c) == want[matched]:
			matched++
		case lower(c) == want[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched < len(want) {
			continue
		}
		matched = 0
		rest, err := s.readLine()
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue // not a header after all: keep looking
		case err != nil:
			return "", err
		}
		return "Content-Length" + rest, nil
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isToken reports whether s is an HTTP header name (RFC 9110 token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// decodeMessage decodes body into v (jsonrpc2's message type) through a
// fresh value, so that a failed attempt leaves nothing behind in v.
func decodeMessage(body []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("rpc: ReadObject needs a non-nil pointer, got %T", v)
	}
	fresh := reflect.New(rv.Type().Elem())
	err := json.Unmarshal(body, fresh.Interface())
	if err == nil {
		rv.Elem().Set(fresh.Elem())
		return nil
	}
	if !json.Valid(body) {
		return badFrame(jsonrpc2.CodeParseError, "the message body is not valid JSON: %v", err)
	}
	fe := badFrame(jsonrpc2.CodeInvalidRequest, "the message is not a JSON-RPC 2.0 request, notification or response: %v", err)
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &probe) == nil {
		if probe.Method == nil && (probe.Result != nil || probe.Error != nil) {
			fe.noReply = true // a broken response: there is no one to answer
		}
		var id jsonrpc2.ID
		if probe.ID != nil && id.UnmarshalJSON(probe.ID) == nil {
			fe.id = &id
		}
	}
	return fe
}

// errorReply is a response with an error, whose id may be null.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *jsonrpc2.ID    `json:"id"`
	Error   *jsonrpc2.Error `json:"error"`
}

func (s *Stream) writeError(fe *frameError) error {
	return s.WriteObject(errorReply{JSONRPC: "2.0", ID: fe.id, Error: &jsonrpc2.Error{Code: fe.code, Message: fe.msg}})
}

// WriteObject writes one message with its Content-Length header.
func (s *Stream) WriteObject(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.w.WriteString("Content-Length: ")
	s.w.WriteString(strconv.Itoa(len(data)))
	s.w.WriteString("\r\n\r\n")
	s.w.Write(data)
	return s.w.Flush()
}

// writeResult writes a response whose result is already encoded.
func (s *Stream) writeResult(id jsonrpc2.ID, result []byte) error {
	idb, err := id.MarshalJSON()
	if err != nil {
		return err
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	n := len(head) + len(idb) + len(mid) + len(result) + 1
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.w.WriteString("Content-Length: ")
	s.w.WriteString(strconv.Itoa(n))
	s.w.WriteString("\r\n\r\n")
	s.w.WriteString(head)
	s.w.Write(idb)
	s.w.WriteString(mid)
	s.w.Write(result)
	s.w.WriteByte('}')
	return s.w.Flush()
}

// Close closes the underlying stream.
func (s *Stream) Close() error { return s.closer.Close() }
