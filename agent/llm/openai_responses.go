package llm

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
)

// responsesWire speaks OpenAI's Responses API through the official SDK.
// Requests are stateless (store=false): the whole conversation is sent
// each time, and reasoning travels between turns as encrypted items.
type responsesWire struct {
	client openai.Client
	list   openai.ModelService
}

func newResponsesWire(t transport) *responsesWire {
	opts := openAIOptions(t)
	return &responsesWire{client: openai.Client{Options: opts}, list: openai.NewModelService(opts...)}
}

func (w *responsesWire) models(ctx context.Context) ([]string, error) {
	return openAIModels(ctx, w.list)
}

func (w *responsesWire) classify(err error, e *Error) bool { return classifyOpenAI(err, e) }

func (w *responsesWire) open(ctx context.Context, req *Request, model ModelInfo) (source, error) {
	params, err := responsesParams(req, model)
	if err != nil {
		return nil, err
	}
	events, err := openAIStream(ctx, &w.client, "responses", params)
	if err != nil {
		return nil, err
	}
	return &responsesSource{events: events, model: model}, nil
}

func responsesParams(req *Request, model ModelInfo) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{
		Model: req.Model,
		Store: param.NewOpt(false),
	}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(req.MaxOutputTokens))
	}
	reasoning := model.Reasoning || req.Reasoning.enabled()
	if reasoning {
		p.Reasoning = shared.ReasoningParam{
			Effort:  shared.ReasoningEffort(req.Reasoning.Effort),
			Summary: shared.ReasoningSummaryAuto,
		}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	} else if req.Temperature != nil {
		// Reasoning models refuse a temperature.
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.Cache.Key != "" && !req.Cache.Disabled {
		p.PromptCacheKey = param.NewOpt(req.Cache.Key)
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.Schema)
		if err != nil {
			return p, &Error{Kind: ErrBadRequest, Message: fmt.Sprintf("tool %q: schema: %v", t.Name, err)}
		}
		fn := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: fn})
	}
	var items responses.ResponseInputParam
	for _, m := range req.Messages {
		items = appendResponsesItems(items, m)
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return p, nil
}

func appendResponsesItems(out responses.ResponseInputParam, m Message) responses.ResponseInputParam {
	switch m.Role {
	case RoleUser:
		var content responses.ResponseInputMessageContentListParam
		for _, part := range m.Parts {
			switch p := part.(type) {
			case Text:
				content = append(content, responses.ResponseInputContentUnionParam{
					OfInputText: &responses.ResponseInputTextParam{Text: p.Text},
				})
			case Image:
				content = append(content, responses.ResponseInputContentUnionParam{
					OfInputImage: &responses.ResponseInputImageParam{
						ImageURL: param.NewOpt(dataURL(p)), Detail: responses.ResponseInputImageDetailAuto,
					},
				})
			}
		}
		if len(content) > 0 {
			out = append(out, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
				Role:    responses.EasyInputMessageRoleUser,
				Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: content},
			}})
		}
	case RoleAssistant:
		var text strings.Builder
		flush := func() {
			if text.Len() == 0 {
				return
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
				Role:    responses.EasyInputMessageRoleAssistant,
				Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(text.String())},
			}})
			text.Reset()
		}
		for _, part := range m.Parts {
			switch p := part.(type) {
			case Text:
				text.WriteString(p.Text)
			case Reasoning:
				if p.Origin != originResponses || p.ItemID == "" {
					continue
				}
				flush()
				item := &responses.ResponseReasoningItemParam{ID: p.ItemID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
				if p.Text != "" {
					item.Summary = append(item.Summary, responses.ResponseReasoningItemSummaryParam{Text: p.Text})
				}
				if p.Encrypted != "" {
					item.EncryptedContent = param.NewOpt(p.Encrypted)
				}
				out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: item})
			case ToolCall:
				flush()
				args := string(p.Arguments)
				if args == "" {
					args = "{}"
				}
				out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
					CallID: p.ID, Name: p.Name, Arguments: args,
				}})
			}
		}
		flush()
	case RoleTool:
		for _, part := range m.Parts {
			r, ok := part.(ToolResult)
			if !ok {
				continue
			}
			text := r.Text
			if r.IsError {
				text = "Error: " + text
			}
			item := &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(r.CallID)}
			if len(r.Images) == 0 {
				item.Output.OfString = param.NewOpt(text)
			} else {
				list := responses.ResponseFunctionCallOutputItemListParam{{
					OfInputText: &responses.ResponseInputTextContentParam{Text: text},
				}}
				for _, img := range r.Images {
					list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{
						OfInputImage: &responses.ResponseInputImageContentParam{
							ImageURL: param.NewOpt(dataURL(img)), Detail: responses.ResponseInputImageContentDetailAuto,
						},
					})
				}
				item.Output.OfResponseFunctionCallOutputItemArray = list
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: item})
		}
	}
	return out
}

