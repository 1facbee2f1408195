package anthropic

import (
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
)

// eventSource is a stream of server-sent events: an SSE body, or Bedrock's
// event stream read as one.
type eventSource interface {
	// Next reads the next event; false at the end or on an error (Err).
	Next() bool
	Event() wire.SSEEvent
	Err() error
	Close() error
}

// anthropicBlock is the state of one content block of the answer.
type anthropicBlock struct {
	kind      llm.EventKind // EventTextDelta, EventReasoningDelta, EventToolCallDelta; 0 for blocks darman ignores
	part      int
	id, name  string
	text      strings.Builder
	args      []byte
	signature string
	redacted  string
}

// anthropicSource translates a Messages stream: message_start,
// content_block_start/delta/stop for text, thinking and tool_use blocks,
// message_delta, message_stop, with ping and error events between them.
type anthropicSource struct {
	events  eventSource
	model   llm.ModelInfo
	blocks  []*anthropicBlock
	parts   int
	usage   llm.Usage
	stop    string
	stopped bool
	fail    error
}

func (s *anthropicSource) Next(buf []llm.Event) ([]llm.Event, bool) {
	for {
		if !s.events.Next() {
			buf, s.fail = wire.Ending(buf, s.events.Err(), s.stopped, "no message_stop event", s.usage, s.model, anthropicFinish(s.stop))
			return buf, false
		}
		ev := s.events.Event()
		if ev.Type == "ping" {
			continue
		}
		data, ok, bad := wire.EventJSON(ev.Type, ev.Data)
		if bad != nil {
			s.fail = bad
			return buf, false
		}
		if !ok {
			continue
		}
		if ev.Type == "error" || data.Get("type").Str == "error" {
			e := data.Get("error")
			msg := e.Get("message").String()
			s.fail = &llm.Error{Kind: anthropicKind(e.Get("type").String(), 0, msg), Type: e.Get("type").String(), Message: msg}
			return buf, false
		}
		buf = s.translate(data, buf)
		return buf, s.fail == nil
	}
}

func (s *anthropicSource) Err() error   { return s.fail }
func (s *anthropicSource) Close() error { return s.events.Close() }

// block is the block of an index, or nil.
func (s *anthropicSource) block(i int64) *anthropicBlock {
	if i < 0 || int(i) >= len(s.blocks) {
		return nil
	}
	return s.blocks[i]
}

// anthropicFields are the top-level fields of an event, read in one pass.
type anthropicFields struct {
	typ                                 string
	index                               int64
	delta, contentBlock, message, usage gjson.Result
}

func readAnthropicFields(ev gjson.Result) anthropicFields {
	var f anthropicFields
	ev.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.typ = v.String()
		case "index":
			f.index = v.Int()
		case "delta":
			f.delta = v
		case "content_block":
			f.contentBlock = v
		case "message":
			f.message = v
		case "usage":
			f.usage = v
		}
		return true
	})
	return f
}

