package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// The fixtures below are streams written from each server's documentation,
// with the exact shapes of their chunks and usage blocks; each names its
// source. They are replayed by the scripted model server, and the test
// reads what darman sends back on the next request.

// chunk wraps a delta in a chat.completion.chunk as the servers send it.
func chunk(model, delta, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-fixture","object":"chat.completion.chunk","created":1762000000,"model":"` + model +
		`","system_fingerprint":"fp_fixture","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}`
}

// toolStream is a tool-call answer: reasoning in field, then one call of
// read with args, as a server streams it.
func toolStream(model, field, reasoning, args, usage string) []string {
	var out []string
	out = append(out, chunk(model, `{"role":"assistant","content":null,"`+field+`":""}`, ""))
	for _, w := range strings.SplitAfter(reasoning, " ") {
		b, _ := json.Marshal(w)
		out = append(out, chunk(model, `{"content":null,"`+field+`":`+string(b)+`}`, ""))
	}
	a, _ := json.Marshal(args)
	out = append(out,
		chunk(model, `{"tool_calls":[{"index":0,"id":"call_00_fixture","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
		chunk(model, `{"tool_calls":[{"index":0,"function":{"arguments":`+string(a)+`}}]}`, ""),
		chunk(model, `{"content":""}`, "tool_calls"))
	if usage != "" {
		out = append(out, `{"id":"chatcmpl-fixture","object":"chat.completion.chunk","created":1762000000,"model":"`+model+`","choices":[],"usage":`+usage+`}`)
	}
	return append(out, "[DONE]")
}

// textStream is a final answer with reasoning.
func textStream(model, field, reasoning, text string) []string {
	r, _ := json.Marshal(reasoning)
	t, _ := json.Marshal(text)
	return []string{
		chunk(model, `{"role":"assistant","content":"","`+field+`":`+string(r)+`}`, ""),
		chunk(model, `{"content":`+string(t)+`}`, ""),
		chunk(model, `{}`, "stop"),
		"[DONE]",
	}
}

// conversation runs: question → tool call → answer → new question, and
// returns the server's record of the second and third calls.
func conversation(t *testing.T, s provider.Settings, model string, steps []llmtest.Step) (*llmtest.Server, []*llmtest.Call) {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Script{Steps: steps})
	if s.BaseURL == "" {
		s.BaseURL = srv.OpenAIURL()
	}
	if s.APIKey == "" {
		s.APIKey = "test-key"
	}
	c := newClient(t, s, fastRetry)
	req := &llm.Request{Model: model, System: system, Tools: tools, Messages: []llm.Message{llm.UserText(question)}}
	first, err := llm.Collect(c.Stream(ctxT(t), req))
	if err != nil {
		t.Fatal(err)
	}
	calls := first.ToolCalls()
	if len(calls) != 1 {
		t.Fatalf("first answer: %+v", first.Message)
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{
		llm.ToolResult{CallID: calls[0].ID, Name: "read", Text: result},
	}})
	second, err := llm.Collect(c.Stream(ctxT(t), req))
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, second.Message, llm.UserText("And now?"))
	if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
		t.Fatal(err)
	}
	mc := srv.ModelCalls()
	if len(mc) != 3 {
		t.Fatalf("server saw %d calls", len(mc))
	}
	return srv, mc
}

