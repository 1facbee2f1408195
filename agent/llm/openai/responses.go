package openai

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
)

// responsesWire speaks OpenAI's Responses API. Requests are stateless
// (store=false): the whole conversation is sent each time, and reasoning
// travels between turns as encrypted items.
type responsesWire struct {
	client wire.APIClient
}

// NewResponses is the wire of OpenAI's Responses API at t's base URL.
func NewResponses(t wire.Transport) llm.Wire { return newResponsesWire(t) }

func newResponsesWire(t wire.Transport) *responsesWire {
	return &responsesWire{client: wire.APIClient{Transport: t}}
}

func (w *responsesWire) Models(ctx context.Context) ([]string, error) { return w.client.Models(ctx) }

func (w *responsesWire) Classify(err error, e *llm.Error) bool { return classifyOpenAI(err, e) }

func (w *responsesWire) Open(ctx context.Context, req *llm.Request, model llm.ModelInfo) (llm.Source, error) {
	params, err := responsesParams(req, model)
	if err != nil {
		return nil, err
	}
	events, err := w.client.Stream(ctx, "responses", params)
	if err != nil {
		return nil, err
	}
	return &responsesSource{events: events, model: model}, nil
}

// responsesRequest is a Responses API request, with the fields darman
// sends.
type responsesRequest struct {
	Model           string              `json:"model"`
	Input           []any               `json:"input"`
	Instructions    string              `json:"instructions,omitempty"`
	MaxOutputTokens int                 `json:"max_output_tokens,omitempty"`
	Reasoning       *responsesReasoning `json:"reasoning,omitempty"`
	Include         []string            `json:"include,omitempty"`
	Temperature     *float64            `json:"temperature,omitempty"`
	PromptCacheKey  string              `json:"prompt_cache_key,omitempty"`
	Store           bool                `json:"store"`
	Stream          bool                `json:"stream"`
	Tools           []responsesTool     `json:"tools,omitempty"`
}

type responsesReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary"`
}

type responsesTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

// responsesMessage is an input message; Content is a string or a list of
// responsesText and responsesImage.
type responsesMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type responsesText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type responsesImage struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

type responsesReasoningItem struct {
	Type             string             `json:"type"`
	ID               string             `json:"id"`
	Summary          []responsesSummary `json:"summary"`
	EncryptedContent string             `json:"encrypted_content,omitempty"`
}

type responsesSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type responsesFunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// responsesCallOutput's Output is a string or a list of responsesText and
// responsesImage.
type responsesCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

func responsesParams(req *llm.Request, model llm.ModelInfo) (responsesRequest, error) {
	p := responsesRequest{Model: req.Model, Instructions: req.System, Stream: true}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = req.MaxOutputTokens
	}
	reasoning := model.Reasoning || req.Reasoning.Enabled()
	if reasoning {
		p.Reasoning = &responsesReasoning{Effort: req.Reasoning.Effort, Summary: "auto"}
		p.Include = []string{"reasoning.encrypted_content"}
	} else if req.Temperature != nil {
		// Reasoning models refuse a temperature.
		p.Temperature = req.Temperature
	}
	if req.Cache.Key != "" && !req.Cache.Disabled {
		p.PromptCacheKey = req.Cache.Key
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.Schema)
		if err != nil {
			return p, &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("tool %q: schema: %v", t.Name, err)}
		}
		p.Tools = append(p.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	p.Input = []any{}
	for _, m := range req.Messages {
		p.Input = appendResponsesItems(p.Input, m)
	}
	return p, nil
}

func responsesImagePart(img llm.Image) responsesImage {
	return responsesImage{Type: "input_image", ImageURL: dataURL(img), Detail: "auto"}
}