// translate appends the Events of one wire event. A malformed sequence
// (a delta for a block that never started) sets s.fail.
func (s *anthropicSource) translate(data gjson.Result, buf []llm.Event) []llm.Event {
	ev := readAnthropicFields(data)
	switch ev.typ {
	case "message_start":
		u := ev.message.Get("usage")
		s.usage = llm.Usage{
			Input:      int(u.Get("input_tokens").Int()),
			Output:     int(u.Get("output_tokens").Int()),
			CacheRead:  int(u.Get("cache_read_input_tokens").Int()),
			CacheWrite: int(u.Get("cache_creation_input_tokens").Int()),
		}
	case "content_block_start":
		index := ev.index
		if index < 0 || index > 1<<16 {
			s.fail = &llm.Error{Kind: llm.ErrMalformed, Message: fmt.Sprintf("content block index %d", index)}
			return buf
		}
		for int(index) >= len(s.blocks) {
			s.blocks = append(s.blocks, nil)
		}
		b := &anthropicBlock{}
		s.blocks[index] = b
		cb := ev.contentBlock
		switch cb.Get("type").Str {
		case "text":
			b.kind, b.part = llm.EventTextDelta, s.parts
			s.parts++
			if t := cb.Get("text").String(); t != "" {
				buf = append(buf, llm.Event{Kind: llm.EventTextDelta, Index: b.part, Text: t})
			}
		case "thinking", "redacted_thinking":
			b.kind, b.part = llm.EventReasoningDelta, s.parts
			s.parts++
			b.signature, b.redacted = cb.Get("signature").String(), cb.Get("data").String()
			if t := cb.Get("thinking").String(); t != "" {
				b.text.WriteString(t)
				buf = append(buf, llm.Event{Kind: llm.EventReasoningDelta, Index: b.part, Text: t})
			}
		case "tool_use":
			b.kind, b.part = llm.EventToolCallDelta, s.parts
			s.parts++
			b.id, b.name = cb.Get("id").String(), cb.Get("name").String()
			buf = append(buf, llm.Event{Kind: llm.EventToolCallStart, Index: b.part, ToolCall: llm.ToolCall{ID: b.id, Name: b.name}})
		}
	case "content_block_delta":
		b := s.block(ev.index)
		if b == nil {
			s.fail = &llm.Error{Kind: llm.ErrMalformed, Message: "a content_block_delta for a block that never started"}
			return buf
		}
		// A delta holds its type and one field named after it.
		var typ, value string
		ev.delta.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "type":
				typ = v.String()
			case "text", "thinking", "signature", "partial_json":
				value = v.String()
			}
			return true
		})
		switch typ {
		case "text_delta":
			if b.kind == llm.EventTextDelta {
				buf = append(buf, llm.Event{Kind: llm.EventTextDelta, Index: b.part, Text: value})
			}
		case "thinking_delta":
			if b.kind == llm.EventReasoningDelta {
				b.text.WriteString(value)
				buf = append(buf, llm.Event{Kind: llm.EventReasoningDelta, Index: b.part, Text: value})
			}
		case "signature_delta":
			b.signature += value
		case "input_json_delta":
			if b.kind == llm.EventToolCallDelta {
				frag := value
				b.args = append(b.args, frag...)
				buf = append(buf, llm.Event{Kind: llm.EventToolCallDelta, Index: b.part, Text: frag,
					ToolCall: llm.ToolCall{ID: b.id, Name: b.name}})
			}
		}
	case "content_block_stop":
		b := s.block(ev.index)
		if b == nil {
			break
		}
		switch b.kind {
		case llm.EventReasoningDelta:
			buf = append(buf, llm.Event{Kind: llm.EventReasoningEnd, Index: b.part, Reasoning: llm.Reasoning{
				Origin: llm.OriginAnthropic, Text: b.text.String(), Signature: b.signature, Redacted: b.redacted,
			}})
		case llm.EventToolCallDelta:
			args, err := llm.ToolArguments(b.name, b.args)
			buf = append(buf, llm.Event{Kind: llm.EventToolCallEnd, Index: b.part, Err: err,
				ToolCall: llm.ToolCall{ID: b.id, Name: b.name, Arguments: args}})
		}
		s.blocks[ev.index] = nil
	case "message_delta":
		if r := ev.delta.Get("stop_reason").String(); r != "" {
			s.stop = r
		}
		// message_delta's counts are cumulative; input counts appear when
		// they changed, such as after server tools ran.
		u := ev.usage
		s.usage.Output = int(u.Get("output_tokens").Int())
		if n := u.Get("input_tokens").Int(); n > 0 {
			s.usage.Input = int(n)
		}
		if n := u.Get("cache_read_input_tokens").Int(); n > 0 {
			s.usage.CacheRead = int(n)
		}
		if n := u.Get("cache_creation_input_tokens").Int(); n > 0 {
			s.usage.CacheWrite = int(n)
		}
		s.usage.Reasoning = int(u.Get("output_tokens_details.thinking_tokens").Int())
	case "message_stop":
		s.stopped = true
	}
	return buf
}
