package llm_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

var (
	readSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path."}},"required":["path"],"additionalProperties":false}`)
	tools      = []llm.Tool{
		{Name: "read", Description: "Read a file.", Schema: readSchema},
		{Name: "list", Description: "List a directory."},
	}
	// png is a 1x1 PNG.
	png, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
)

const (
	system   = "You are darman, a coding agent."
	question = "What is in main.go?"
	thought  = "I should read the file first."
	result   = "package main\n\nfunc main() {}\n"
)

// roundTrip runs two model calls: the model thinks and calls read, darman
// answers with the file and a screenshot, the model answers. It returns the
// server's record of the second call.
func roundTrip(t *testing.T, s func(*llmtest.Server) provider.Settings, model string, edit func(*llm.Request)) (*llmtest.Call, string) {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{Reasoning: thought, ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}}},
		{Text: "It holds an empty main function."},
	}})
	c := newClient(t, s(srv), fastRetry)
	req := &llm.Request{Model: model, System: system, Tools: tools, Messages: []llm.Message{llm.UserText(question)}}
	if edit != nil {
		edit(req)
	}
	first, err := llm.Collect(c.Stream(ctxT(t), req))
	if err != nil {
		t.Fatal(err)
	}
	calls := first.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "read" {
		t.Fatalf("first answer: %+v", first.Message)
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{
		llm.ToolResult{CallID: calls[0].ID, Name: "read", Text: result, Images: []llm.Image{{MediaType: "image/png", Data: png}}},
	}})
	second, err := llm.Collect(c.Stream(ctxT(t), req))
	if err != nil {
		t.Fatal(err)
	}
	if second.Text() != "It holds an empty main function." || second.Finish != llm.FinishStop {
		t.Errorf("second answer %q, finish %q", second.Text(), second.Finish)
	}
	mc := srv.ModelCalls()
	if len(mc) != 2 || mc[1].Step != 1 {
		t.Fatalf("server saw %d calls", len(mc))
	}
	return mc[1], calls[0].ID
}

// expect compares a gjson path of the call's body with a value.
func expect(t *testing.T, c *llmtest.Call, path string, want any) {
	t.Helper()
	got := c.Get(path)
	switch w := want.(type) {
	case string:
		if got.String() != w || !got.Exists() {
			t.Errorf("%s = %s, want %q", path, got.Raw, w)
		}
	case bool:
		if got.Bool() != w || !got.Exists() {
			t.Errorf("%s = %s, want %v", path, got.Raw, w)
		}
	case int:
		if got.Int() != int64(w) || !got.Exists() {
			t.Errorf("%s = %s, want %d", path, got.Raw, w)
		}
	case json.RawMessage:
		if !got.Exists() || !jsonEqual(t, []byte(got.Raw), w) {
			t.Errorf("%s = %s, want %s", path, got.Raw, w)
		}
	case nil:
		if got.Exists() {
			t.Errorf("%s = %s, want it absent", path, got.Raw)
		}
	}
}

func TestAnthropicRequest(t *testing.T) {
	c, id := roundTrip(t, apis[0].settings, "claude-sonnet-4-5", func(r *llm.Request) {
		r.Reasoning.Effort = "medium"
	})
	expect(t, c, "model", "claude-sonnet-4-5")
	expect(t, c, "stream", true)
	// Budget thinking for a model without adaptive thinking; max_tokens is
	// the catalog's maximum output.
	expect(t, c, "thinking.type", "enabled")
	expect(t, c, "thinking.budget_tokens", 10000)
	expect(t, c, "max_tokens", 64000)
	expect(t, c, "temperature", nil)

	expect(t, c, "system.0.text", system)
	expect(t, c, "system.0.cache_control.type", "ephemeral")
	expect(t, c, "tools.0.name", "read")
	expect(t, c, "tools.0.description", "Read a file.")
	expect(t, c, "tools.0.input_schema", readSchema)
	expect(t, c, "tools.0.cache_control", nil)
	expect(t, c, "tools.1.input_schema", json.RawMessage(`{"type":"object","properties":{}}`))
	expect(t, c, "tools.1.cache_control.type", "ephemeral")

	expect(t, c, "messages.0.role", "user")
	expect(t, c, "messages.0.content.0.text", question)
	// The thinking block goes back with its signature, before the call.
	expect(t, c, "messages.1.role", "assistant")
	expect(t, c, "messages.1.content.0.type", "thinking")
	expect(t, c, "messages.1.content.0.thinking", thought)
	expect(t, c, "messages.1.content.0.signature", "sig-step0")
	expect(t, c, "messages.1.content.1.type", "tool_use")
	expect(t, c, "messages.1.content.1.id", id)
	expect(t, c, "messages.1.content.1.input", json.RawMessage(`{"path":"main.go"}`))
	// The result is linked to its call, with its image.
	expect(t, c, "messages.2.role", "user")
	expect(t, c, "messages.2.content.0.type", "tool_result")
	expect(t, c, "messages.2.content.0.tool_use_id", id)
	expect(t, c, "messages.2.content.0.is_error", nil)
	expect(t, c, "messages.2.content.0.content.0.text", result)
	expect(t, c, "messages.2.content.0.content.1.type", "image")
	expect(t, c, "messages.2.content.0.content.1.source.media_type", "image/png")
	expect(t, c, "messages.2.content.0.content.1.source.data", base64.StdEncoding.EncodeToString(png))
	// Cache breakpoints: system, last tool, and the last two messages: four,
	// the API's maximum.
	expect(t, c, "messages.2.content.0.cache_control.type", "ephemeral")
	expect(t, c, "messages.1.content.1.cache_control.type", "ephemeral")
	expect(t, c, "messages.0.content.0.cache_control", nil)
	if n := strings.Count(string(c.Body), `"cache_control"`); n != 4 {
		t.Errorf("%d cache breakpoints, want 4", n)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer sk-ant-test" {
		t.Errorf("authorization %q", got)
	}
}

