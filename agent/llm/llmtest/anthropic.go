package llmtest

import "encoding/json"

// streamAnthropic streams the step as Anthropic Messages events:
// message_start, ping, a thinking, a text and a tool_use content block per
// call (content_block_start, content_block_delta..., content_block_stop),
// message_delta and message_stop.
func (a answer) streamAnthropic(s *sse) {
	u := a.usage()
	var b []byte
	b = append(b, `{"type":"message_start","message":{"id":"msg_llmtest_`...)
	b = appendInt(b, a.call.Step)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = appendString(b, a.call.Model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendInt(b, u.Input)
	b = append(b, `,"output_tokens":1,"cache_read_input_tokens":`...)
	b = appendInt(b, u.CacheRead)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = appendInt(b, u.CacheWrite)
	b = append(b, `}}}`...)
	if !s.event("message_start", b) || !s.event("ping", []byte(`{"type":"ping"}`)) {
		return
	}
	index := 0
	block := func(start string, deltas []string, deltaType, field string, extra []byte) bool {
		b = append(b[:0], `{"type":"content_block_start","index":`...)
		b = appendInt(b, index)
		b = append(b, `,"content_block":`...)
		b = append(b, start...)
		b = append(b, '}')
		if !s.event("content_block_start", b) {
			return false
		}
		for _, d := range deltas {
			b = append(b[:0], `{"type":"content_block_delta","index":`...)
			b = appendInt(b, index)
			b = append(b, `,"delta":{"type":"`...)
			b = append(b, deltaType...)
			b = append(b, `","`...)
			b = append(b, field...)
			b = append(b, `":`...)
			b = appendString(b, d)
			b = append(b, `}}`...)
			if !s.event("content_block_delta", b) {
				return false
			}
		}
		if extra != nil && !s.event("content_block_delta", extra) {
			return false
		}
		b = append(b[:0], `{"type":"content_block_stop","index":`...)
		b = appendInt(b, index)
		b = append(b, '}')
		index++
		return s.event("content_block_stop", b)
	}

	if a.step.Reasoning != "" {
		var sig []byte
		sig = append(sig, `{"type":"content_block_delta","index":`...)
		sig = appendInt(sig, index)
		sig = append(sig, `,"delta":{"type":"signature_delta","signature":`...)
		sig = appendString(sig, a.signature("sig"))
		sig = append(sig, `}}`...)
		if !block(`{"type":"thinking","thinking":"","signature":""}`, a.reasoningChunks(), "thinking_delta", "thinking", sig) {
			return
		}
	}
	if chunks := a.step.textChunks(); len(chunks) > 0 {
		if !block(`{"type":"text","text":""}`, chunks, "text_delta", "text", nil) {
			return
		}
	}
	for i, tc := range a.step.ToolCalls {
		var start []byte
		start = append(start, `{"type":"tool_use","id":`...)
		start = appendString(start, a.toolID(i, tc, "toolu"))
		start = append(start, `,"name":`...)
		start = appendString(start, tc.Name)
		start = append(start, `,"input":{}}`...)
		if !block(string(start), a.argChunks(tc), "input_json_delta", "partial_json", nil) {
			return
		}
	}
	b = append(b[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	b = appendString(b, a.stopReason(APIAnthropic))
	b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
	b = appendInt(b, u.Output)
	b = append(b, `,"output_tokens_details":{"thinking_tokens":`...)
	b = appendInt(b, u.Reasoning)
	b = append(b, `}}}`...)
	if !s.event("message_delta", b) {
		return
	}
	s.event("message_stop", []byte(`{"type":"message_stop"}`))
}

// anthropicMessage is the step as a non-streamed Message.
func (a answer) anthropicMessage() map[string]any {
	u := a.usage()
	var content []map[string]any
	if a.step.Reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": a.step.Reasoning, "signature": a.signature("sig")})
	}
	if t := a.text(); t != "" {
		content = append(content, map[string]any{"type": "text", "text": t})
	}
	for i, tc := range a.step.ToolCalls {
		content = append(content, map[string]any{
			"type": "tool_use", "id": a.toolID(i, tc, "toolu"), "name": tc.Name,
			"input": json.RawMessage(a.arguments(tc)),
		})
	}
	return map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": a.call.Model,
		"content": content, "stop_reason": a.stopReason(APIAnthropic), "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite,
		},
	}
}
