package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
)

// darman speaks Anthropic's Messages API (and Claude on Bedrock and Vertex,
// see cloud.go) with its own client, as it does OpenAI's (agent/llm/openai).
// anthropic-sdk-go cost 7.9 MB of the stripped binary and 20 package
// initializers at every start (its own, and those of the JSON-schema and
// YAML packages it brought) for one endpoint whose request darman built
// from its own types and whose stream it already read itself. The request bodies are
// the ones the SDK built (TestAnthropicBodiesAsTheSDKBuiltThem).

// apiVersion is the API version darman asks for, the one the SDK
// (v2.15.0) sent.
const apiVersion = "2026-10-21"

// anthropicWire speaks Anthropic's Messages API.
type anthropicWire struct {
	api *wire.APIClient
	// cloud adapts the request to Bedrock or Vertex; nil for Anthropic's
	// own API.
	cloud anthropicCloud
}

// anthropicCloud is what Bedrock and Vertex change of a Messages
// exchange. Its methods are called from the goroutine of the request.
type anthropicCloud interface {
	// path is the request path for the model, relative to the base URL.
	path(model string) string
	// body finishes the body the API would get, as a JSON object without
	// its closing brace: w has the fields so far.
	body(w *jsonWriter)
	// sign authorises a request with its final headers and body.
	sign(req *http.Request, body []byte) error
	// stream reads a successful answer's events.
	stream(res *http.Response) (eventSource, error)
}

// New is the wire of Anthropic's own Messages API at t's base URL.
func New(t wire.Transport) llm.Wire { return newWire(t, nil) }

// newWire builds the client. Anthropic's API gets the
// anthropic-version header unless the provider's headers set one; the
// clouds take the version in the body (newCloud moves it there).
func newWire(t wire.Transport, cloud anthropicCloud) *anthropicWire {
	// The Accept the SDK sent, streams included: Bedrock signs it.
	api := &wire.APIClient{Transport: t, Header: map[string]string{"Accept": "application/json"}}
	if _, ok := headerValue(t.Headers, "anthropic-version"); cloud == nil && !ok {
		api.Header["anthropic-version"] = apiVersion
	}
	if cloud != nil {
		api.Sign = cloud.sign
	}
	return &anthropicWire{api: api, cloud: cloud}
}

// headerValue is the value of a header in a map of configured headers,
// whatever the case of its name.
func headerValue(headers map[string]string, name string) (string, bool) {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// takeHeader removes a header from a map of configured headers and
// returns its value.
func takeHeader(headers map[string]string, name string) (string, bool) {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			delete(headers, k)
			return v, true
		}
	}
	return "", false
}

func (w *anthropicWire) Models(ctx context.Context) ([]string, error) {
	return w.api.ModelList(ctx, "v1/models?limit=1000")
}

func (w *anthropicWire) Open(ctx context.Context, req *llm.Request, model llm.ModelInfo) (llm.Source, error) {
	body, err := anthropicBody(req, model, w.cloud)
	if err != nil {
		return nil, err
	}
	path := "v1/messages"
	if w.cloud != nil {
		path = w.cloud.path(req.Model)
	}
	res, err := w.api.Do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return nil, err
	}
	var events eventSource
	if w.cloud != nil {
		events, err = w.cloud.stream(res)
	} else if err = wire.CheckEventStream(res); err == nil {
		events = wire.NewSSEDecoder(res.Body)
	}
	if err != nil {
		return nil, err
	}
	return &anthropicSource{events: events, model: model}, nil
}

// thinkingBudgets turns an effort into a budget for models that think
// within a token budget.
var thinkingBudgets = map[string]int{
	"minimal": 1024, "low": 4096, "medium": 10000, "high": 24000, "xhigh": 32000, "max": 48000,
}

