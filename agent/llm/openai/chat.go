package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
)

// chatWire speaks Chat Completions, the API every OpenAI-compatible server
// offers.
type chatWire struct {
	client wire.APIClient
	// official is set for OpenAI's own API, which takes fields
	// (max_completion_tokens, prompt_cache_key) that other servers may
	// refuse.
	official bool
	// behaviour is what the server does with reasoning and usage.
	behaviour ChatBehaviour
	path      func(model string) string
}

// ChatBehaviour is what a Chat Completions server asks for beyond the
// API OpenAI documents.
type ChatBehaviour struct {
	// Reasoning is what goes back of earlier reasoning, by model; nil
	// sends nothing back.
	Reasoning func(model string) llm.ReasoningReturn
	// CachedApart is set for servers whose prompt_tokens leave the cached
	// tokens out; a usage block with total_tokens says so by itself.
	CachedApart bool
	// NoStreamOptions leaves stream_options out, for servers that refuse
	// fields they do not define and send the usage anyway.
	NoStreamOptions bool
	// ToolCallExtra sends each tool call's extra_content back with it
	// (Gemini's thought signatures).
	ToolCallExtra bool
}

// Chat is what a Chat Completions server needs beyond the base URL and
// the key.
type Chat struct {
	// Official is set for OpenAI's own API, which takes fields
	// (max_completion_tokens, prompt_cache_key) that other servers may
	// refuse.
	Official bool
	// Behaviour is what the server does with reasoning and usage.
	Behaviour ChatBehaviour
	// Path is the request's path for a model, relative to the base URL;
	// nil means chat/completions (Azure's deployments differ).
	Path func(model string) string
	// Header and Query go with every request (Azure's api-key and
	// api-version).
	Header map[string]string
	Query  url.Values
}

// NewChat is the wire of Chat Completions at t's base URL.
func NewChat(t wire.Transport, o Chat) llm.Wire { return newChatWire(t, o) }

func newChatWire(t wire.Transport, o Chat) *chatWire {
	if o.Behaviour.Reasoning == nil {
		o.Behaviour.Reasoning = func(string) llm.ReasoningReturn { return llm.ReasoningReturn{} }
	}
	if o.Path == nil {
		o.Path = func(string) string { return "chat/completions" }
	}
	return &chatWire{client: wire.APIClient{Transport: t, Header: o.Header, Query: o.Query},
		official: o.Official, behaviour: o.Behaviour, path: o.Path}
}

// ReasoningReturn is what requests for the model send back of earlier
// reasoning.
func (w *chatWire) ReasoningReturn(model string) llm.ReasoningReturn {
	return w.behaviour.Reasoning(model)
}

func (w *chatWire) Models(ctx context.Context) ([]string, error) { return w.client.Models(ctx) }

func (w *chatWire) Open(ctx context.Context, req *llm.Request, model llm.ModelInfo) (llm.Source, error) {
	body, err := w.body(req)
	if err != nil {
		return nil, err
	}
	events, err := w.client.StreamBody(ctx, w.path(req.Model), body)
	if err != nil {
		return nil, err
	}
	return &chatSource{events: events, model: model, part: -1, cachedApart: w.behaviour.CachedApart}, nil
}

// body is the encoded request: the params with the reasoning the server
// wants back added to its assistant messages.
func (w *chatWire) body(req *llm.Request) (rawBody, error) {
	params, index, err := w.params(req)
	if err != nil {
		return nil, err
	}
	b, err := wire.EncodeJSON(params)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "encoding the request: " + err.Error()}
	}
	patches := chatReasoningPatches(w.behaviour.Reasoning(req.Model), req, index)
	if w.behaviour.ToolCallExtra {
		patches = append(patches, toolCallExtraPatches(req, index)...)
	}
	if len(patches) == 0 {
		return b, nil
	}
	b, err = applyPatches(b, patches)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error()}
	}
	return b, nil
}

func (w *chatWire) Classify(err error, e *llm.Error) bool { return classifyOpenAI(err, e) }

