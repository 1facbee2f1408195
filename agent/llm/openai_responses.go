package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// responsesWire speaks OpenAI's Responses API through the official SDK.
// Requests are stateless (store=false): the whole conversation is sent
// each time, and reasoning travels between turns as encrypted items.
type responsesWire struct {
	responses responses.ResponseService
	list      openai.ModelService
}

func newResponsesWire(t transport) *responsesWire {
	opts := openAIOptions(t)
	return &responsesWire{responses: responses.NewResponseService(opts...), list: openai.NewModelService(opts...)}
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
	stream := w.responses.NewStreaming(ctx, params)
	return &responsesSource{stream: stream, model: model}, nil
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
				if p.Origin != "openai-responses" || p.ItemID == "" {
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

type responsesSource struct {
	stream *ssestream.Stream[responses.ResponseStreamEventUnion]
	model  ModelInfo
	items  map[int64]*responsesItem
	parts  int
	calls  int
	usage  Usage
	finish FinishReason
	done   bool
	fail   error
}

func (s *responsesSource) item(i int64) *responsesItem {
	if s.items == nil {
		return nil
	}
	return s.items[i]
}

func (s *responsesSource) next(buf []Event) ([]Event, bool) {
	if !s.stream.Next() {
		s.fail = s.stream.Err()
		if s.fail == nil && !s.done {
			s.fail = &Error{Kind: ErrStreamCut, Message: "no response.completed event"}
		}
		if s.fail == nil {
			buf = append(buf,
				Event{Kind: EventUsage, Usage: s.usage, Cost: s.model.Cost.Of(s.usage)},
				Event{Kind: EventFinish, Finish: s.finish})
		}
		return buf, false
	}
	ev := s.stream.Current()
	switch ev.Type {
	case "response.output_item.added":
		it := &responsesItem{id: ev.Item.ID, part: s.parts}
		switch ev.Item.Type {
		case "message":
			it.kind = EventTextDelta
		case "reasoning":
			it.kind = EventReasoningDelta
		case "function_call":
			it.kind, it.callID, it.name = EventToolCallDelta, ev.Item.CallID, ev.Item.Name
			s.calls++
			buf = append(buf, Event{Kind: EventToolCallStart, Index: it.part, ToolCall: ToolCall{ID: it.callID, Name: it.name}})
		default:
			return buf, true
		}
		s.parts++
		if s.items == nil {
			s.items = map[int64]*responsesItem{}
		}
		s.items[ev.OutputIndex] = it
	case "response.output_text.delta", "response.refusal.delta":
		if it := s.item(ev.OutputIndex); it != nil && it.kind == EventTextDelta && ev.Delta != "" {
			buf = append(buf, Event{Kind: EventTextDelta, Index: it.part, Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := s.item(ev.OutputIndex); it != nil && it.kind == EventReasoningDelta && ev.Delta != "" {
			text := ev.Delta
			if it.hasDelta && ev.SummaryIndex != it.summary {
				text = "\n\n" + text
			}
			it.summary, it.hasDelta = ev.SummaryIndex, true
			it.text.WriteString(text)
			buf = append(buf, Event{Kind: EventReasoningDelta, Index: it.part, Text: text})
		}
	case "response.function_call_arguments.delta":
		if it := s.item(ev.OutputIndex); it != nil && it.kind == EventToolCallDelta && ev.Delta != "" {
			it.args = append(it.args, ev.Delta...)
			buf = append(buf, Event{Kind: EventToolCallDelta, Index: it.part, Text: ev.Delta,
				ToolCall: ToolCall{ID: it.callID, Name: it.name}})
		}
	case "response.output_item.done":
		it := s.item(ev.OutputIndex)
		if it == nil || it.ended {
			break
		}
		it.ended = true
		switch it.kind {
		case EventReasoningDelta:
			text := it.text.String()
			if text == "" {
				var parts []string
				for _, sm := range ev.Item.Summary {
					parts = append(parts, sm.Text)
				}
				text = strings.Join(parts, "\n\n")
			}
			buf = append(buf, Event{Kind: EventReasoningEnd, Index: it.part, Reasoning: Reasoning{
				Origin: "openai-responses", Text: text, ItemID: ev.Item.ID, Encrypted: ev.Item.EncryptedContent,
			}})
		case EventToolCallDelta:
			raw := it.args
			if len(raw) == 0 {
				raw = []byte(ev.Item.Arguments.OfString)
			}
			args, err := toolArguments(it.name, raw)
			buf = append(buf, Event{Kind: EventToolCallEnd, Index: it.part, Err: err,
				ToolCall: ToolCall{ID: it.callID, Name: it.name, Arguments: args}})
		}
	case "response.completed", "response.incomplete":
		s.done = true
		u := ev.Response.Usage
		cached := int(u.InputTokensDetails.CachedTokens)
		written := int(u.InputTokensDetails.CacheWriteTokens)
		s.usage = Usage{
			Input:      max(int(u.InputTokens)-cached-written, 0),
			Output:     int(u.OutputTokens),
			CacheRead:  cached,
			CacheWrite: written,
			Reasoning:  int(u.OutputTokensDetails.ReasoningTokens),
		}
		switch {
		case ev.Type == "response.completed" && s.calls > 0:
			s.finish = FinishToolUse
		case ev.Type == "response.completed":
			s.finish = FinishStop
		case ev.Response.IncompleteDetails.Reason == "max_output_tokens":
			s.finish = FinishLength
		case ev.Response.IncompleteDetails.Reason == "content_filter":
			s.finish = FinishRefusal
		default:
			s.finish = FinishOther
		}
	case "response.failed":
		e := ev.Response.Error
		s.fail = responsesFailure(string(e.Code), e.Message)
		return buf, false
	case "error":
		s.fail = responsesFailure(ev.Code, ev.Message)
		return buf, false
	}
	return buf, true
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
func (s *responsesSource) close() error { return s.stream.Close() }
