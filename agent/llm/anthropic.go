package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
)

// anthropicWire speaks Anthropic's Messages API through the official SDK.
type anthropicWire struct {
	messages anthropic.MessageService
	list     anthropic.ModelService
}

func newAnthropicWire(t transport) *anthropicWire {
	opts := []option.RequestOption{
		// darman resolves keys and base URLs itself; the SDK must not read
		// ANTHROPIC_* variables or profile files behind its back.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(t.baseURL + "/"),
		option.WithHTTPClient(t.http),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return t.idle.do(r, next)
		}),
	}
	if t.key != "" {
		opts = append(opts, option.WithAPIKey(t.key))
	}
	for k, v := range t.headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	client := anthropic.NewClient(opts...)
	return &anthropicWire{messages: client.Messages, list: client.Models}
}

func (w *anthropicWire) models(ctx context.Context) ([]string, error) {
	page, err := w.list.List(ctx, anthropic.ModelListParams{Limit: param.NewOpt(int64(1000))})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(page.Data))
	for i, m := range page.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

func (w *anthropicWire) open(ctx context.Context, req *Request, model ModelInfo) (source, error) {
	params, opts, err := anthropicParams(req, model)
	if err != nil {
		return nil, err
	}
	stream := w.messages.NewStreaming(ctx, params, opts...)
	return &anthropicSource{stream: stream, model: model}, nil
}

// thinkingBudgets turns an effort into a budget for models that think
// within a token budget.
var thinkingBudgets = map[string]int{
	"minimal": 1024, "low": 4096, "medium": 10000, "high": 24000, "xhigh": 32000, "max": 48000,
}

func anthropicParams(req *Request, model ModelInfo) (anthropic.MessageNewParams, []option.RequestOption, error) {
	var opts []option.RequestOption
	p := anthropic.MessageNewParams{Model: req.Model}

	maxTokens := req.MaxOutputTokens
	if maxTokens == 0 {
		maxTokens = model.MaxOutput
	}
	cache := anthropic.CacheControlEphemeralParam{}
	if !req.Cache.Disabled {
		cache = anthropic.NewCacheControlEphemeralParam()
		if req.Cache.LongTTL {
			cache.TTL = anthropic.CacheControlEphemeralTTLTTL1h
		}
	}

	thinking := req.Reasoning.enabled() && (model.Reasoning || !model.Known)
	if thinking {
		if model.AdaptiveThinking && req.Reasoning.BudgetTokens == 0 {
			p.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{}
			if req.Reasoning.Effort != "" {
				p.OutputConfig.Effort = anthropic.OutputConfigEffort(req.Reasoning.Effort)
			}
		} else {
			budget := req.Reasoning.BudgetTokens
			if budget == 0 {
				budget = thinkingBudgets[req.Reasoning.Effort]
			}
			budget = max(budget, 1024)
			// The budget counts toward max_tokens and must stay below it.
			if maxTokens <= budget {
				maxTokens = budget + 4096
			}
			p.Thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(budget)}
		}
	} else if req.Temperature != nil {
		// The Messages params in this SDK have no temperature field; the
		// API still takes it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	p.MaxTokens = int64(maxTokens)

	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: cache}}
	}
	for _, t := range req.Tools {
		tool := anthropic.ToolParam{Name: t.Name}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		tool.InputSchema = param.Override[anthropic.ToolInputSchemaParam](schema)
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = cache
	}

	turns := anthropicTurns(req.Messages)
	if len(turns) == 0 {
		return p, nil, &Error{Kind: ErrBadRequest, Message: "every message of the request is empty"}
	}
	// Cache breakpoints on the last two turns: the newest for this call,
	// the one before it so that the previous call's cache entry is read.
	marked := 0
	for i := len(turns) - 1; i >= 0 && marked < 2 && !req.Cache.Disabled; i-- {
		blocks := turns[i].blocks
		for j := len(blocks) - 1; j >= 0; j-- {
			if cc := blocks[j].GetCacheControl(); cc != nil {
				*cc = cache
				marked++
				break
			}
		}
	}
	p.Messages = make([]anthropic.MessageParam, len(turns))
	for i, t := range turns {
		if t.assistant {
			p.Messages[i] = anthropic.NewAssistantMessage(t.blocks...)
		} else {
			p.Messages[i] = anthropic.NewUserMessage(t.blocks...)
		}
	}
	return p, opts, nil
}

// anthropicTurn is one message of the API: a user or an assistant turn.
type anthropicTurn struct {
	assistant bool
	blocks    []anthropic.ContentBlockParamUnion
}

// anthropicTurns maps darman's messages to the API's alternating user and
// assistant turns: tool results travel in user turns, and adjacent
// messages of one API role merge.
func anthropicTurns(msgs []Message) []anthropicTurn {
	var out []anthropicTurn
	for _, m := range msgs {
		assistant := m.Role == RoleAssistant
		var blocks []anthropic.ContentBlockParamUnion
		for _, part := range m.Parts {
			blocks = appendAnthropicBlock(blocks, part)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].assistant == assistant {
			out[n-1].blocks = append(out[n-1].blocks, blocks...)
			continue
		}
		out = append(out, anthropicTurn{assistant: assistant, blocks: blocks})
	}
	return out
}