func appendResponsesItems(out []any, m llm.Message) []any {
	switch m.Role {
	case llm.RoleUser:
		var content []any
		for _, part := range m.Parts {
			switch p := part.(type) {
			case llm.Text:
				content = append(content, responsesText{Type: "input_text", Text: p.Text})
			case llm.Image:
				content = append(content, responsesImagePart(p))
			}
		}
		if len(content) > 0 {
			out = append(out, responsesMessage{Role: "user", Content: content})
		}
	case llm.RoleAssistant:
		var text strings.Builder
		flush := func() {
			if text.Len() == 0 {
				return
			}
			out = append(out, responsesMessage{Role: "assistant", Content: text.String()})
			text.Reset()
		}
		for _, part := range m.Parts {
			switch p := part.(type) {
			case llm.Text:
				text.WriteString(p.Text)
			case llm.Reasoning:
				if p.Origin != llm.OriginResponses || p.ItemID == "" {
					continue
				}
				flush()
				item := responsesReasoningItem{Type: "reasoning", ID: p.ItemID, Summary: []responsesSummary{}, EncryptedContent: p.Encrypted}
				if p.Text != "" {
					item.Summary = append(item.Summary, responsesSummary{Type: "summary_text", Text: p.Text})
				}
				out = append(out, item)
			case llm.ToolCall:
				flush()
				args := string(p.Arguments)
				if args == "" {
					args = "{}"
				}
				out = append(out, responsesFunctionCall{Type: "function_call", CallID: p.ID, Name: p.Name, Arguments: args})
			}
		}
		flush()
	case llm.RoleTool:
		for _, part := range m.Parts {
			r, ok := part.(llm.ToolResult)
			if !ok {
				continue
			}
			text := r.Text
			if r.IsError {
				text = "Error: " + text
			}
			item := responsesCallOutput{Type: "function_call_output", CallID: r.CallID, Output: text}
			if len(r.Images) > 0 {
				list := []any{responsesText{Type: "input_text", Text: text}}
				for _, img := range r.Images {
					list = append(list, responsesImagePart(img))
				}
				item.Output = list
			}
			out = append(out, item)
		}
	}
	return out
}

// responsesItem is the state of one output item of the answer.
type responsesItem struct {
	kind     llm.EventKind // EventTextDelta, EventReasoningDelta, EventToolCallDelta; 0 for items darman ignores
	part     int
	id       string
	callID   string
	name     string
	text     strings.Builder
	args     []byte
	summary  int64
	ended    bool
	hasDelta bool
}

// responsesSource translates a Responses stream: output items (reasoning,
// message, function_call) announced by response.output_item.added, their
// deltas, response.output_item.done, then response.completed with the
// usage; or response.failed / error.
type responsesSource struct {
	events *wire.SSEDecoder
	model  llm.ModelInfo
	items  map[int64]*responsesItem
	parts  int
	calls  int
	usage  llm.Usage
	finish llm.FinishReason
	done   bool
	fail   error
}

func (s *responsesSource) item(outputIndex int64) *responsesItem {
	if s.items == nil {
		return nil
	}
	return s.items[outputIndex]
}

// responsesFields are the top-level fields of an event, read in one pass.
type responsesFields struct {
	typ, delta, code, message string
	outputIndex, summaryIndex int64
	item, response            gjson.Result
}

func readResponsesFields(ev gjson.Result) responsesFields {
	var f responsesFields
	ev.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.typ = v.String()
		case "delta":
			f.delta = v.String()
		case "code":
			f.code = v.String()
		case "message":
			f.message = v.String()
		case "output_index":
			f.outputIndex = v.Int()
		case "summary_index":
			f.summaryIndex = v.Int()
		case "item":
			f.item = v
		case "response":
			f.response = v
		}
		return true
	})
	return f
}

func (s *responsesSource) Next(buf []llm.Event) ([]llm.Event, bool) {
	for {
		if !s.events.Next() {
			buf, s.fail = wire.Ending(buf, s.events.Err(), s.done, "no response.completed event", s.usage, s.model, s.finish)
			return buf, false
		}
		ev := s.events.Event()
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
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
		buf = s.translate(data, buf)
		return buf, s.fail == nil
	}
}

