package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// bedrockEvents reads a Bedrock answer, an AWS event stream
// (application/vnd.amazon.eventstream), as the SSE events of Anthropic's
// API: each "chunk" event holds one Messages event, base64-encoded, and an
// exception or error message becomes an "error" event shaped like the
// API's, so the stream reports it as it would Anthropic's.
type bedrockEvents struct {
	rc  io.ReadCloser
	dec *eventstream.Decoder
	buf []byte
	evt wire.SSEEvent
	err error
}

func newBedrockEvents(rc io.ReadCloser) *bedrockEvents {
	return &bedrockEvents{rc: rc, dec: eventstream.NewDecoder()}
}

func (b *bedrockEvents) Next() bool {
	for b.err == nil {
		msg, err := b.dec.Decode(b.rc, b.buf)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				b.err = err
			}
			return false
		}
		b.buf = msg.Payload[:0]
		if ev, ok := b.translate(msg); ok {
			b.evt = ev
			return true
		}
	}
	return false
}

// translate turns one message into an event; false for messages that
// carry none (other event types).
func (b *bedrockEvents) translate(msg eventstream.Message) (wire.SSEEvent, bool) {
	header := func(name string) (string, bool) {
		v := msg.Headers.Get(name)
		if v == nil {
			return "", false
		}
		return v.String(), true
	}
	typ, ok := header(":message-type")
	if !ok {
		b.err = errors.New(":message-type event header not present")
		return wire.SSEEvent{}, false
	}
	switch typ {
	case "event":
		ev, ok := header(":event-type")
		if !ok {
			b.err = errors.New(":event-type event header not present")
			return wire.SSEEvent{}, false
		}
		if ev != "chunk" {
			return wire.SSEEvent{}, false
		}
		var chunk struct {
			Bytes string `json:"bytes"`
		}
		if err := json.Unmarshal(msg.Payload, &chunk); err != nil {
			b.err = fmt.Errorf("a Bedrock chunk: %w", err)
			return wire.SSEEvent{}, false
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Bytes)
		if err != nil {
			b.err = fmt.Errorf("a Bedrock chunk: %w", err)
			return wire.SSEEvent{}, false
		}
		return wire.SSEEvent{Type: gjson.GetBytes(data, "type").String(), Data: data}, true
	case "exception":
		code, _ := header(":exception-type")
		var info struct {
			Code    string
			Type    string `json:"__type"`
			Message string
		}
		if err := json.Unmarshal(msg.Payload, &info); err != nil && err != io.EOF {
			b.err = fmt.Errorf("received exception %s: parsing exception payload failed: %w", code, err)
			return wire.SSEEvent{}, false
		}
		switch {
		case code != "":
		case info.Code != "":
			code = info.Code
		case info.Type != "":
			code = info.Type
		default:
			code = "UnknownError"
		}
		message := info.Message
		if message == "" {
			message = "UnknownError"
		}
		return bedrockError(code, message), true
	case "error":
		code, ok := header(":error-code")
		if !ok {
			code = "UnknownError"
		}
		message, ok := header(":error-message")
		if !ok {
			message = "UnknownError"
		}
		return bedrockError(code, message), true
	}
	return wire.SSEEvent{}, false
}

// bedrockError is an error event as Anthropic's API sends one.
func bedrockError(typ, message string) wire.SSEEvent {
	data, _ := sjson.SetBytes([]byte(`{"type":"error","error":{}}`), "error.type", typ)
	data, _ = sjson.SetBytes(data, "error.message", message)
	return wire.SSEEvent{Type: "error", Data: data}
}

func (b *bedrockEvents) Event() wire.SSEEvent { return b.evt }
func (b *bedrockEvents) Err() error           { return b.err }
func (b *bedrockEvents) Close() error         { return b.rc.Close() }