func TestAnthropicAdaptiveThinkingAndOptions(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}}})
	c := newClient(t, apis[0].settings(srv), fastRetry)
	temp := 0.2
	reqs := []*llm.Request{
		{Model: "claude-opus-4-6", Messages: []llm.Message{llm.UserText("a")}, Reasoning: llm.ReasoningOptions{Effort: "high"}},
		{Model: "claude-haiku-4-5", Messages: []llm.Message{llm.UserText("b")}, Temperature: &temp, MaxOutputTokens: 1000,
			Cache: llm.CacheOptions{LongTTL: true}, System: "s"},
		{Model: "claude-haiku-4-5", Messages: []llm.Message{llm.UserText("c")}, Cache: llm.CacheOptions{Disabled: true}, System: "s",
			Reasoning: llm.ReasoningOptions{BudgetTokens: 8000}, MaxOutputTokens: 4000},
	}
	for _, r := range reqs {
		if _, err := llm.Collect(c.Stream(ctxT(t), r)); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.ModelCalls()
	expect(t, calls[0], "thinking.type", "adaptive")
	expect(t, calls[0], "output_config.effort", "high")
	expect(t, calls[0], "max_tokens", 128000)

	expect(t, calls[1], "thinking", nil)
	expect(t, calls[1], "temperature", json.RawMessage(`0.2`))
	expect(t, calls[1], "max_tokens", 1000)
	expect(t, calls[1], "system.0.cache_control.ttl", "1h")

	// The budget must stay below max_tokens, which grows to make room.
	expect(t, calls[2], "thinking.budget_tokens", 8000)
	expect(t, calls[2], "max_tokens", 12096)
	if strings.Contains(string(calls[2].Body), "cache_control") {
		t.Errorf("cache markers sent with caching disabled: %s", calls[2].Body)
	}
}

func TestChatRequest(t *testing.T) {
	c, id := roundTrip(t, apis[1].settings, "qwen3:8b", func(r *llm.Request) {
		r.Cache.Key = "session-1"
	})
	expect(t, c, "model", "qwen3:8b")
	expect(t, c, "stream", true)
	expect(t, c, "stream_options.include_usage", true)
	expect(t, c, "max_tokens", nil)
	expect(t, c, "prompt_cache_key", nil)

	expect(t, c, "messages.0.role", "system")
	expect(t, c, "messages.0.content", system)
	expect(t, c, "messages.1.role", "user")
	expect(t, c, "messages.1.content", question)
	expect(t, c, "messages.2.role", "assistant")
	expect(t, c, "messages.2.tool_calls.0.id", id)
	expect(t, c, "messages.2.tool_calls.0.type", "function")
	expect(t, c, "messages.2.tool_calls.0.function.name", "read")
	expect(t, c, "messages.2.tool_calls.0.function.arguments", `{"path":"main.go"}`)
	expect(t, c, "messages.2.reasoning_content", nil)
	expect(t, c, "messages.3.role", "tool")
	expect(t, c, "messages.3.tool_call_id", id)
	expect(t, c, "messages.3.content", result)
	// Tool messages carry text only: the image follows as a user message.
	expect(t, c, "messages.4.role", "user")
	expect(t, c, "messages.4.content.1.type", "image_url")
	if url := c.Get("messages.4.content.1.image_url.url").String(); !strings.HasPrefix(url, "data:image/png;base64,") {
		t.Errorf("image url %q", url)
	}

	expect(t, c, "tools.0.type", "function")
	expect(t, c, "tools.0.function.name", "read")
	expect(t, c, "tools.0.function.description", "Read a file.")
	expect(t, c, "tools.0.function.parameters", readSchema)
	expect(t, c, "tools.1.function.parameters", json.RawMessage(`{"type":"object","properties":{}}`))
	if got := c.Header.Get("Authorization"); got != "" {
		t.Errorf("a key-less provider sent authorization %q", got)
	}
}

