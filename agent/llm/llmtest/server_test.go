package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func anthropicClient(srv *llmtest.Server) anthropic.Client {
	return anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL+"/"),
		aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
}

func openAIClient(srv *llmtest.Server) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(srv.OpenAIURL()+"/"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
}

// The non-streamed answers are read by the SDKs' own decoders.
func TestNonStreamedAnswersReadByTheSDKs(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{
		Reasoning: "hm", Text: "Hello there.",
		ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"x"}`)}},
		Usage:     &llmtest.Usage{Input: 10, Output: 5, CacheRead: 3},
	}}})
	ctx := context.Background()

	ac := anthropicClient(srv)
	msg, err := ac.Messages.New(ctx, anthropic.MessageNewParams{
		Model: "m", MaxTokens: 100, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Type != "thinking" || msg.Content[1].Text != "Hello there." ||
		msg.Content[2].Name != "read" || msg.Content[2].ID != "c1" || msg.StopReason != "tool_use" || msg.Usage.CacheReadInputTokens != 3 {
		t.Errorf("anthropic message: %+v", msg)
	}

	oc := openAIClient(srv)
	cc, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := cc.Choices[0]
	if ch.Message.Content != "Hello there." || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"path":"x"}` || cc.Usage.PromptTokens != 10 {
		t.Errorf("chat completion: %+v", cc)
	}

	r, err := oc.Responses.New(ctx, responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() != "Hello there." || len(r.Output) != 3 || r.Output[2].Name != "read" || r.Usage.OutputTokens != 5 {
		t.Errorf("response: %+v", r)
	}
}

func TestStepsFollowEachConversation(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{
		Steps: []llmtest.Step{{Text: "default 0"}, {Text: "default 1"}},
		Conversations: []llmtest.Conversation{
			{Match: "refactor", Steps: []llmtest.Step{{Text: "refactor 0"}, {Text: "refactor 1"}}},
		},
	})
	oc := openAIClient(srv)
	ask := func(first string, history ...string) string {
		msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(first)}
		for _, h := range history {
			msgs = append(msgs, openai.AssistantMessage(h), openai.UserMessage("go on"))
		}
		cc, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		return cc.Choices[0].Message.Content
	}
	if got := ask("please refactor this"); got != "refactor 0" {
		t.Errorf("got %q", got)
	}
	if got := ask("what time is it"); got != "default 0" {
		t.Errorf("got %q", got)
	}
	if got := ask("please refactor this", "refactor 0"); got != "refactor 1" {
		t.Errorf("got %q", got)
	}
	if got := ask("what time is it", "default 0"); got != "default 1" {
		t.Errorf("got %q", got)
	}
	// A conversation longer than its script gets a clear 400.
	_, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x"), openai.AssistantMessage("a"),
			openai.UserMessage("y"), openai.AssistantMessage("b"), openai.UserMessage("z")}})
	var aerr *openai.Error
	if !errors.As(err, &aerr) || aerr.StatusCode != 400 || !strings.Contains(aerr.Message, "the script has 2 steps for this conversation, and this is call 3") {
		t.Errorf("err = %v", err)
	}
	calls := srv.ModelCalls()
	if calls[2].Step != 1 || calls[2].Conversation != "please refactor this" || calls[2].Attempt != 0 {
		t.Errorf("call record %+v", calls[2])
	}
}

func TestFaultsHitAttemptsInOrder(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok", Faults: []llmtest.Fault{
		{Kind: llmtest.FaultStatus, Status: 503, Times: 2},
		{Kind: llmtest.FaultStatus, Status: 429, RetryAfter: "7"},
	}}}})
	var statuses []int
	for range 4 {
		res, err := http.Post(srv.OpenAIURL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
		if res.StatusCode == 429 && res.Header.Get("Retry-After") != "7" {
			t.Errorf("retry-after %q", res.Header.Get("Retry-After"))
		}
	}
	if want := []int{503, 503, 429, 200}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
}

func TestParseScript(t *testing.T) {
	s, err := llmtest.ParseScript([]byte(`{
		"models": ["qwen3:8b"],
		"steps": [
			{"reasoning": "plan", "text": "hello", "chunks": 2, "delay": "5ms",
			 "toolCalls": [{"name": "read", "arguments": {"path": "a"}}],
			 "faults": [{"kind": "status", "status": 529, "times": 1}]}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Steps[0]
	if st.Delay != llmtest.Duration(5*time.Millisecond) || st.ToolCalls[0].Name != "read" || st.Faults[0].Status != 529 {
		t.Errorf("%+v", st)
	}
	for _, bad := range []struct{ json, want string }{
		{`{"stepz": []}`, `unknown field "stepz"`},
		{`{"steps": [{"faults": [{"kind": "explode"}]}]}`, `unknown kind "explode"`},
		{`{"steps": [{"faults": [{"kind": "status", "status": 200}]}]}`, "status 200 is not an error status"},
		{`{"steps": [{"toolCalls": [{"arguments": {}}]}]}`, "has no name"},
		{`{"steps": [{"delay": "soon"}]}`, `invalid duration "soon"`},
	} {
		if _, err := llmtest.ParseScript([]byte(bad.json)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseScript(%s) = %v, want %q", bad.json, err, bad.want)
		}
	}
}

func TestControlEndpoints(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "first"}}})
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/llmtest/script", strings.NewReader(`{"steps":[{"text":"second"}]}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT script: %v %v", err, res.Status)
	}
	oc := openAIClient(srv)
	cc, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil || cc.Choices[0].Message.Content != "second" {
		t.Fatalf("%v %+v", err, cc)
	}
	res, err = http.Get(srv.URL + "/llmtest/calls")
	if err != nil {
		t.Fatal(err)
	}
	var calls []struct {
		API  string          `json:"api"`
		Body json.RawMessage `json:"body"`
		Step int             `json:"step"`
	}
	json.NewDecoder(res.Body).Decode(&calls)
	res.Body.Close()
	if len(calls) != 1 || calls[0].API != "chat" || !strings.Contains(string(calls[0].Body), `"content":"hi"`) {
		t.Errorf("calls %+v", calls)
	}
}

func TestModelsList(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Models: []string{"a", "b"}})
	oc := openAIClient(srv)
	page, err := oc.Models.List(context.Background())
	if err != nil || len(page.Data) != 2 || page.Data[1].ID != "b" {
		t.Errorf("openai: %v %+v", err, page)
	}
	ac := anthropicClient(srv)
	ap, err := ac.Models.List(context.Background(), anthropic.ModelListParams{})
	if err != nil || len(ap.Data) != 2 || ap.Data[0].ID != "a" {
		t.Errorf("anthropic: %v %+v", err, ap)
	}
}
