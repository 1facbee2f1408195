package llmtest

// streamChat streams the step as Chat Completions chunks: the role, the
// reasoning_content and content deltas, tool_calls[i] with their argument
// fragments, the finish_reason, the usage chunk when the request set
// stream_options.include_usage, and [DONE].
func (a answer) streamChat(s *sse) {
	var prefix []byte
	prefix = append(prefix, `{"id":"chatcmpl-llmtest-`...)
	prefix = appendInt(prefix, a.call.Step)
	prefix = append(prefix, `","object":"chat.completion.chunk","created":0,"model":`...)
	prefix = appendString(prefix, a.call.Model)
	prefix = append(prefix, `,"choices":[`...)

	var b []byte
	delta := func(body func([]byte) []byte) bool {
		b = append(b[:0], prefix...)
		b = append(b, `{"index":0,"delta":{`...)
		b = body(b)
		b = append(b, `},"finish_reason":null}]}`...)
		return s.event("", b)
	}
	if !delta(func(b []byte) []byte { return append(b, `"role":"assistant","content":""`...) }) {
		return
	}
	for _, r := range a.reasoningChunks() {
		if !delta(func(b []byte) []byte { return appendString(append(b, `"reasoning_content":`...), r) }) {
			return
		}
	}
	for _, t := range a.step.textChunks() {
		if !delta(func(b []byte) []byte { return appendString(append(b, `"content":`...), t) }) {
			return
		}
	}

	start := func(i int) bool {
		tc := a.step.ToolCalls[i]
		return delta(func(b []byte) []byte {
			b = append(b, `"tool_calls":[{"index":`...)
			b = appendInt(b, i)
			b = append(b, `,"id":`...)
			b = appendString(b, a.toolID(i, tc, "call"))
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendString(b, tc.Name)
			return append(b, `,"arguments":""}}]`...)
		})
	}
	fragment := func(i int, text string) bool {
		return delta(func(b []byte) []byte {
			b = append(b, `"tool_calls":[{"index":`...)
			b = appendInt(b, i)
			b = append(b, `,"function":{"arguments":`...)
			b = appendString(b, text)
			return append(b, `}}]`...)
		})
	}
	chunks := make([][]string, len(a.step.ToolCalls))
	longest := 0
	for i, tc := range a.step.ToolCalls {
		chunks[i] = a.argChunks(tc)
		longest = max(longest, len(chunks[i]))
	}
	if a.step.Interleave {
		// Every call starts, then fragment j of each call before
		// fragment j+1 of any.
		for i := range chunks {
			if !start(i) {
				return
			}
		}
		for j := range longest {
			for i := range chunks {
				if j < len(chunks[i]) && !fragment(i, chunks[i][j]) {
					return
				}
			}
		}
	} else {
		for i := range chunks {
			if !start(i) {
				return
			}
			for _, c := range chunks[i] {
				if !fragment(i, c) {
					return
				}
			}
		}
	}

	b = append(b[:0], prefix...)
	b = append(b, `{"index":0,"delta":{},"finish_reason":`...)
	b = appendString(b, a.stopReason(APIChat))
	b = append(b, `}]}`...)
	if !s.event("", b) {
		return
	}
	if a.conv.includeUsage {
		u := a.usage()
		b = append(b[:0], prefix[:len(prefix)-len(`[`)]...)
		b = append(b, `[],"usage":{"prompt_tokens":`...)
		b = appendInt(b, u.Input)
		b = append(b, `,"completion_tokens":`...)
		b = appendInt(b, u.Output)
		b = append(b, `,"total_tokens":`...)
		b = appendInt(b, u.Input+u.Output)
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = appendInt(b, u.CacheRead)
		b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, u.Reasoning)
		b = append(b, `}}}`...)
		if !s.event("", b) {
			return
		}
	}
	s.event("", []byte("[DONE]"))
}

// chatCompletion is the step as a non-streamed chat completion.
func (a answer) chatCompletion() map[string]any {
	u := a.usage()
	msg := map[string]any{"role": "assistant", "content": nil}
	if t := a.text(); t != "" {
		msg["content"] = t
	}
	if a.step.Reasoning != "" {
		msg["reasoning_content"] = a.step.Reasoning
	}
	var calls []map[string]any
	for i, tc := range a.step.ToolCalls {
		calls = append(calls, map[string]any{
			"id": a.toolID(i, tc, "call"), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": a.arguments(tc)},
		})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 0, "model": a.call.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.stopReason(APIChat)}},
		"usage": map[string]any{
			"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
			"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead},
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		},
	}
}