// anthropicBody is the JSON body of a streamed Messages request.
func anthropicBody(req *llm.Request, model llm.ModelInfo, cloud anthropicCloud) ([]byte, error) {
	maxTokens := req.MaxOutputTokens
	if maxTokens == 0 {
		maxTokens = model.MaxOutput
	}
	var cache *anthropicCache
	if !req.Cache.Disabled {
		cache = &anthropicCache{long: req.Cache.LongTTL}
	}

	thinking := req.Reasoning.Enabled() && (model.Reasoning || !model.Known)
	adaptive := thinking && model.AdaptiveThinking && req.Reasoning.BudgetTokens == 0
	budget := 0
	if thinking && !adaptive {
		budget = req.Reasoning.BudgetTokens
		if budget == 0 {
			budget = thinkingBudgets[req.Reasoning.Effort]
		}
		budget = max(budget, 1024)
		// The budget counts toward max_tokens and must stay below it.
		if maxTokens <= budget {
			maxTokens = budget + 4096
		}
	}

	turns := anthropicTurns(req.Messages)
	if len(turns) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "every message of the request is empty"}
	}
	// Cache breakpoints on the last two turns: the newest for this call,
	// the one before it so that the previous call's cache entry is read.
	marked := 0
	for i := len(turns) - 1; i >= 0 && marked < 2 && cache != nil; i-- {
		blocks := turns[i].blocks
		for j := len(blocks) - 1; j >= 0; j-- {
			if blocks[j].cacheable() {
				blocks[j].cache = cache
				marked++
				break
			}
		}
	}

	w := newJSONWriter()
	w.b.WriteString(`{"max_tokens":`)
	w.value(maxTokens)
	w.b.WriteString(`,"messages":[`)
	for i, t := range turns {
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.b.WriteString(`{"content":[`)
		for j := range t.blocks {
			if j > 0 {
				w.b.WriteByte(',')
			}
			t.blocks[j].write(w)
		}
		w.b.WriteString(`],"role":`)
		if t.assistant {
			w.b.WriteString(`"assistant"}`)
		} else {
			w.b.WriteString(`"user"}`)
		}
	}
	w.b.WriteByte(']')
	if cloud == nil {
		w.field("model")
		w.value(req.Model)
	}
	if adaptive && req.Reasoning.Effort != "" {
		w.b.WriteString(`,"output_config":{"effort":`)
		w.value(req.Reasoning.Effort)
		w.b.WriteByte('}')
	}
	if req.System != "" {
		w.b.WriteString(`,"system":[`)
		(&anthropicContent{typ: "text", text: req.System, cache: cache}).write(w)
		w.b.WriteByte(']')
	}
	switch {
	case adaptive:
		w.b.WriteString(`,"thinking":{"type":"adaptive"}`)
	case thinking:
		w.b.WriteString(`,"thinking":{"budget_tokens":`)
		w.value(budget)
		w.b.WriteString(`,"type":"enabled"}`)
	}
	if len(req.Tools) > 0 {
		w.b.WriteString(`,"tools":[`)
		for i, t := range req.Tools {
			if i > 0 {
				w.b.WriteByte(',')
			}
			schema := bytes.TrimSpace(t.Schema)
			if len(schema) == 0 {
				schema = []byte(`{"type":"object","properties":{}}`)
			}
			if !json.Valid(schema) {
				return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("the input schema of tool %q is not JSON", t.Name)}
			}
			w.b.WriteString(`{"input_schema":`)
			w.b.Write(schema)
			w.field("name")
			w.value(t.Name)
			if t.Description != "" {
				w.field("description")
				w.value(t.Description)
			}
			if i == len(req.Tools)-1 && cache != nil {
				cache.write(w)
			}
			w.b.WriteByte('}')
		}
		w.b.WriteByte(']')
	}
	if !thinking && req.Temperature != nil {
		w.field("temperature")
		w.value(*req.Temperature)
	}
	if cloud != nil {
		cloud.body(w)
	} else {
		w.b.WriteString(`,"stream":true`)
	}
	w.b.WriteByte('}')
	if w.err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "encoding the request: " + w.err.Error()}
	}
	return w.b.Bytes(), nil
}

// anthropicTurn is one message of the API: a user or an assistant turn.
type anthropicTurn struct {
	assistant bool
	blocks    []anthropicContent
}

