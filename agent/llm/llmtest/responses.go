package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// streamResponses streams the step as Responses API events:
// response.created, then per output item response.output_item.added, its
// deltas (response.reasoning_summary_text.delta, response.output_text.delta,
// response.function_call_arguments.delta) and response.output_item.done,
// then response.completed (or response.incomplete when Stop says
// "incomplete") with the usage.
func (a answer) streamResponses(s *sse) {
	var b []byte
	send := func(typ string, body func([]byte) []byte) bool {
		b = append(b[:0], `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","sequence_number":`...)
		b = appendInt(b, s.n)
		b = body(b)
		b = append(b, '}')
		return s.event(typ, b)
	}
	respID := fmt.Sprintf("resp_llmtest_%d", a.call.Step)
	if !send("response.created", func(b []byte) []byte {
		return a.appendResponse(append(b, `,"response":`...), respID, "in_progress", nil, nil)
	}) {
		return
	}
	items := a.outputItems()
	index := 0
	for _, it := range items {
		idx := index
		itemJSON, _ := json.Marshal(it.added)
		if !send("response.output_item.added", func(b []byte) []byte {
			b = append(b, `,"output_index":`...)
			b = appendInt(b, idx)
			b = append(b, `,"item":`...)
			return append(b, itemJSON...)
		}) {
			return
		}
		for _, d := range it.deltas {
			if !send(it.deltaType, func(b []byte) []byte {
				b = append(b, `,"item_id":`...)
				b = appendString(b, it.id)
				b = append(b, `,"output_index":`...)
				b = appendInt(b, idx)
				b = append(b, `,"content_index":0,"summary_index":0,"delta":`...)
				return appendString(b, d)
			}) {
				return
			}
		}
		doneJSON, _ := json.Marshal(it.done)
		if !send("response.output_item.done", func(b []byte) []byte {
			b = append(b, `,"output_index":`...)
			b = appendInt(b, idx)
			b = append(b, `,"item":`...)
			return append(b, doneJSON...)
		}) {
			return
		}
		index++
	}
	status, event := "completed", "response.completed"
	if a.step.Stop == "incomplete" {
		status, event = "incomplete", "response.incomplete"
	}
	var output []any
	for _, it := range items {
		output = append(output, it.done)
	}
	u := a.usage()
	send(event, func(b []byte) []byte {
		return a.appendResponse(append(b, `,"response":`...), respID, status, output, &u)
	})
}

type responsesOutput struct {
	id        string
	added     map[string]any
	done      map[string]any
	deltaType string
	deltas    []string
}

func (a answer) outputItems() []responsesOutput {
	var items []responsesOutput
	k := a.call.Step
	if a.step.Reasoning != "" {
		id := fmt.Sprintf("rs_llmtest_%d", k)
		items = append(items, responsesOutput{
			id:        id,
			added:     map[string]any{"type": "reasoning", "id": id, "summary": []any{}},
			deltaType: "response.reasoning_summary_text.delta",
			deltas:    a.reasoningChunks(),
			done: map[string]any{"type": "reasoning", "id": id,
				"summary":           []any{map[string]any{"type": "summary_text", "text": a.step.Reasoning}},
				"encrypted_content": a.signature("enc")},
		})
	}
	if t := a.text(); t != "" {
		id := fmt.Sprintf("msg_llmtest_%d", k)
		items = append(items, responsesOutput{
			id:        id,
			added:     map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}},
			deltaType: "response.output_text.delta",
			deltas:    a.step.textChunks(),
			done: map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": t, "annotations": []any{}}}},
		})
	}
	for i, tc := range a.step.ToolCalls {
		id := fmt.Sprintf("fc_llmtest_%d_%d", k, i)
		callID := a.toolID(i, tc, "call")
		items = append(items, responsesOutput{
			id: id,
			added: map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": tc.Name,
				"arguments": "", "status": "in_progress"},
			deltaType: "response.function_call_arguments.delta",
			deltas:    a.argChunks(tc),
			done: map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": tc.Name,
				"arguments": a.arguments(tc), "status": "completed"},
		})
	}
	return items
}

// appendResponse appends a Response object.
func (a answer) appendResponse(b []byte, id, status string, output []any, u *Usage) []byte {
	r := map[string]any{
		"id": id, "object": "response", "created_at": 0, "status": status, "model": a.call.Model,
		"output": output, "error": nil, "incomplete_details": nil,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
	}
	if output == nil {
		r["output"] = []any{}
	}
	if status == "incomplete" {
		r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	if u != nil {
		r["usage"] = map[string]any{
			"input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Input + u.Output,
			"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
			"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		}
	}
	data, _ := json.Marshal(r)
	return append(b, data...)
}

// response is the step as a non-streamed Response.
func (a answer) response() json.RawMessage {
	var output []any
	for _, it := range a.outputItems() {
		output = append(output, it.done)
	}
	u := a.usage()
	status := "completed"
	if strings.EqualFold(a.step.Stop, "incomplete") {
		status = "incomplete"
	}
	return a.appendResponse(nil, fmt.Sprintf("resp_llmtest_%d", a.call.Step), status, output, &u)
}