func (s *responsesSource) translate(data gjson.Result, buf []llm.Event) []llm.Event {
	ev := readResponsesFields(data)
	switch ev.typ {
	case "response.output_item.added":
		item := ev.item
		it := &responsesItem{id: item.Get("id").String(), part: s.parts}
		switch item.Get("type").Str {
		case "message":
			it.kind = llm.EventTextDelta
		case "reasoning":
			it.kind = llm.EventReasoningDelta
		case "function_call":
			it.kind, it.callID, it.name = llm.EventToolCallDelta, item.Get("call_id").String(), item.Get("name").String()
			s.calls++
			buf = append(buf, llm.Event{Kind: llm.EventToolCallStart, Index: it.part, ToolCall: llm.ToolCall{ID: it.callID, Name: it.name}})
		default:
			return buf
		}
		s.parts++
		if s.items == nil {
			s.items = map[int64]*responsesItem{}
		}
		s.items[ev.outputIndex] = it
	case "response.output_text.delta", "response.refusal.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == llm.EventTextDelta {
			if d := ev.delta; d != "" {
				buf = append(buf, llm.Event{Kind: llm.EventTextDelta, Index: it.part, Text: d})
			}
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == llm.EventReasoningDelta {
			text := ev.delta
			if text == "" {
				break
			}
			summary := ev.summaryIndex
			if it.hasDelta && summary != it.summary {
				text = "\n\n" + text
			}
			it.summary, it.hasDelta = summary, true
			it.text.WriteString(text)
			buf = append(buf, llm.Event{Kind: llm.EventReasoningDelta, Index: it.part, Text: text})
		}
	case "response.function_call_arguments.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == llm.EventToolCallDelta {
			if d := ev.delta; d != "" {
				it.args = append(it.args, d...)
				buf = append(buf, llm.Event{Kind: llm.EventToolCallDelta, Index: it.part, Text: d,
					ToolCall: llm.ToolCall{ID: it.callID, Name: it.name}})
			}
		}
	case "response.output_item.done":
		it := s.item(ev.outputIndex)
		if it == nil || it.ended {
			break
		}
		it.ended = true
		item := ev.item
		switch it.kind {
		case llm.EventReasoningDelta:
			text := it.text.String()
			if text == "" {
				var parts []string
				item.Get("summary").ForEach(func(_, sm gjson.Result) bool {
					parts = append(parts, sm.Get("text").String())
					return true
				})
				text = strings.Join(parts, "\n\n")
			}
			buf = append(buf, llm.Event{Kind: llm.EventReasoningEnd, Index: it.part, Reasoning: llm.Reasoning{
				Origin: llm.OriginResponses, Text: text,
				ItemID: item.Get("id").String(), Encrypted: item.Get("encrypted_content").String(),
			}})
		case llm.EventToolCallDelta:
			raw := it.args
			if len(raw) == 0 {
				raw = []byte(wire.TextOf(item.Get("arguments")))
			}
			args, err := llm.ToolArguments(it.name, raw)
			buf = append(buf, llm.Event{Kind: llm.EventToolCallEnd, Index: it.part, Err: err,
				ToolCall: llm.ToolCall{ID: it.callID, Name: it.name, Arguments: args}})
		}
	case "response.completed", "response.incomplete":
		s.done = true
		resp := ev.response
		u := resp.Get("usage")
		cached := int(u.Get("input_tokens_details.cached_tokens").Int())
		written := int(u.Get("input_tokens_details.cache_write_tokens").Int())
		s.usage = llm.Usage{
			Input:      max(int(u.Get("input_tokens").Int())-cached-written, 0),
			Output:     int(u.Get("output_tokens").Int()),
			CacheRead:  cached,
			CacheWrite: written,
			Reasoning:  int(u.Get("output_tokens_details.reasoning_tokens").Int()),
		}
		reason := resp.Get("incomplete_details.reason").String()
		switch {
		case ev.typ == "response.completed" && s.calls > 0:
			s.finish = llm.FinishToolUse
		case ev.typ == "response.completed":
			s.finish = llm.FinishStop
		case reason == "max_output_tokens":
			s.finish = llm.FinishLength
		case reason == "content_filter":
			s.finish = llm.FinishRefusal
		default:
			s.finish = llm.FinishOther
		}
	case "response.failed":
		e := ev.response.Get("error")
		s.fail = responsesFailure(e.Get("code").String(), e.Get("message").String())
	case "error":
		s.fail = responsesFailure(ev.code, ev.message)
	}
	return buf
}

// responsesFailure is the error of a response.failed or error event.
func responsesFailure(code, msg string) *llm.Error {
	kind := openAIKind(0, code, "", msg)
	if kind == llm.ErrOther {
		kind = llm.ErrServer
	}
	return &llm.Error{Kind: kind, Type: code, Message: msg}
}

func (s *responsesSource) Err() error   { return s.fail }
func (s *responsesSource) Close() error { return s.events.Close() }