// chatParams is a Chat Completions request, with the fields darman sends.
type chatParams struct {
	Model               string             `json:"model"`
	Messages            []chatMessage      `json:"messages"`
	Stream              bool               `json:"stream"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	PromptCacheKey      string             `json:"prompt_cache_key,omitempty"`
	Tools               []chatTool         `json:"tools,omitempty"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// chatMessage is a message of any role. Content is a string or a list of
// chatTextPart and chatImagePart; nil leaves it out (an assistant message
// of tool calls only).
type chatMessage struct {
	Role       string             `json:"role"`
	Content    any                `json:"content,omitempty"`
	ToolCalls  []chatToolCallItem `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
}

type chatToolCallItem struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type chatImagePart struct {
	Type     string       `json:"type"`
	ImageURL chatImageURL `json:"image_url"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

// params builds the request. index maps each of req.Messages to the
// position of its message in params.Messages, -1 when it produced none
// (tool messages may produce several; only assistant positions are used).
func (w *chatWire) params(req *llm.Request) (p chatParams, index []int, err error) {
	p = chatParams{Model: req.Model, Stream: true, Messages: []chatMessage{}}
	if !w.behaviour.NoStreamOptions {
		p.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if req.MaxOutputTokens > 0 {
		if w.official {
			p.MaxCompletionTokens = req.MaxOutputTokens
		} else {
			p.MaxTokens = req.MaxOutputTokens
		}
	}
	p.Temperature = req.Temperature
	p.ReasoningEffort = req.Reasoning.Effort
	if w.official && req.Cache.Key != "" && !req.Cache.Disabled {
		p.PromptCacheKey = req.Cache.Key
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.Schema)
		if err != nil {
			return p, nil, &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("tool %q: schema: %v", t.Name, err)}
		}
		p.Tools = append(p.Tools, chatTool{Type: "function",
			Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if req.System != "" {
		p.Messages = append(p.Messages, chatMessage{Role: "system", Content: req.System})
	}
	index = make([]int, len(req.Messages))
	for i, m := range req.Messages {
		n := len(p.Messages)
		p.Messages = appendChatMessages(p.Messages, m)
		index[i] = -1
		if len(p.Messages) > n {
			index[i] = n
		}
	}
	return p, index, nil
}

func appendChatMessages(out []chatMessage, m llm.Message) []chatMessage {
	switch m.Role {
	case llm.RoleUser:
		parts := chatUserParts(m.Parts)
		if len(parts) == 0 {
			return out
		}
		msg := chatMessage{Role: "user", Content: parts}
		if t, ok := parts[0].(chatTextPart); ok && len(parts) == 1 {
			msg.Content = t.Text
		}
		return append(out, msg)
	case llm.RoleAssistant:
		msg := chatMessage{Role: "assistant"}
		var text strings.Builder
		for _, part := range m.Parts {
			switch p := part.(type) {
			case llm.Text:
				text.WriteString(p.Text)
			case llm.ToolCall:
				args := string(p.Arguments)
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, chatToolCallItem{ID: p.ID, Type: "function",
					Function: chatCallFunction{Name: p.Name, Arguments: args}})
			}
			// Reasoning goes back, where the server asks for it, in
			// fields Chat Completions does not define: see body.
		}
		if text.Len() > 0 {
			msg.Content = text.String()
		}
		if text.Len() == 0 && len(msg.ToolCalls) == 0 {
			return out
		}
		return append(out, msg)
	case llm.RoleTool:
		// Chat Completions' tool messages hold text only: the images of
		// the results follow in one user message.
		var images []any
		for _, part := range m.Parts {
			r, ok := part.(llm.ToolResult)
			if !ok {
				continue
			}
			text := r.Text
			if r.IsError {
				text = "Error: " + text
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: r.CallID, Content: text})
			if len(r.Images) > 0 {
				images = append(images, chatTextPart{Type: "text", Text: "Images from the result of tool call " + r.CallID + ":"})
				for _, img := range r.Images {
					images = append(images, chatImage(img))
				}
			}
		}
		if len(images) > 0 {
			out = append(out, chatMessage{Role: "user", Content: images})
		}
	}
	return out
}

func chatUserParts(parts []llm.Part) []any {
	var out []any
	for _, part := range parts {
		switch p := part.(type) {
		case llm.Text:
			out = append(out, chatTextPart{Type: "text", Text: p.Text})
		case llm.Image:
			out = append(out, chatImage(p))
		}
	}
	return out
}

func chatImage(img llm.Image) chatImagePart {
	return chatImagePart{Type: "image_url", ImageURL: chatImageURL{URL: dataURL(img)}}
}

// chatToolCall is one tool call being streamed.
type chatToolCall struct {
	part     int
	id, name string
	args     []byte
	ended    bool
	// extra is the call's extra_content (Gemini), as JSON.
	extra string
}

// chatSource translates a Chat Completions stream: chunks whose
// choices[0].delta holds content, reasoning and tool_calls[i] fragments,
// then a finish_reason, a usage chunk and [DONE].
type chatSource struct {
	events *wire.SSEDecoder
	model  llm.ModelInfo
	parts  int
	// part and partKind are the open text or reasoning part; -1 when none.
	part      int
	partKind  llm.EventKind
	reasoning strings.Builder
	// details gathers OpenRouter's reasoning_details until the reasoning
	// part they belong to ends.
	details detailsAccumulator
	calls   map[int64]*chatToolCall
	usage   llm.Usage
	finish  string
	fail    error
	// cachedApart: the server's prompt_tokens leave the cached tokens out.
	cachedApart bool
}

// open returns the index of the text or reasoning part a delta of kind
// belongs to, starting a new part when the kind changes.
func (s *chatSource) open(buf []llm.Event, kind llm.EventKind) ([]llm.Event, int) {
	if s.part < 0 || s.partKind != kind {
		buf = s.closePart(buf)
		s.part, s.partKind = s.parts, kind
		s.parts++
	}
	return buf, s.part
}

// closePart ends the open text or reasoning part; a reasoning part ends
// with EventReasoningEnd.
func (s *chatSource) closePart(buf []llm.Event) []llm.Event {
	if s.part >= 0 && s.partKind == llm.EventReasoningDelta {
		buf = append(buf, llm.Event{Kind: llm.EventReasoningEnd, Index: s.part,
			Reasoning: llm.Reasoning{Origin: llm.OriginChat, Text: s.reasoning.String(), Details: s.details.take()}})
		s.reasoning.Reset()
	}
	s.part = -1
	return buf
}

// endDetails ends the message's reasoning details that no reasoning text
// came with (encrypted reasoning, or a signature sent after the text had
// started) as a reasoning part of their own, so that they go back too.
func (s *chatSource) endDetails(buf []llm.Event) []llm.Event {
	if d := s.details.take(); d != "" {
		buf = append(buf, llm.Event{Kind: llm.EventReasoningEnd, Index: s.parts, Reasoning: llm.Reasoning{Origin: llm.OriginChat, Details: d}})
		s.parts++
	}
	return buf
}

func (s *chatSource) Next(buf []llm.Event) ([]llm.Event, bool) {
	for {
		if !s.events.Next() {
			return s.end(buf, s.events.Err()), false
		}
		ev := s.events.Event()
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			return s.end(buf, nil), false
		}
		chunk, ok, bad := wire.EventJSON(ev.Type, ev.Data)
		if bad != nil {
			s.fail = bad
			return buf, false
		}
		if !ok {
			continue
		}
		if e := chunk.Get("error"); e.Exists() {
			s.fail = chatStreamError(e)
			return buf, false
		}
		return s.translate(chunk, buf), true
	}
}

// end finishes the stream: cleanly only after a finish_reason.
func (s *chatSource) end(buf []llm.Event, err error) []llm.Event {
	if err == nil && s.finish != "" {
		buf = s.endCalls(buf)
	}
	buf, s.fail = wire.Ending(buf, err, s.finish != "", "no finish_reason", s.usage, s.model, s.finishReason())
	return buf
}

// chatStreamError is the error object a server sends inside the stream.
func chatStreamError(e gjson.Result) *llm.Error {
	if e.Type == gjson.String {
		return &llm.Error{Kind: llm.ErrServer, Message: e.Str}
	}
	code, typ, msg := e.Get("code").String(), e.Get("type").String(), e.Get("message").String()
	if msg == "" {
		msg = wire.Truncate(e.Raw, 300)
	}
	kind := openAIKind(int(e.Get("status").Int()), code, typ, msg)
	if kind == llm.ErrOther {
		// An error in the middle of a stream is the server's.
		kind = llm.ErrServer
	}
	if code == "" {
		code = typ
	}
	return &llm.Error{Kind: kind, Type: code, Message: msg}
}

// translate appends the Events of one chunk. It walks each object once:
// chunks repeat their id, model and timestamps every time, and looking
// each field up from the start cost more than the rest of the path.
func (s *chatSource) translate(chunk gjson.Result, buf []llm.Event) []llm.Event {
	var choices, usage gjson.Result
	chunk.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "choices":
			choices = v
		case "usage":
			usage = v
		}
		return true
	})
	if usage.IsObject() {
		s.usage = chatUsage(usage, s.cachedApart)
	}
	choices.ForEach(func(_, c gjson.Result) bool {
		var index int64
		var delta, finish gjson.Result
		c.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "index":
				index = v.Int()
			case "delta":
				delta = v
			case "finish_reason":
				finish = v
			}
			return true
		})
		if index != 0 {
			return true
		}
		var content, reasoning, calls, details gjson.Result
		delta.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "content":
				content = v
			case "reasoning_details":
				// OpenRouter
				details = v
			case "reasoning_content":
				// vLLM, DeepSeek, llama.cpp
				reasoning = v
			case "reasoning":
				// Ollama, OpenRouter
				if !reasoning.Exists() || reasoning.Type == gjson.Null {
					reasoning = v
				}
			case "tool_calls":
				calls = v
			}
			return true
		})
		if r := wire.TextOf(reasoning); r != "" {
			var i int
			buf, i = s.open(buf, llm.EventReasoningDelta)
			s.reasoning.WriteString(r)
			buf = append(buf, llm.Event{Kind: llm.EventReasoningDelta, Index: i, Text: r})
		}
		if details.IsArray() {
			s.details.add(details)
		}
		if t := wire.TextOf(content); t != "" {
			var i int
			buf, i = s.open(buf, llm.EventTextDelta)
			buf = append(buf, llm.Event{Kind: llm.EventTextDelta, Index: i, Text: t})
		}
		calls.ForEach(func(_, tc gjson.Result) bool {
			fn := tc.Get("function")
			id := tc.Get("id").String()
			index := tc.Get("index")
			i := index.Int()
			if !index.Exists() {
				// Gemini sends whole calls without an index.
				i = s.indexOf(id)
			}
			buf = s.toolCallDelta(buf, i, id, fn.Get("name").String(), wire.TextOf(fn.Get("arguments")))
			if extra := tc.Get("extra_content"); extra.Exists() {
				// Gemini's thought signature travels with the call.
				s.calls[i].extra = extra.Raw
			}
			return true
		})
		if f := finish.String(); f != "" {
			s.finish = f
			buf = s.endCalls(buf)
		}
		return true
	})
	return buf
}

