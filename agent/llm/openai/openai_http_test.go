package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/darman-dev/darman/internal/testenv"
)

// richRequest has every kind of part darman sends: a system prompt, text
// and images from the user, text, reasoning of both OpenAI APIs and tool
// calls (one without arguments) from the assistant, and tool results with
// text, an error, images and nothing.
func richRequest() *llm.Request {
	temp := 0.0
	img := llm.Image{MediaType: "image/png", Data: []byte("abc")}
	return &llm.Request{Model: "m", System: "be <brief> & exact", MaxOutputTokens: 100, Temperature: &temp,
		Reasoning: llm.ReasoningOptions{Effort: "high"}, Cache: llm.CacheOptions{Key: "k"},
		Tools: []llm.Tool{
			{Name: "read", Description: "reads", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: "look"}, img}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: ""}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Reasoning{Origin: llm.OriginResponses, ItemID: "rs_1", Text: "thought", Encrypted: "enc"},
				llm.Reasoning{Origin: llm.OriginResponses, ItemID: "rs_2"},
				llm.Text{Text: "ok"},
				llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				llm.ToolCall{ID: "c2", Name: "noargs"},
			}},
			{Role: llm.RoleTool, Parts: []llm.Part{
				llm.ToolResult{CallID: "c1", Text: "content"},
				llm.ToolResult{CallID: "c2", Text: "bad", IsError: true, Images: []llm.Image{img}},
				llm.ToolResult{CallID: "c3", Text: ""},
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Reasoning{Origin: llm.OriginChat, Text: "x"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text{Text: "done"}}},
			{Role: llm.RoleUser, Parts: []llm.Part{img}},
		}}
}

// The request bodies are the ones the openai-go SDK (v3.98.0) built from
// the same request before darman sent them itself: these are its output.
const (
	wantChatBody = `{
	"max_completion_tokens": 100,
	"messages": [
		{"content": "be <brief> & exact", "role": "system"},
		{"content": [{"text": "look", "type": "text"}, {"image_url": {"url": "data:image/png;base64,YWJj"}, "type": "image_url"}], "role": "user"},
		{"content": "", "role": "user"},
		{"content": "ok", "role": "assistant", "tool_calls": [
			{"function": {"arguments": "{\"path\":\"a\"}", "name": "read"}, "id": "c1", "type": "function"},
			{"function": {"arguments": "{}", "name": "noargs"}, "id": "c2", "type": "function"}]},
		{"content": "content", "role": "tool", "tool_call_id": "c1"},
		{"content": "Error: bad", "role": "tool", "tool_call_id": "c2"},
		{"content": "", "role": "tool", "tool_call_id": "c3"},
		{"content": [{"text": "Images from the result of tool call c2:", "type": "text"}, {"image_url": {"url": "data:image/png;base64,YWJj"}, "type": "image_url"}], "role": "user"},
		{"content": "done", "role": "assistant"},
		{"content": [{"image_url": {"url": "data:image/png;base64,YWJj"}, "type": "image_url"}], "role": "user"}
	],
	"model": "m",
	"prompt_cache_key": "k",
	"reasoning_effort": "high",
	"stream": true,
	"stream_options": {"include_usage": true},
	"temperature": 0,
	"tools": [
		{"function": {"description": "reads", "name": "read", "parameters": {"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object"}}, "type": "function"},
		{"function": {"name": "noargs", "parameters": {"properties": {}, "type": "object"}}, "type": "function"}
	]
}`
	wantResponsesBody = `{
	"include": ["reasoning.encrypted_content"],
	"input": [
		{"content": [{"text": "look", "type": "input_text"}, {"detail": "auto", "image_url": "data:image/png;base64,YWJj", "type": "input_image"}], "role": "user"},
		{"content": [{"text": "", "type": "input_text"}], "role": "user"},
		{"encrypted_content": "enc", "id": "rs_1", "summary": [{"text": "thought", "type": "summary_text"}], "type": "reasoning"},
		{"id": "rs_2", "summary": [], "type": "reasoning"},
		{"content": "ok", "role": "assistant"},
		{"arguments": "{\"path\":\"a\"}", "call_id": "c1", "name": "read", "type": "function_call"},
		{"arguments": "{}", "call_id": "c2", "name": "noargs", "type": "function_call"},
		{"call_id": "c1", "output": "content", "type": "function_call_output"},
		{"call_id": "c2", "output": [{"text": "Error: bad", "type": "input_text"}, {"detail": "auto", "image_url": "data:image/png;base64,YWJj", "type": "input_image"}], "type": "function_call_output"},
		{"call_id": "c3", "output": "", "type": "function_call_output"},
		{"content": "done", "role": "assistant"},
		{"content": [{"detail": "auto", "image_url": "data:image/png;base64,YWJj", "type": "input_image"}], "role": "user"}
	],
	"instructions": "be <brief> & exact",
	"max_output_tokens": 100,
	"model": "m",
	"prompt_cache_key": "k",
	"reasoning": {"effort": "high", "summary": "auto"},
	"store": false,
	"stream": true,
	"tools": [
		{"description": "reads", "name": "read", "parameters": {"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object"}, "strict": false, "type": "function"},
		{"name": "noargs", "parameters": {"properties": {}, "type": "object"}, "strict": false, "type": "function"}
	]
}`
)

