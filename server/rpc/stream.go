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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/internal/jsonline"
)

// DefaultMaxBody is the largest message a Stream accepts when
// StreamOptions leave it zero. Editors send whole documents (didOpen, a
// full-text didChange), and a source file of tens of megabytes is already
// far beyond what they open comfortably; a message over the limit is read
// and thrown away in small pieces, never held, so a huge or corrupt frame
// costs no memory.
const DefaultMaxBody = 64 << 20

// maxHeaderLine bounds one header line; real headers are a few dozen bytes.
const maxHeaderLine = 4096

// Framing is how messages are delimited on the byte stream.
type Framing int

const (
	// ContentLength frames each message with "Content-Length: N" headers
	// and a blank line, as the LSP base protocol does.
	ContentLength Framing = iota
	// Newline puts each message on one line, as ACP does: JSON never
	// needs a raw newline, so a line end ends a message.
	Newline
)

// StreamOptions configure a Stream.
type StreamOptions struct {
	// Framing delimits the messages; the zero value is ContentLength.
	Framing Framing
	// MaxBody is the largest message accepted, in bytes; a longer message
	// is skipped and answered with an error. Zero means DefaultMaxBody.
	MaxBody int64
	// StrictVersion refuses a message without "jsonrpc": "2.0" (ACP
	// does; LSP clients are read leniently).
	StrictVersion bool
	// Logger receives a line for every frame that is skipped; nil discards.
	Logger *slog.Logger
}

// Stream reads and writes JSON-RPC messages in one of the Framings and
// implements jsonrpc2.ObjectStream. Reads are meant for one goroutine
// (jsonrpc2's read loop); writes are safe for concurrent use.
//
// A frame that cannot be used is answered (see the package documentation)
// and skipped; ReadObject returns only a message, io.EOF at a clean end of
// input, io.ErrUnexpectedEOF when the input ends inside a frame, or the
// underlying reader's error.
type Stream struct {
	r       *bufio.Reader
	closer  io.Closer
	framing Framing
	maxBody int64
	strict  bool
	log     *slog.Logger

	// resync is set after an unusable header: input is skipped up to the
	// next "Content-Length" header name.
	resync bool
	// readErr is the error that ended a last line read whole, returned
	// by the next read (Newline framing).
	readErr error
	// failed is the read error that ended the stream, other than the end
	// of the input.
	failed atomic.Pointer[error]

	// handle, when set (by the Conn that owns the stream), takes the
	// requests and notifications leanRequest can read, on the read
	// goroutine, as jsonrpc2's read loop would hand them over.
	handle func(*jsonrpc2.Request)

	wmu sync.Mutex
	w   *bufio.Writer
}