// indexOf is the index of the call with this id, or the next free one.
func (s *chatSource) indexOf(id string) int64 {
	for i, tc := range s.calls {
		if id != "" && tc.id == id {
			return i
		}
	}
	return int64(len(s.calls))
}

func (s *chatSource) toolCallDelta(buf []llm.Event, index int64, id, name, a string) []llm.Event {
	if s.calls == nil {
		s.calls = map[int64]*chatToolCall{}
	}
	tc := s.calls[index]
	if tc == nil {
		buf = s.closePart(buf)
		tc = &chatToolCall{part: s.parts, id: id, name: name}
		s.parts++
		if tc.id == "" {
			tc.id = fmt.Sprintf("call_%d", index)
		}
		s.calls[index] = tc
		buf = append(buf, llm.Event{Kind: llm.EventToolCallStart, Index: tc.part, ToolCall: llm.ToolCall{ID: tc.id, Name: tc.name}})
	} else if tc.name == "" && name != "" {
		tc.name = name
	}
	if a != "" {
		tc.args = append(tc.args, a...)
		buf = append(buf, llm.Event{Kind: llm.EventToolCallDelta, Index: tc.part, Text: a, ToolCall: llm.ToolCall{ID: tc.id, Name: tc.name}})
	}
	return buf
}