func TestChatRequestLimits(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}}})
	temp := 0.5
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}, MaxOutputTokens: 1000, Temperature: &temp,
		Reasoning: llm.ReasoningOptions{Effort: "low"}, Cache: llm.CacheOptions{Key: "k"}}
	compat := newClient(t, provider.Settings{Name: "vllm", BaseURL: srv.OpenAIURL()}, fastRetry)
	official := newClient(t, provider.Settings{Name: "openai", API: provider.APIChat, BaseURL: srv.OpenAIURL(), APIKey: "sk"}, fastRetry)
	for _, c := range []*llm.Client{compat, official} {
		if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.ModelCalls()
	expect(t, calls[0], "max_tokens", 1000)
	expect(t, calls[0], "max_completion_tokens", nil)
	expect(t, calls[0], "temperature", json.RawMessage(`0.5`))
	expect(t, calls[0], "reasoning_effort", "low")
	// OpenAI's own Chat Completions takes its newer fields.
	expect(t, calls[1], "max_completion_tokens", 1000)
	expect(t, calls[1], "max_tokens", nil)
	expect(t, calls[1], "prompt_cache_key", "k")
}

func TestResponsesRequest(t *testing.T) {
	c, id := roundTrip(t, apis[2].settings, "gpt-5", func(r *llm.Request) {
		r.Cache.Key = "session-1"
		r.Reasoning.Effort = "medium"
	})
	expect(t, c, "model", "gpt-5")
	expect(t, c, "stream", true)
	expect(t, c, "store", false)
	expect(t, c, "instructions", system)
	expect(t, c, "include.0", "reasoning.encrypted_content")
	expect(t, c, "reasoning.effort", "medium")
	expect(t, c, "reasoning.summary", "auto")
	expect(t, c, "prompt_cache_key", "session-1")

	expect(t, c, "input.0.role", "user")
	expect(t, c, "input.0.content.0.type", "input_text")
	expect(t, c, "input.0.content.0.text", question)
	// The reasoning item is carried over, encrypted, before the call.
	expect(t, c, "input.1.type", "reasoning")
	expect(t, c, "input.1.id", "rs_llmtest_0")
	expect(t, c, "input.1.encrypted_content", "enc-step0")
	expect(t, c, "input.1.summary.0.text", thought)
	expect(t, c, "input.2.type", "function_call")
	expect(t, c, "input.2.call_id", id)
	expect(t, c, "input.2.name", "read")
	expect(t, c, "input.2.arguments", `{"path":"main.go"}`)
	expect(t, c, "input.3.type", "function_call_output")
	expect(t, c, "input.3.call_id", id)
	expect(t, c, "input.3.output.0.type", "input_text")
	expect(t, c, "input.3.output.0.text", result)
	expect(t, c, "input.3.output.1.type", "input_image")

	expect(t, c, "tools.0.type", "function")
	expect(t, c, "tools.0.name", "read")
	expect(t, c, "tools.0.parameters", readSchema)
	expect(t, c, "tools.0.strict", false)
	if got := c.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("authorization %q", got)
	}
}

func TestForeignReasoningIsNotSent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "a"}, {Text: "b"}}})
	msgs := []llm.Message{
		llm.UserText("hi"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Reasoning{Origin: "openai-responses", Text: "elsewhere", ItemID: "rs_1", Encrypted: "x"},
			llm.Text{Text: "hello"},
		}},
		llm.UserText("again"),
	}
	for _, api := range apis {
		c := newClient(t, api.settings(srv), fastRetry)
		if _, err := llm.Collect(c.Stream(ctxT(t), &llm.Request{Model: "m", Messages: msgs})); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range srv.ModelCalls() {
		body := string(c.Body)
		if (c.API == llmtest.APIResponses) != strings.Contains(body, "rs_1") {
			t.Errorf("%s: reasoning from the Responses API sent: %s", c.API, body)
		}
		if !strings.Contains(body, "hello") {
			t.Errorf("%s: the assistant's text was dropped: %s", c.API, body)
		}
	}
}

func TestInvalidToolArgumentsRoundTrip(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`["not","an","object"]`)}}},
		{Text: "sorry"},
	}})
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			c := newClient(t, api.settings(srv), fastRetry)
			req := &llm.Request{Model: "m", Tools: tools, Messages: []llm.Message{llm.UserText("go " + api.name)}}
			first, err := llm.Collect(c.Stream(ctxT(t), req))
			if err != nil {
				t.Fatal(err)
			}
			if first.InvalidCalls["c1"] == nil {
				t.Fatalf("invalid arguments not reported: %+v", first)
			}
			req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{
				llm.ToolResult{CallID: "c1", Text: first.InvalidCalls["c1"].Error(), IsError: true},
			}})
			second, err := llm.Collect(c.Stream(ctxT(t), req))
			if err != nil || second.Text() != "sorry" {
				t.Fatalf("second call: %v %+v", err, second)
			}
			last := srv.ModelCalls()[len(srv.ModelCalls())-1]
			switch api.name {
			case "anthropic":
				expect(t, last, "messages.1.content.0.input.invalid_arguments", `["not","an","object"]`)
				expect(t, last, "messages.2.content.0.is_error", true)
			case "chat":
				expect(t, last, "messages.1.tool_calls.0.function.arguments", `["not","an","object"]`)
			}
		})
	}
}