// NewStream returns a Stream over rwc. Closing the Stream closes rwc.
func NewStream(rwc io.ReadWriteCloser, opts *StreamOptions) *Stream {
	s := &Stream{
		closer:  rwc,
		w:       bufio.NewWriterSize(rwc, 64<<10),
		maxBody: DefaultMaxBody,
		log:     slog.New(slog.DiscardHandler),
	}
	if opts != nil {
		s.framing, s.strict = opts.Framing, opts.StrictVersion
		if opts.MaxBody > 0 {
			s.maxBody = opts.MaxBody
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	size := maxHeaderLine
	if s.framing == Newline {
		size = 64 << 10
	}
	s.r = bufio.NewReaderSize(rwc, size)
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
func (s *Stream) ReadObject(v any) (err error) {
	defer func() {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.failed.CompareAndSwap(nil, &err)
		}
	}()
	for {
		var body []byte
		var err error
		if s.framing == Newline {
			body, err = s.readLineFrame()
		} else {
			body, err = s.readFrame()
		}
		if err == nil && s.handle != nil {
			if req, ok := leanRequest(body); ok {
				s.handle(req)
				continue
			}
		}
		if err == nil {
			err = decodeMessage(body, v, s.strict)
		}
		var fe *frameError
		if !errors.As(err, &fe) {
			return err
		}
		s.log.Warn("rpc: skipped a malformed message from the client", "code", fe.code, "err", fe.msg)
		if !fe.noReply {
			if err := s.writeError(fe); err != nil {
				return err
			}
		}
	}
}

// readFrame reads one header block and its body (ContentLength framing).
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
			line, err = s.readHeaderLine()
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
		head := make([]byte, min(length, jsonline.HeadSize))
		if _, err := io.ReadFull(s.r, head); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		// The rest goes in the reader's buffer-sized pieces, kept nowhere.
		if _, err := io.CopyN(io.Discard, s.r, length-int64(len(head))); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, s.tooLong(&jsonline.Skipped{Head: head, Size: length})
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

// readLineFrame returns the next line that is not blank, without its
// line end (Newline framing). A last line without a line end counts.
func (s *Stream) readLineFrame() ([]byte, error) {
	for {
		if s.readErr != nil {
			return nil, s.readErr
		}
		line, over, err := jsonline.Read(s.r, s.maxBody)
		if err != nil {
			s.readErr = err // after this line, which counts even if cut
		}
		if over != nil {
			return nil, s.tooLong(over)
		}
		if len(line) > 0 {
			return line, nil
		}
	}
}

// tooLong is the error for a message over the limit, with the id its
// head shows, so that a request is answered.
func (s *Stream) tooLong(over *jsonline.Skipped) *frameError {
	h, msg := over.Refusal(s.maxBody)
	fe := badFrame(jsonrpc2.CodeInvalidRequest, "%s", msg)
	var id jsonrpc2.ID
	if h.ID != nil && id.UnmarshalJSON(h.ID) == nil {
		fe.id = &id
	}
	fe.noReply = h.Response
	return fe
}

// readHeaderLine reads a header line without its line end (CRLF, or a lone LF).
// A line longer than the buffer returns bufio.ErrBufferFull; the rest of it
// is left for skipToContentLength.
func (s *Stream) readHeaderLine() (string, error) {
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
		rest, err := s.readHeaderLine()
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
func decodeMessage(body []byte, v any, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("rpc: ReadObject needs a non-nil pointer, got %T", v)
	}
	fresh := reflect.New(rv.Type().Elem())
	err := json.Unmarshal(body, fresh.Interface())
	if err == nil && strict {
		err = checkVersion(body)
	}
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

// leanRequest reads the usual request or notification with one check
// and one scan, its params a slice of body: an object of "jsonrpc":
// "2.0", a string method, an id that is null, a string or a non-negative
// integer, and params, each once, nothing else. jsonrpc2's own decoding
// takes four passes more and copies of the params as Go values, which for
// a document of tens of megabytes costs seconds and hundreds of
// megabytes. Anything else (ok false) goes jsonrpc2's way, with its
// errors.
func leanRequest(body []byte) (_ *jsonrpc2.Request, ok bool) {
	if !json.Valid(body) {
		return nil, false
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	req := &jsonrpc2.Request{Notif: true}
	var seen [4]bool
	for i = skipSpace(body, i+1); i < len(body) && body[i] != '}'; {
		// A key: valid JSON, so a string; one with escapes goes the
		// general way.
		end := bytes.IndexByte(body[i+1:], '"') + i + 1
		key := string(body[i+1 : end])
		k := slices.Index([]string{"jsonrpc", "method", "id", "params"}, key)
		if k < 0 || seen[k] || strings.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		seen[k] = true
		start := skipSpace(body, skipSpace(body, end+1)+1) // past the colon
		stop := skipValue(body, start)
		raw := json.RawMessage(body[start:stop])
		switch key {
		case "jsonrpc":
			if string(raw) != `"2.0"` {
				return nil, false
			}
		case "method":
			if raw[0] != '"' || json.Unmarshal(raw, &req.Method) != nil {
				return nil, false
			}
		case "id":
			switch {
			case string(raw) == "null":
			case raw[0] == '"':
				if json.Unmarshal(raw, &req.ID.Str) != nil {
					return nil, false
				}
				req.ID.IsString, req.Notif = true, false
			default:
				n, err := strconv.ParseInt(string(raw), 10, 64)
				if err != nil || n < 0 {
					return nil, false
				}
				req.ID.Num, req.Notif = uint64(n), false
			}
		case "params":
			req.Params = &raw
		}
		i = skipSpace(body, stop)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	if !seen[0] || !seen[1] {
		return nil, false
	}
	return req, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value that starts at b[i], in input
// known to be valid JSON.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// checkVersion reports a message without "jsonrpc": "2.0".
func checkVersion(body []byte) error {
	var v struct {
		JSONRPC string `json:"jsonrpc"`
	}
	if json.Unmarshal(body, &v) != nil || v.JSONRPC != "2.0" {
		return errors.New(`the message lacks "jsonrpc": "2.0"`)
	}
	return nil
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

// WriteObject writes one message in the Stream's framing.
func (s *Stream) WriteObject(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.begin(len(data))
	s.w.Write(data)
	return s.end()
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
	s.begin(n)
	s.w.WriteString(head)
	s.w.Write(idb)
	s.w.WriteString(mid)
	s.w.Write(result)
	s.w.WriteByte('}')
	return s.end()
}

// begin starts a frame whose body has n bytes; end finishes and sends it.
// Both run under wmu.
func (s *Stream) begin(n int) {
	if s.framing == ContentLength {
		s.w.WriteString("Content-Length: ")
		s.w.WriteString(strconv.Itoa(n))
		s.w.WriteString("\r\n\r\n")
	}
}

func (s *Stream) end() error {
	if s.framing == Newline {
		s.w.WriteByte('\n')
	}
	return s.w.Flush()
}

// readFailure is the read error that ended the stream, other than the
// end of the input; nil if none did.
func (s *Stream) readFailure() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Close closes the underlying stream.
func (s *Stream) Close() error { return s.closer.Close() }
