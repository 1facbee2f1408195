package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// OpenRouter streams reasoning_details in fragments that share an index
// (openrouter.ai/docs/use-cases/reasoning-tokens, "Streaming" and
// "Preserving reasoning"; format anthropic-claude-v1 for Claude, with the
// signature in the last fragment). darman joins them and sends the array
// back unchanged.
func TestOpenRouterReasoningDetailsRoundTrip(t *testing.T) {
	const model = "anthropic/claude-sonnet-4.6"
	or := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"gen-1762000000-fixture","provider":"Anthropic","model":"` + model +
			`","object":"chat.completion.chunk","created":1762000000,"choices":[{"index":0,"delta":` + delta +
			`,"finish_reason":` + f + `,"native_finish_reason":` + f + `,"logprobs":null}]}`
	}
	const sig = "EqQBCkgIBxABGAIqQKzq+9x3/sig=="
	events := []string{
		or(`{"role":"assistant","content":"","reasoning":null,"reasoning_details":[]}`, ""),
		or(`{"role":"assistant","content":"","reasoning":"I should","reasoning_details":[{"type":"reasoning.text","text":"I should","signature":null,"format":"anthropic-claude-v1","index":0}]}`, ""),
		or(`{"role":"assistant","content":"","reasoning":" read <main.go> & see.","reasoning_details":[{"type":"reasoning.text","text":" read <main.go> & see.","format":"anthropic-claude-v1","index":0}]}`, ""),
		or(`{"role":"assistant","content":"","reasoning":"","reasoning_details":[{"type":"reasoning.text","signature":"`+sig+`","format":"anthropic-claude-v1","index":0}]}`, ""),
		or(`{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"toolu_01fixture","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
		or(`{"role":"assistant","content":"","tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"main.go\"}"}}]}`, ""),
		or(`{"role":"assistant","content":""}`, "tool_calls"),
		`{"id":"gen-1762000000-fixture","provider":"Anthropic","model":"` + model + `","object":"chat.completion.chunk","created":1762000000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":1200,"completion_tokens":80,"total_tokens":1280,"cost":0.0048,"prompt_tokens_details":{"cached_tokens":1000},"completion_tokens_details":{"reasoning_tokens":40}}}`,
		"[DONE]",
	}
	want := `[{"type":"reasoning.text","text":"I should read <main.go> & see.","signature":"` + sig + `","format":"anthropic-claude-v1","index":0}]`

	_, mc := conversation(t, provider.Settings{Name: "openrouter"}, model, []llmtest.Step{
		{Events: events},
		{Text: "It is empty."},
		{Text: "Nothing more."},
	})
	for i, c := range mc[1:] {
		got := c.Get("messages.2.reasoning_details")
		if got.Raw != want {
			t.Errorf("call %d: messages.2.reasoning_details =\n%s\nwant\n%s", i+2, got.Raw, want)
		}
		if r := c.Get("messages.2.reasoning"); r.Exists() {
			t.Errorf("call %d: the text goes back too, as reasoning = %s", i+2, r.Raw)
		}
	}
	// The bytes in the request body, not only the parsed value.
	if !strings.Contains(string(mc[1].Body), `"reasoning_details":`+want) {
		t.Errorf("the body does not hold the details verbatim:\n%s", mc[1].Body)
	}
}

// Details kept in a conversation (as darman's store gives them back) go
// out exactly as stored, whatever their spacing and characters.
func TestReasoningDetailsSentVerbatim(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}, {Text: "ok"}}})
	c := newClient(t, provider.Settings{Name: "openrouter", BaseURL: srv.OpenAIURL(), APIKey: "k"}, fastRetry)
	details := `[ {"type": "reasoning.encrypted", "data": "gAAAA<&>==", "id": "rs_1", "format": "openai-responses-v1", "index": 0} ]`
	req := &llm.Request{Model: "openai/gpt-5", Tools: tools, Messages: []llm.Message{
		llm.UserText(question),
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Reasoning{Origin: "openai-chat", Details: details},
			llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{llm.ToolResult{CallID: "c1", Name: "read", Text: result}}},
	}}
	if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
		t.Fatal(err)
	}
	body := string(srv.ModelCalls()[0].Body)
	if !strings.Contains(body, `"reasoning_details":`+details) {
		t.Errorf("details changed on the way:\n%s", body)
	}
}

// Tool-call arguments go back as the model wrote them, spaces and all:
// prompt caches key on the exact bytes.
func TestArgumentsRoundTripByteForByte(t *testing.T) {
	const args = `{"pattern": "*.go",  "path": "<src> & more", "n": 1.50}`
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
				{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "read", Arguments: json.RawMessage(args), Chunks: 5}}},
				{Text: "Done."},
			}})
			c := newClient(t, api.settings(srv), fastRetry)
			req := &llm.Request{Model: "test-model", Tools: tools, Messages: []llm.Message{llm.UserText(question)}}
			first, err := llm.Collect(c.Stream(ctxT(t), req))
			if err != nil {
				t.Fatal(err)
			}
			calls := first.ToolCalls()
			if len(calls) != 1 || string(calls[0].Arguments) != args {
				t.Fatalf("arguments as received: %q", calls[0].Arguments)
			}
			req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool,
				Parts: []llm.Part{llm.ToolResult{CallID: calls[0].ID, Name: "read", Text: result}}})
			if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
				t.Fatal(err)
			}
			second := srv.ModelCalls()[1]
			var got string
			switch api.api {
			case llmtest.APIAnthropic:
				got = second.Get("messages.1.content.0.input").Raw
			case llmtest.APIChat:
				got = second.Get("messages.1.tool_calls.0.function.arguments").String()
			case llmtest.APIResponses:
				got = second.Get(`input.#(type=="function_call").arguments`).String()
			}
			if got != args {
				t.Errorf("sent back %s\nwant       %s", got, args)
			}
		})
	}
}
