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
	client anthropic.Client
}

// newAnthropicWire builds the SDK client. extra options come after
// darman's own, closest to the wire (Bedrock's and Vertex's adaptations).
func newAnthropicWire(t transport, extra ...option.RequestOption) *anthropicWire {
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
	opts = append(opts, extra...)
	return &anthropicWire{client: anthropic.NewClient(opts...)}
}

func (w *anthropicWire) models(ctx context.Context) ([]string, error) {
	page, err := w.client.Models.List(ctx, anthropic.ModelListParams{Limit: param.NewOpt(int64(1000))})
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
	// The SDK sends the request, reports API errors and frames the SSE
	// stream; darman reads the events (see sseEvents for why).
	var raw *http.Response
	opts = append(opts, option.WithJSONSet("stream", true))
	if err := w.client.Post(ctx, "v1/messages", params, &raw, opts...); err != nil {
		return nil, err
	}
	if err := checkEventStream(raw); err != nil {
		return nil, err
	}
	return &anthropicSource{events: ssestream.NewDecoder(raw), model: model}, nil
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
		case p.Origin != originAnthropic:
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
// object, in the model's own bytes. Arguments the model got wrong travel
// back wrapped, so that the model sees what it sent beside the error its
// tool result reports.
func anthropicInput(args json.RawMessage) verbatimJSON {
	switch {
	case len(bytes.TrimSpace(args)) == 0:
		return verbatimJSON("{}")
	case isJSONObject(args):
		return verbatimJSON(bytes.TrimSpace(args))
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": string(args)})
	return verbatimJSON(wrapped)
}

// verbatimJSON is JSON the SDK's encoder writes as it is. A
// json.RawMessage would be compacted and HTML-escaped on the way (both
// SDKs' encoders treat it as untrusted input), which changes the bytes a
// prompt cache keys on; the encoders trust other Marshalers of their own
// params to be compact already and copy their output.
type verbatimJSON []byte

// MarshalJSON returns the bytes unchanged.
func (v verbatimJSON) MarshalJSON() ([]byte, error) { return v, nil }

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
		return false
	}
	e.Err = nil
	e.Status = aerr.StatusCode
	e.Type = string(aerr.Type())
	e.Message = aerr.Message
	if aerr.Request != nil {
		e.URL = aerr.Request.URL.String()
	}
	if aerr.Response != nil {
		e.RetryAfter = retryAfter(aerr.Response.Header, time.Now())
	}
	if e.Message == "" {
		e.Message = truncate(strings.TrimSpace(aerr.RawJSON()), 300)
	}
	e.Kind = anthropicKind(e.Type, e.Status, e.Message)
	return true
}

// anthropicKind classifies an Anthropic error by its type, then by its
// HTTP status (zero for an error event inside a stream).
func anthropicKind(typ string, status int, msg string) Kind {
	switch typ {
	case "authentication_error":
		return ErrAuth
	case "permission_error":
		return ErrPermission
	case "billing_error":
		return ErrBilling
	case "not_found_error":
		if mentionsUnknownModel(msg) {
			return ErrUnknownModel
		}
		return ErrNotFound
	case "request_too_large":
		return ErrContextTooLong
	case "rate_limit_error":
		return ErrRateLimited
	case "overloaded_error":
		return ErrOverloaded
	case "conflict_error":
		return ErrConflict
	case "timeout_error":
		return ErrTimeout
	case "invalid_request_error":
		if mentionsContextTooLong(msg) {
			return ErrContextTooLong
		}
		return ErrBadRequest
	}
	// "api_error", an unknown type, or a body that is not Anthropic's: the
	// status says more (408, 409, 503...).
	k := kindForStatus(status)
	switch {
	case k == ErrNotFound && mentionsUnknownModel(msg):
		return ErrUnknownModel
	case k == ErrOther || (typ == "api_error" && k == ErrBadRequest):
		return ErrServer
	}
	return k
}