// In the follow-up requests the messages are: 0 system, 1 user, 2 the
// assistant's tool call, 3 the tool result, 4 the answer, 5 the new user
// message.
func TestReasoningSentBackPerServer(t *testing.T) {
	const (
		think1 = "The user wants main.go; I will read it."
		think2 = "It is an empty main <function> & nothing else."
		args   = `{"path": "main.go"}`
	)
	for _, tc := range []struct {
		name, provider, model, field string
		// doc is the documentation the fixture and the rule come from.
		doc string
		// wantField is where the reasoning goes back ("" for nowhere);
		// toolTurn/answerTurn say which messages carry it in the call after
		// the answer (call 3).
		wantField            string
		toolTurn, answerTurn bool
		// current: gpt-oss's rule, the reasoning of the tool loop in
		// progress only.
		current bool
	}{
		{name: "DeepSeek", provider: "deepseek", model: "deepseek-v4-pro", field: "reasoning_content",
			doc:       "api-docs.deepseek.com/guides/thinking_mode (tool calls in thinking mode: pass reasoning_content back or the API answers 400)",
			wantField: "reasoning_content", toolTurn: true},
		{name: "GLM", provider: "zai", model: "glm-4.6", field: "reasoning_content",
			doc:       "docs.z.ai/guides/capabilities/thinking-mode (interleaved and preserved thinking)",
			wantField: "reasoning_content", toolTurn: true, answerTurn: true},
		{name: "Kimi", provider: "moonshot", model: "kimi-k2-thinking", field: "reasoning_content",
			doc:       "platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model (keep reasoning_content in the context)",
			wantField: "reasoning_content", toolTurn: true, answerTurn: true},
		{name: "gpt-oss on vLLM", provider: "vllm", model: "openai/gpt-oss-120b", field: "reasoning",
			doc:       "cookbook.openai.com/articles/gpt-oss/handle-raw-cot (Chat Completions: reasoning, kept until the next final answer); docs.vllm.ai reasoning outputs",
			wantField: "reasoning", current: true},
		{name: "gpt-oss on Ollama", provider: "ollama", model: "gpt-oss:20b", field: "reasoning",
			doc:       "cookbook.openai.com/articles/gpt-oss/handle-raw-cot; Ollama streams delta.reasoning",
			wantField: "reasoning", current: true},
		{name: "gpt-oss on llama.cpp", provider: "llamacpp", model: "gpt-oss-20b", field: "reasoning_content",
			doc:       "cookbook.openai.com/articles/gpt-oss/handle-raw-cot; llama.cpp's server reads reasoning_content",
			wantField: "reasoning_content", current: true},
		{name: "Qwen3 on vLLM", provider: "vllm", model: "Qwen/Qwen3-32B", field: "reasoning_content",
			doc: "docs.vllm.ai reasoning outputs: reasoning_content is output only; Qwen3's template drops earlier thinking"},
		{name: "grok on xAI Chat Completions", provider: "xai", model: "grok-3-mini", field: "reasoning_content",
			doc: "docs.x.ai best practices: Chat Completions has no field for the reasoning (darman's xai preset uses Responses)"},
		{name: "Groq", provider: "groq", model: "qwen/qwen3-32b", field: "reasoning",
			doc: "console.groq.com/docs/reasoning: reasoning comes back in the message; Groq answers 400 \"property 'reasoning_content' is unsupported\" to it as input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := provider.Settings{Name: tc.provider}
			if tc.provider == "xai" {
				s.API = provider.APIChat
			}
			_, mc := conversation(t, s, tc.model, []llmtest.Step{
				{Events: toolStream(tc.model, tc.field, think1, args, "")},
				{Events: textStream(tc.model, tc.field, think2, "It holds an empty main function.")},
				{Text: "Nothing more."},
			})
			t.Logf("fixture after %s", tc.doc)
			second, third := mc[1], mc[2]
			for _, f := range []string{"reasoning_content", "reasoning", "reasoning_details"} {
				got := second.Get("messages.2." + f)
				if f != tc.wantField {
					if got.Exists() {
						t.Errorf("call 2 sends messages.2.%s = %s; %s wants it left out", f, got.Raw, tc.provider)
					}
					continue
				}
				if got.String() != think1 {
					t.Errorf("call 2: messages.2.%s = %s, want the tool-call turn's reasoning %q", f, got.Raw, think1)
				}
			}
			if tc.wantField == "" {
				return
			}
			if got := third.Get("messages.2." + tc.wantField); got.Exists() != (tc.toolTurn || tc.answerTurn) {
				t.Errorf("call 3: tool-call turn's %s = %s", tc.wantField, got.Raw)
			}
			if got := third.Get("messages.4." + tc.wantField); got.Exists() != tc.answerTurn {
				t.Errorf("call 3: answer turn's %s = %s", tc.wantField, got.Raw)
			} else if tc.answerTurn && got.String() != think2 {
				t.Errorf("call 3: answer turn's %s = %s, want %q", tc.wantField, got.Raw, think2)
			}
			if tc.current {
				// The loop ended with a final answer: nothing goes back.
				for _, m := range []string{"messages.2.", "messages.4."} {
					if got := third.Get(m + tc.wantField); got.Exists() {
						t.Errorf("call 3: %s%s = %s after the final answer", m, tc.wantField, got.Raw)
					}
				}
			}
		})
	}
}

