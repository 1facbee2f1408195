package provider_test

import (
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// TestClientReasoningReturn: a client says what its Chat Completions
// requests send back of earlier reasoning, as the preset, the model family
// and the configuration decide; the other APIs' clients name no rule (they
// send everything back in their own fields).
func TestClientReasoningReturn(t *testing.T) {
	configured := llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsAll}
	cases := []struct {
		s     provider.Settings
		model string
		want  llm.ReasoningReturn
	}{
		{provider.Settings{Name: "deepseek", APIKey: "k"}, "deepseek-chat",
			llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsToolCalls}},
		{provider.Settings{Name: "ollama"}, "gpt-oss:20b",
			llm.ReasoningReturn{Field: llm.ReturnReasoning, Turns: llm.TurnsCurrent}},
		{provider.Settings{Name: "ollama", Models: map[string]llm.ModelOverride{"qwen3": {ReasoningReturn: &configured}}},
			"qwen3", configured},
		{provider.Settings{Name: "mistral", APIKey: "k"}, "devstral-medium-latest", llm.ReasoningReturn{}},
		{provider.Settings{Name: "anthropic", APIKey: "k"}, "claude-sonnet-4-5", llm.ReasoningReturn{}},
		{provider.Settings{Name: "openai", APIKey: "k"}, "gpt-5.1", llm.ReasoningReturn{}},
	}
	for _, tc := range cases {
		c, err := provider.New(tc.s, &provider.Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ReasoningReturn(tc.model); got != tc.want {
			t.Errorf("%s/%s: %+v, want %+v", tc.s.Name, tc.model, got, tc.want)
		}
	}
}