// responsesItem is the state of one output item of the answer.
type responsesItem struct {
	kind     EventKind // EventTextDelta, EventReasoningDelta, EventToolCallDelta; 0 for items darman ignores
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
	events ssestream.Decoder
	model  ModelInfo
	items  map[int64]*responsesItem
	parts  int
	calls  int
	usage  Usage
	finish FinishReason
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

func (s *responsesSource) next(buf []Event) ([]Event, bool) {
	for {
		if !s.events.Next() {
			buf, s.fail = ending(buf, s.events.Err(), s.done, "no response.completed event", s.usage, s.model, s.finish)
			return buf, false
		}
		ev := s.events.Event()
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			continue
		}
		data, ok, bad := eventJSON(ev.Type, ev.Data)
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

func (s *responsesSource) translate(data gjson.Result, buf []Event) []Event {
	ev := readResponsesFields(data)
	switch ev.typ {
	case "response.output_item.added":
		item := ev.item
		it := &responsesItem{id: item.Get("id").String(), part: s.parts}
		switch item.Get("type").Str {
		case "message":
			it.kind = EventTextDelta
		case "reasoning":
			it.kind = EventReasoningDelta
		case "function_call":
			it.kind, it.callID, it.name = EventToolCallDelta, item.Get("call_id").String(), item.Get("name").String()
			s.calls++
			buf = append(buf, Event{Kind: EventToolCallStart, Index: it.part, ToolCall: ToolCall{ID: it.callID, Name: it.name}})
		default:
			return buf
		}
		s.parts++
		if s.items == nil {
			s.items = map[int64]*responsesItem{}
		}
		s.items[ev.outputIndex] = it
	case "response.output_text.delta", "response.refusal.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == EventTextDelta {
			if d := ev.delta; d != "" {
				buf = append(buf, Event{Kind: EventTextDelta, Index: it.part, Text: d})
			}
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == EventReasoningDelta {
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
			buf = append(buf, Event{Kind: EventReasoningDelta, Index: it.part, Text: text})
		}
	case "response.function_call_arguments.delta":
		if it := s.item(ev.outputIndex); it != nil && it.kind == EventToolCallDelta {
			if d := ev.delta; d != "" {
				it.args = append(it.args, d...)
				buf = append(buf, Event{Kind: EventToolCallDelta, Index: it.part, Text: d,
					ToolCall: ToolCall{ID: it.callID, Name: it.name}})
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
		case EventReasoningDelta:
			text := it.text.String()
			if text == "" {
				var parts []string
				item.Get("summary").ForEach(func(_, sm gjson.Result) bool {
					parts = append(parts, sm.Get("text").String())
					return true
				})
				text = strings.Join(parts, "\n\n")
			}
			buf = append(buf, Event{Kind: EventReasoningEnd, Index: it.part, Reasoning: Reasoning{
				Origin: originResponses, Text: text,
				ItemID: item.Get("id").String(), Encrypted: item.Get("encrypted_content").String(),
			}})
		case EventToolCallDelta:
			raw := it.args
			if len(raw) == 0 {
				raw = []byte(textOf(item.Get("arguments")))
			}
			args, err := toolArguments(it.name, raw)
			buf = append(buf, Event{Kind: EventToolCallEnd, Index: it.part, Err: err,
				ToolCall: ToolCall{ID: it.callID, Name: it.name, Arguments: args}})
		}
	case "response.completed", "response.incomplete":
		s.done = true
		resp := ev.response
		u := resp.Get("usage")
		cached := int(u.Get("input_tokens_details.cached_tokens").Int())
		written := int(u.Get("input_tokens_details.cache_write_tokens").Int())
		s.usage = Usage{
			Input:      max(int(u.Get("input_tokens").Int())-cached-written, 0),
			Output:     int(u.Get("output_tokens").Int()),
			CacheRead:  cached,
			CacheWrite: written,
			Reasoning:  int(u.Get("output_tokens_details.reasoning_tokens").Int()),
		}
		reason := resp.Get("incomplete_details.reason").String()
		switch {
		case ev.typ == "response.completed" && s.calls > 0:
			s.finish = FinishToolUse
		case ev.typ == "response.completed":
			s.finish = FinishStop
		case reason == "max_output_tokens":
			s.finish = FinishLength
		case reason == "content_filter":
			s.finish = FinishRefusal
		default:
			s.finish = FinishOther
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
func responsesFailure(code, msg string) *Error {
	kind := openAIKind(0, code, "", msg)
	if kind == ErrOther {
		kind = ErrServer
	}
	return &Error{Kind: kind, Type: code, Message: msg}
}

func (s *responsesSource) err() error   { return s.fail }
func (s *responsesSource) close() error { return s.events.Close() }