func appendAnthropicBlock(blocks []anthropic.ContentBlockParamUnion, part Part) []anthropic.ContentBlockParamUnion {
	switch p := part.(type) {
	case Text:
		// The API rejects empty text blocks.
		if strings.TrimSpace(p.Text) != "" {
			blocks = append(blocks, anthropic.NewTextBlock(p.Text))
		}
	case Image:
		blocks = append(blocks, anthropic.NewImageBlockBase64(p.MediaType, base64.StdEncoding.EncodeToString(p.Data)))
	case Reasoning:
		switch {
		case p.Origin != "anthropic":
		case p.Redacted != "":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(p.Redacted))
		case p.Signature != "":
			blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
		}
	case ToolCall:
		blocks = append(blocks, anthropic.NewToolUseBlock(p.ID, anthropicInput(p.Arguments), p.Name))
	case ToolResult:
		res := anthropic.ToolResultBlockParam{ToolUseID: p.CallID}
		if p.IsError {
			res.IsError = param.NewOpt(true)
		}
		if p.Text != "" || len(p.Images) == 0 {
			res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{
				OfText: &anthropic.TextBlockParam{Text: p.Text},
			})
		}
		for _, img := range p.Images {
			b := anthropic.NewImageBlockBase64(img.MediaType, base64.StdEncoding.EncodeToString(img.Data))
			res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
		}
		blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &res})
	}
	return blocks
}

// anthropicInput is a tool call's input as the API wants it: a JSON
// object. Arguments the model got wrong travel back wrapped, so that the
// model sees what it sent beside the error its tool result reports.
func anthropicInput(args json.RawMessage) json.RawMessage {
	switch {
	case len(bytes.TrimSpace(args)) == 0:
		return json.RawMessage("{}")
	case isJSONObject(args):
		return args
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": string(args)})
	return wrapped
}

// anthropicBlock is the state of one content block of the answer.
type anthropicBlock struct {
	kind      EventKind // EventTextDelta, EventReasoningDelta, EventToolCallDelta; 0 for blocks darman ignores
	part      int
	id, name  string
	text      strings.Builder
	args      []byte
	signature string
	redacted  string
}

type anthropicSource struct {
	stream  *ssestream.Stream[anthropic.MessageStreamEventUnion]
	model   ModelInfo
	blocks  []*anthropicBlock
	parts   int
	usage   Usage
	stop    anthropic.StopReason
	stopped bool
	fail    error
}

func (s *anthropicSource) block(i int64) *anthropicBlock {
	if i < 0 || int(i) >= len(s.blocks) {
		return nil
	}
	return s.blocks[i]
}

func (s *anthropicSource) next(buf []Event) ([]Event, bool) {
	if !s.stream.Next() {
		s.fail = s.stream.Err()
		if s.fail == nil && !s.stopped {
			s.fail = &Error{Kind: ErrStreamCut, Message: "no message_stop event"}
		}
		if s.fail == nil {
			buf = append(buf,
				Event{Kind: EventUsage, Usage: s.usage, Cost: s.model.Cost.Of(s.usage)},
				Event{Kind: EventFinish, Finish: anthropicFinish(s.stop)})
		}
		return buf, false
	}
	ev := s.stream.Current()
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.usage = Usage{
			Input: int(u.InputTokens), Output: int(u.OutputTokens),
			CacheRead: int(u.CacheReadInputTokens), CacheWrite: int(u.CacheCreationInputTokens),
		}
	case "content_block_start":
		b := &anthropicBlock{}
		for int(ev.Index) >= len(s.blocks) {
			s.blocks = append(s.blocks, nil)
		}
		if ev.Index < 0 {
			s.fail = &Error{Kind: ErrMalformed, Message: "content block with a negative index"}
			return buf, false
		}
		s.blocks[ev.Index] = b
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			b.kind, b.part = EventTextDelta, s.parts
			s.parts++
			if cb.Text != "" {
				buf = append(buf, Event{Kind: EventTextDelta, Index: b.part, Text: cb.Text})
			}
		case "thinking", "redacted_thinking":
			b.kind, b.part = EventReasoningDelta, s.parts
			s.parts++
			b.signature, b.redacted = cb.Signature, cb.Data
			if cb.Thinking != "" {
				b.text.WriteString(cb.Thinking)
				buf = append(buf, Event{Kind: EventReasoningDelta, Index: b.part, Text: cb.Thinking})
			}
		case "tool_use":
			b.kind, b.part = EventToolCallDelta, s.parts
			s.parts++
			b.id, b.name = cb.ID, cb.Name
			buf = append(buf, Event{Kind: EventToolCallStart, Index: b.part, ToolCall: ToolCall{ID: b.id, Name: b.name}})
		}
	case "content_block_delta":
		b := s.block(ev.Index)
		if b == nil {
			s.fail = &Error{Kind: ErrMalformed, Message: "a content_block_delta for a block that never started"}
			return buf, false
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			if b.kind == EventTextDelta {
				buf = append(buf, Event{Kind: EventTextDelta, Index: b.part, Text: d.Text})
			}
		case "thinking_delta":
			if b.kind == EventReasoningDelta {
				b.text.WriteString(d.Thinking)
				buf = append(buf, Event{Kind: EventReasoningDelta, Index: b.part, Text: d.Thinking})
			}
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			if b.kind == EventToolCallDelta {
				b.args = append(b.args, d.PartialJSON...)
				buf = append(buf, Event{Kind: EventToolCallDelta, Index: b.part, Text: d.PartialJSON,
					ToolCall: ToolCall{ID: b.id, Name: b.name}})
			}
		}
	case "content_block_stop":
		b := s.block(ev.Index)
		if b == nil {
			break
		}
		switch b.kind {
		case EventReasoningDelta:
			buf = append(buf, Event{Kind: EventReasoningEnd, Index: b.part, Reasoning: Reasoning{
				Origin: "anthropic", Text: b.text.String(), Signature: b.signature, Redacted: b.redacted,
			}})
		case EventToolCallDelta:
			args, err := toolArguments(b.name, b.args)
			buf = append(buf, Event{Kind: EventToolCallEnd, Index: b.part, Err: err,
				ToolCall: ToolCall{ID: b.id, Name: b.name, Arguments: args}})
		}
		s.blocks[ev.Index] = nil
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.stop = ev.Delta.StopReason
		}
		u := ev.Usage
		// message_delta's counts are cumulative; input counts appear when
		// they changed, such as after server tools ran.
		s.usage.Output = int(u.OutputTokens)
		if u.InputTokens > 0 {
			s.usage.Input = int(u.InputTokens)
		}
		if u.CacheReadInputTokens > 0 {
			s.usage.CacheRead = int(u.CacheReadInputTokens)
		}
		if u.CacheCreationInputTokens > 0 {
			s.usage.CacheWrite = int(u.CacheCreationInputTokens)
		}
		s.usage.Reasoning = int(u.OutputTokensDetails.ThinkingTokens)
	case "message_stop":
		s.stopped = true
	}
	return buf, true
}