// DeepSeek answers 400 to a tool-call message without reasoning_content in
// thinking mode, even when the model thought nothing: darman sends it
// empty. (api-docs.deepseek.com/guides/thinking_mode, and the 400 "The
// reasoning_content in the thinking mode must be passed back to the API.")
func TestDeepSeekEmptyReasoningStillSent(t *testing.T) {
	const model = "deepseek-v4-flash"
	_, mc := conversation(t, provider.Settings{Name: "deepseek"}, model, []llmtest.Step{
		{Events: []string{
			chunk(model, `{"role":"assistant","content":null}`, ""),
			chunk(model, `{"tool_calls":[{"index":0,"id":"call_00_x","type":"function","function":{"name":"read","arguments":"{\"path\":\"main.go\"}"}}]}`, ""),
			chunk(model, `{}`, "tool_calls"),
			"[DONE]",
		}},
		{Text: "Done."},
		{Text: "Nothing more."},
	})
	got := mc[1].Get("messages.2.reasoning_content")
	if !got.Exists() || got.String() != "" {
		t.Errorf("messages.2.reasoning_content = %q (exists %v), want an empty string", got.Raw, got.Exists())
	}
	if got := mc[2].Get("messages.4.reasoning_content"); got.Exists() {
		t.Errorf("a turn without tool calls sends reasoning_content %s; DeepSeek ignores it", got.Raw)
	}
}

// A model's configuration replaces the preset's rule.
func TestReasoningReturnOverride(t *testing.T) {
	const model = "my-thinker"
	s := provider.Settings{Name: "vllm", Models: map[string]llm.ModelOverride{
		model: {ReasoningReturn: &llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsToolCalls}},
	}}
	_, mc := conversation(t, s, model, []llmtest.Step{
		{Events: toolStream(model, "reasoning_content", "Think.", `{"path":"main.go"}`, "")},
		{Text: "Done."},
		{Text: "Nothing more."},
	})
	if got := mc[1].Get("messages.2.reasoning_content").String(); got != "Think." {
		t.Errorf("messages.2.reasoning_content = %q", got)
	}

	bad := provider.Settings{Name: "vllm", BaseURL: "http://127.0.0.1:1/v1", Models: map[string]llm.ModelOverride{
		model: {ReasoningReturn: &llm.ReasoningReturn{Field: "thoughts"}},
	}}
	if _, err := provider.New(bad, &provider.Options{LookupEnv: noEnv}); err == nil || !strings.Contains(err.Error(), "reasoning_content") {
		t.Errorf("an unknown field is accepted: %v", err)
	}
}

// Gemini's OpenAI-compatible API sends a thought signature with each
// function call, as tool_calls[i].extra_content.google.thought_signature,
// and Gemini 3 answers 4xx when a call comes back without it
// (ai.google.dev/gemini-api/docs/thought-signatures, "OpenAI
// compatibility"). Its calls arrive whole, without an index.
func TestGeminiThoughtSignaturesGoBack(t *testing.T) {
	const model = "gemini-3-pro-preview"
	extraA := `{"google":{"thought_signature":"<Signature A>"}}`
	_, mc := conversation(t, provider.Settings{Name: "gemini"}, model, []llmtest.Step{
		{Events: []string{
			`{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":` + extraA + `,"function":{"arguments":"{\"path\":\"main.go\"}","name":"read"},"id":"function-call-f3b9ecb3","type":"function"}]},"index":0}],"created":1762000000,"id":"fixture","model":"` + model + `","object":"chat.completion.chunk"}`,
			`{"choices":[{"delta":{"role":"assistant"},"finish_reason":"tool_calls","index":0}],"created":1762000000,"id":"fixture","model":"` + model + `","object":"chat.completion.chunk","usage":{"completion_tokens":20,"prompt_tokens":100,"total_tokens":120}}`,
			"[DONE]",
		}},
		{Text: "Done."},
		{Text: "Nothing more."},
	})
	for _, c := range mc[1:] {
		if got := c.Get("messages.2.tool_calls.0.extra_content").Raw; got != extraA {
			t.Errorf("call %d: extra_content = %s, want %s", c.Step+1, got, extraA)
		}
	}
}
