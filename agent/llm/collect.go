package llm

import (
	"sort"
	"strings"
)

// Response is a streamed answer gathered whole.
type Response struct {
	// Message is the assistant message, its parts in the order the model
	// produced them, ready to be appended to the conversation.
	Message Message
	Usage   Usage
	Cost    float64
	Finish  FinishReason
	// Retries are the retries announced before the answer.
	Retries []Retry
	// InvalidCalls holds, by call ID, the tool calls whose arguments were
	// not a JSON object; they are in Message all the same.
	InvalidCalls map[string]error
}

// ToolCalls are the message's tool calls, in order.
func (r *Response) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, p := range r.Message.Parts {
		if c, ok := p.(ToolCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// Text is the message's text parts joined.
func (r *Response) Text() string {
	var b strings.Builder
	for _, p := range r.Message.Parts {
		if t, ok := p.(Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Collect reads a stream to its end and gathers the answer. When the
// stream fails, it returns what arrived before the failure (text and
// reasoning so far, tool calls that were complete) with the error, so
// that a partial answer can be kept.
func Collect(s *Stream) (*Response, error) {
	defer s.Close()
	r := &Response{}
	parts := map[int]*collected{}
	part := func(i int) *collected {
		p := parts[i]
		if p == nil {
			p = &collected{}
			parts[i] = p
		}
		return p
	}
	for s.Next() {
		e := s.Event()
		switch e.Kind {
		case EventTextDelta:
			p := part(e.Index)
			p.kind = EventTextDelta
			p.text.WriteString(e.Text)
		case EventReasoningDelta:
			p := part(e.Index)
			p.kind = EventReasoningDelta
			p.text.WriteString(e.Text)
		case EventReasoningEnd:
			p := part(e.Index)
			p.kind = EventReasoningEnd
			p.reasoning = e.Reasoning
		case EventToolCallEnd:
			p := part(e.Index)
			p.kind = EventToolCallEnd
			p.call = e.ToolCall
			if e.Err != nil {
				if r.InvalidCalls == nil {
					r.InvalidCalls = map[string]error{}
				}
				r.InvalidCalls[e.ToolCall.ID] = e.Err
			}
		case EventUsage:
			r.Usage, r.Cost = e.Usage, e.Cost
		case EventFinish:
			r.Finish = e.Finish
		case EventRetry:
			r.Retries = append(r.Retries, e.Retry)
		}
	}
	indexes := make([]int, 0, len(parts))
	for i := range parts {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	r.Message.Role = RoleAssistant
	for _, i := range indexes {
		if p := parts[i].part(); p != nil {
			r.Message.Parts = append(r.Message.Parts, p)
		}
	}
	return r, s.Err()
}

type collected struct {
	kind      EventKind
	text      strings.Builder
	reasoning Reasoning
	call      ToolCall
}

// part is the finished part; nil for a tool call that never ended.
func (c *collected) part() Part {
	switch c.kind {
	case EventTextDelta:
		return Text{Text: c.text.String()}
	case EventReasoningDelta:
		// Cut before its end: the text is kept, with nothing to send back.
		return Reasoning{Text: c.text.String()}
	case EventReasoningEnd:
		return c.reasoning
	case EventToolCallEnd:
		return c.call
	}
	return nil
}