// endCalls ends the open reasoning part and the tool calls still open,
// in the order they started.
func (s *chatSource) endCalls(buf []llm.Event) []llm.Event {
	buf = s.closePart(buf)
	buf = s.endDetails(buf)
	var open []*chatToolCall
	for _, tc := range s.calls {
		if !tc.ended {
			open = append(open, tc)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].part < open[j].part })
	for _, tc := range open {
		tc.ended = true
		args, err := llm.ToolArguments(tc.name, tc.args)
		buf = append(buf, llm.Event{Kind: llm.EventToolCallEnd, Index: tc.part, Err: err,
			ToolCall: llm.ToolCall{ID: tc.id, Name: tc.name, Arguments: args, Extra: tc.extra}})
	}
	return buf
}

func (s *chatSource) finishReason() llm.FinishReason {
	switch s.finish {
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishRefusal
	}
	// Some servers finish a turn of tool calls with "stop".
	if len(s.calls) > 0 {
		return llm.FinishToolUse
	}
	switch s.finish {
	case "stop":
		return llm.FinishStop
	case "tool_calls", "function_call":
		return llm.FinishToolUse
	}
	return llm.FinishOther
}

func (s *chatSource) Err() error   { return s.fail }
func (s *chatSource) Close() error { return s.events.Close() }