func TestOpenAIBodiesAsTheSDKBuiltThem(t *testing.T) {
	w := newChatWire(wire.Transport{}, Chat{Official: true})
	b, err := w.body(richRequest())
	if err != nil {
		t.Fatal(err)
	}
	testenv.SameJSON(t, "chat", b, wantChatBody)
	if strings.Contains(string(b), `\u003c`) {
		t.Errorf("the prompt's HTML characters were escaped: %s", b)
	}

	p, err := responsesParams(richRequest(), llm.ModelInfo{Reasoning: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err = wire.EncodeJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	testenv.SameJSON(t, "responses", b, wantResponsesBody)
}

// An error status whose body is not OpenAI's {"error": {...}} still gives
// the server's message.
func TestOpenAIErrorBodies(t *testing.T) {
	cases := []struct {
		body, ctype string
		status      int
		kind        llm.Kind
		msg         string
	}{
		{`{"error": {"message": "no such model", "type": "invalid_request_error", "code": "model_not_found"}}`, "application/json", 404, llm.ErrUnknownModel, "no such model"},
		{`{"error": {"message": "slow down", "code": 429}}`, "application/json", 429, llm.ErrRateLimited, "slow down"},
		{`{"error": "model 'x' not found, try pulling it first"}`, "application/json", 404, llm.ErrUnknownModel, "model 'x' not found, try pulling it first"},
		{`{"message": "bad key"}`, "application/json", 401, llm.ErrAuth, "bad key"},
		{"upstream connect error\n", "text/plain", 502, llm.ErrServer, "upstream connect error"},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		c := wire.APIClient{Transport: wire.Transport{BaseURL: srv.URL + "/v1", HTTP: srv.Client()}}
		_, err := c.Stream(context.Background(), "chat/completions", map[string]any{"model": "x"})
		srv.Close()
		var e llm.Error
		if !classifyOpenAI(err, &e) {
			t.Errorf("%s: %v is not an API error", tc.body, err)
			continue
		}
		if e.Kind != tc.kind || e.Status != tc.status || e.Message != tc.msg || e.RetryAfter.Seconds() != 7 ||
			!strings.HasSuffix(e.URL, "/v1/chat/completions") {
			t.Errorf("%s: got kind %v status %d message %q retry-after %v url %s", tc.body, e.Kind, e.Status, e.Message, e.RetryAfter, e.URL)
		}
	}
}

// A redirect to another host does not carry Azure's api-key (Go drops
// Authorization by itself) nor configured headers along.
