package client_test

import (
	"context"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/mcp/client"
)

// A server's sampling request is answered by darman's model through
// agent/llm, capped at the server's budget and charged to it.
func TestModelSamplerServesSampling(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hello from the model", Usage: &llmtest.Usage{Input: 21, Output: 4}}}})
	p, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sampler := client.ModelSampler{Model: func(context.Context) (llm.Provider, string, string, error) {
		return p, "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", nil
	}}
	d := fake(t, "s", "ok")
	d.SamplingMaxTokens = 64
	m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Sampler: sampler})
	defer m.Close()
	if got := callText(t, m, "s_sample"); got != "anthropic/claude-sonnet-4-5: hello from the model" {
		t.Errorf("sample = %q", got)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls; want 1", len(calls))
	}
	c := calls[0]
	if c.Get("max_tokens").Int() != 64 || c.Get("system").String() == "" || c.Get("messages.0.content").String() == "" {
		t.Errorf("the model got %s; want max_tokens 64 (the server asked 5000), its system prompt and message", c.Body)
	}
	if got := m.Status()[0].Sampling; got != (client.SamplingUsage{Requests: 1, InputTokens: 21, OutputTokens: 4}) {
		t.Errorf("sampling usage = %+v; want the model's usage charged to s", got)
	}
}