// anthropicTurns maps darman's messages to the API's alternating user and
// assistant turns: tool results travel in user turns, and adjacent
// messages of one API role merge.
func anthropicTurns(msgs []llm.Message) []anthropicTurn {
	var out []anthropicTurn
	for _, m := range msgs {
		assistant := m.Role == llm.RoleAssistant
		var blocks []anthropicContent
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

func appendAnthropicBlock(blocks []anthropicContent, part llm.Part) []anthropicContent {
	switch p := part.(type) {
	case llm.Text:
		// The API rejects empty text blocks.
		if strings.TrimSpace(p.Text) != "" {
			blocks = append(blocks, anthropicContent{typ: "text", text: p.Text})
		}
	case llm.Image:
		blocks = append(blocks, anthropicImage(p))
	case llm.Reasoning:
		switch {
		case p.Origin != llm.OriginAnthropic:
		case p.Redacted != "":
			blocks = append(blocks, anthropicContent{typ: "redacted_thinking", data: p.Redacted})
		case p.Signature != "":
			blocks = append(blocks, anthropicContent{typ: "thinking", text: p.Text, signature: p.Signature})
		}
	case llm.ToolCall:
		blocks = append(blocks, anthropicContent{typ: "tool_use", id: p.ID, name: p.Name, input: anthropicInput(p.Arguments)})
	case llm.ToolResult:
		res := anthropicContent{typ: "tool_result", id: p.CallID, isError: p.IsError}
		if p.Text != "" || len(p.Images) == 0 {
			res.content = append(res.content, anthropicContent{typ: "text", text: p.Text})
		}
		for _, img := range p.Images {
			res.content = append(res.content, anthropicImage(img))
		}
		blocks = append(blocks, res)
	}
	return blocks
}

func anthropicImage(img llm.Image) anthropicContent {
	return anthropicContent{typ: "image", mediaType: img.MediaType, data: base64.StdEncoding.EncodeToString(img.Data)}
}

// anthropicInput is a tool call's input as the API wants it: a JSON
// object, in the model's own bytes (prompt caches key on them). Arguments
// the model got wrong travel back wrapped, so that the model sees what it
// sent beside the error its tool result reports.
func anthropicInput(args json.RawMessage) []byte {
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}")
	}
	if _, err := llm.ToolArguments("", args); err == nil {
		return bytes.TrimSpace(args)
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": string(args)})
	return wrapped
}

func anthropicFinish(r string) llm.FinishReason {
	switch r {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "tool_use":
		return llm.FinishToolUse
	case "max_tokens":
		return llm.FinishLength
	case "model_context_window_exceeded":
		return llm.FinishContextWindow
	case "refusal":
		return llm.FinishRefusal
	case "pause_turn":
		return llm.FinishPause
	}
	return llm.FinishOther
}

func (w *anthropicWire) Classify(err error, e *llm.Error) bool {
	var aerr *wire.StatusError
	if !errors.As(err, &aerr) {
		return false
	}
	e.Err = nil
	e.Status = aerr.Status
	e.Type = aerr.Type
	e.Message = aerr.Message
	e.URL = aerr.URL
	e.RetryAfter = wire.RetryAfter(aerr.Header, time.Now())
	if e.Message == "" {
		e.Message = wire.Truncate(strings.TrimSpace(aerr.Body), 300)
	}
	e.Kind = anthropicKind(e.Type, e.Status, e.Message)
	return true
}

// anthropicKind classifies an Anthropic error by its type, then by its
// HTTP status (zero for an error event inside a stream).
func anthropicKind(typ string, status int, msg string) llm.Kind {
	switch typ {
	case "authentication_error":
		return llm.ErrAuth
	case "permission_error":
		return llm.ErrPermission
	case "billing_error":
		return llm.ErrBilling
	case "not_found_error":
		// The API answered in its own error shape, so the endpoint is
		// there: what it did not find is the model (Anthropic's message
		// is often just "model: ID"), unless it names something else.
		if wire.MentionsUnknownModel(msg) || !strings.Contains(strings.ToLower(msg), "file") {
			return llm.ErrUnknownModel
		}
		return llm.ErrNotFound
	case "request_too_large":
		return llm.ErrContextTooLong
	case "rate_limit_error":
		return llm.ErrRateLimited
	case "overloaded_error":
		return llm.ErrOverloaded
	case "conflict_error":
		return llm.ErrConflict
	case "timeout_error":
		return llm.ErrTimeout
	case "invalid_request_error":
		if wire.MentionsContextTooLong(msg) {
			return llm.ErrContextTooLong
		}
		return llm.ErrBadRequest
	}
	// "api_error", an unknown type, or a body that is not Anthropic's: the
	// status says more (408, 409, 503...).
	k := wire.KindForStatus(status)
	switch {
	case k == llm.ErrNotFound && wire.MentionsUnknownModel(msg):
		return llm.ErrUnknownModel
	case k == llm.ErrOther || (typ == "api_error" && k == llm.ErrBadRequest):
		return llm.ErrServer
	}
	return k
}