func (s *anthropicSource) err() error   { return s.fail }
func (s *anthropicSource) close() error { return s.stream.Close() }

func anthropicFinish(r anthropic.StopReason) FinishReason {
	switch r {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return FinishStop
	case anthropic.StopReasonToolUse:
		return FinishToolUse
	case anthropic.StopReasonMaxTokens:
		return FinishLength
	case anthropic.StopReasonModelContextWindowExceeded:
		return FinishContextWindow
	case anthropic.StopReasonRefusal:
		return FinishRefusal
	case anthropic.StopReasonPauseTurn:
		return FinishPause
	}
	return FinishOther
}

func (w *anthropicWire) classify(err error, e *Error) bool {
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) {
		if msg, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok {
			// An error event that the SDK could not parse.
			e.Kind, e.Message = ErrMalformed, msg
			return true
		}
		return false
	}
	e.Err = nil
	e.Type = string(aerr.Type())
	e.Message = aerr.Message
	if aerr.StatusCode != 200 {
		// An error event inside a stream arrives with the stream's 200.
		e.Status = aerr.StatusCode
	}
	if aerr.Request != nil {
		e.URL = aerr.Request.URL.String()
	}
	if aerr.Response != nil {
		e.RetryAfter = retryAfter(aerr.Response.Header, time.Now())
	}
	switch e.Type {
	case "authentication_error":
		e.Kind = ErrAuth
	case "permission_error":
		e.Kind = ErrPermission
	case "billing_error":
		e.Kind = ErrBilling
	case "not_found_error":
		e.Kind = ErrNotFound
		if mentionsUnknownModel(e.Message) {
			e.Kind = ErrUnknownModel
		}
	case "request_too_large":
		e.Kind = ErrContextTooLong
	case "rate_limit_error":
		e.Kind = ErrRateLimited
	case "overloaded_error":
		e.Kind = ErrOverloaded
	case "api_error":
		// A generic type: the status says more (408, 409, 503...).
		e.Kind = kindForStatus(e.Status)
		if e.Kind == ErrOther || e.Kind == ErrBadRequest {
			e.Kind = ErrServer
		}
	case "conflict_error":
		e.Kind = ErrConflict
	case "timeout_error":
		e.Kind = ErrTimeout
	case "invalid_request_error":
		e.Kind = ErrBadRequest
		if mentionsContextTooLong(e.Message) {
			e.Kind = ErrContextTooLong
		}
	default:
		e.Kind = kindForStatus(e.Status)
		if e.Kind == ErrOther && e.Status == 0 {
			e.Kind = ErrServer
		}
		if e.Kind == ErrNotFound && mentionsUnknownModel(e.Message) {
			e.Kind = ErrUnknownModel
		}
	}
	if e.Message == "" && e.Status != 0 {
		e.Message = truncate(strings.TrimSpace(aerr.RawJSON()), 300)
	}
	return true
}
