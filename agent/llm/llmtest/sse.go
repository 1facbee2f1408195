package llmtest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/tidwall/gjson"
)

// sse writes one server-sent-event stream and applies the step's fault.
type sse struct {
	w       http.ResponseWriter
	flusher http.Flusher
	r       *http.Request
	call    *Call
	fault   *Fault
	delay   time.Duration
	quit    <-chan struct{}
	n       int
	buf     []byte
	started bool
	stopped bool
	struck  bool
}

func newSSE(w http.ResponseWriter, r *http.Request, c *Call, step Step, quit <-chan struct{}) *sse {
	s := &sse{w: w, r: r, call: c, delay: time.Duration(step.Delay), quit: quit}
	s.flusher, _ = w.(http.Flusher)
	if c.Fault != nil && c.Fault.Kind != FaultStatus {
		s.fault = c.Fault
	}
	return s
}

// event sends one event (an empty name sends a data-only event, as Chat
// Completions does). It reports false once the stream is over, because a
// fault struck or the client left: the caller stops then.
func (s *sse) event(name string, data []byte) bool {
	if s.stopped {
		return false
	}
	s.start()
	if f := s.fault; f != nil && s.n >= f.After {
		s.strike()
		return false
	}
	if s.r.Context().Err() != nil {
		s.leave()
		return false
	}
	if s.delay > 0 {
		s.flush()
		t := time.NewTimer(s.delay)
		select {
		case <-t.C:
		case <-s.r.Context().Done():
			t.Stop()
			s.leave()
			return false
		case <-s.quit:
			t.Stop()
			s.stopped = true
			return false
		}
	}
	s.write(name, data)
	s.n++
	return !s.stopped
}

func (s *sse) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	if s.call.Cloud == "bedrock" {
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
	}
	if s.call.API == APIGenerate {
		h.Set("Content-Type", "application/x-ndjson") // Ollama's lines
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_llmtest_"+strconv.Itoa(s.call.Step))
	s.w.WriteHeader(http.StatusOK)
}

func (s *sse) write(name string, data []byte) {
	if s.call.Cloud == "bedrock" {
		s.writeAWS(data)
		return
	}
	b := s.buf[:0]
	if s.call.API == APIGenerate {
		b = append(append(b, data...), '\n')
		s.buf = b
		if _, err := s.w.Write(b); err != nil {
			s.leave()
		}
		return
	}
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		s.leave()
	}
}

// writeAWS sends an event as Bedrock does: an AWS event stream message of
// type "chunk" whose JSON payload holds the Anthropic event in base64.
func (s *sse) writeAWS(data []byte) {
	payload := append(append([]byte(`{"bytes":"`), base64.StdEncoding.EncodeToString(data)...), `"}`...)
	msg := eventstream.Message{Payload: payload}
	msg.Headers.Set(":message-type", eventstream.StringValue("event"))
	msg.Headers.Set(":event-type", eventstream.StringValue("chunk"))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	if err := eventstream.NewEncoder().Encode(s.w, msg); err != nil {
		s.leave()
	}
}

// streamEvents streams the step's Events as written.
func (a answer) streamEvents(s *sse) {
	for _, e := range a.step.Events {
		name := ""
		if a.call.API == APIAnthropic {
			name = gjson.Get(e, "type").String()
		}
		if !s.event(name, []byte(e)) {
			return
		}
	}
}

func (s *sse) flush() {
	if s.flusher != nil {
		s.flusher.Flush()
	}
}

// leave records that the client went away.
func (s *sse) leave() {
	s.stopped = true
	s.call.markGone()
}

// end finishes the stream. A fault that the stream was too short to reach
// strikes now.
func (s *sse) end() {
	if !s.stopped && s.fault != nil && !s.struck {
		s.start()
		s.strike()
	}
	if !s.stopped {
		s.flush()
	}
}

func (s *sse) strike() {
	s.struck = true
	s.stopped = true
	f := s.fault
	switch f.Kind {
	case FaultCut:
		s.flush()
		// Drops the connection without ending the chunked body: the client
		// reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	case FaultStall:
		s.flush()
		select {
		case <-s.r.Context().Done():
			s.call.markGone()
		case <-s.quit:
		}
	case FaultMalformed:
		name, data := malformedEvent(s.call.API)
		s.write(name, data)
		s.flush()
	case FaultErrorEvent:
		name, data := errorEvent(s.call.API, f, s.n)
		s.write(name, data)
		s.flush()
	}
}

// malformedEvent is an event of the API whose data is cut off mid-JSON.
func malformedEvent(api API) (string, []byte) {
	switch api {
	case APIAnthropic:
		return "content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unterminated`)
	case APIResponses:
		return "response.output_text.delta", []byte(`{"type":"response.output_text.delta","output_index":0,"delta":`)
	}
	return "", []byte(`{"id":"chatcmpl-llmtest","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`)
}

// errorEvent is the API's in-stream error.
func errorEvent(api API, f *Fault, seq int) (string, []byte) {
	msg := f.Message
	if msg == "" {
		msg = "scripted error event"
	}
	var b []byte
	switch api {
	case APIAnthropic:
		typ := f.Type
		if typ == "" {
			typ = "overloaded_error"
		}
		b = append(b, `{"type":"error","error":{"type":`...)
		b = appendString(b, typ)
		b = append(b, `,"message":`...)
		b = appendString(b, msg)
		b = append(b, `},"request_id":"req_llmtest"}`...)
		return "error", b
	case APIResponses:
		typ := f.Type
		if typ == "" {
			typ = "server_error"
		}
		b = append(b, `{"type":"error","code":`...)
		b = appendString(b, typ)
		b = append(b, `,"message":`...)
		b = appendString(b, msg)
		b = append(b, `,"param":null,"sequence_number":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		b = append(b, '}')
		return "error", b
	}
	typ := f.Type
	if typ == "" {
		typ = "server_error"
	}
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"code":`...)
	b = appendString(b, typ)
	b = append(b, `}}`...)
	return "", b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
