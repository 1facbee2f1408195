package llm_test

import (
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// Usage blocks as servers document them. OpenAI's prompt_tokens include
// the cached tokens (platform.openai.com/docs/guides/prompt-caching: "usage":
// {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
// "prompt_tokens_details": {"cached_tokens": 1920}}); DeepSeek adds
// prompt_cache_hit_tokens and prompt_cache_miss_tokens, which sum to
// prompt_tokens (api-docs.deepseek.com/api/create-chat-completion); Moonshot
// reports cached_tokens at the top of the block. Some servers count the
// cached tokens apart instead, so that total = prompt + completion + cached.
func TestUsageCachedTokenConventions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings provider.Settings
		usage    string
		want     llm.Usage
	}{
		{"OpenAI convention, from total_tokens", provider.Settings{Name: "vllm"},
			`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":0}}`,
			llm.Usage{Input: 86, Output: 300, CacheRead: 1920}},
		{"cached apart, from total_tokens", provider.Settings{Name: "vllm"},
			`{"prompt_tokens":704,"completion_tokens":120,"total_tokens":8696,"prompt_tokens_details":{"cached_tokens":7872}}`,
			llm.Usage{Input: 704, Output: 120, CacheRead: 7872}},
		{"cached apart, total_tokens wins over the setting", provider.Settings{Name: "vllm", CachedTokens: provider.CachedIncluded},
			`{"prompt_tokens":704,"completion_tokens":120,"total_tokens":8696,"prompt_tokens_details":{"cached_tokens":7872}}`,
			llm.Usage{Input: 704, Output: 120, CacheRead: 7872}},
		{"no total_tokens: included by default", provider.Settings{Name: "vllm"},
			`{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}`,
			llm.Usage{Input: 86, Output: 300, CacheRead: 1920}},
		{"no total_tokens: separate by configuration", provider.Settings{Name: "vllm", CachedTokens: provider.CachedSeparate},
			`{"prompt_tokens":704,"completion_tokens":120,"prompt_tokens_details":{"cached_tokens":7872}}`,
			llm.Usage{Input: 704, Output: 120, CacheRead: 7872}},
		{"DeepSeek", provider.Settings{Name: "deepseek"},
			`{"prompt_tokens":1500,"completion_tokens":200,"total_tokens":1700,"prompt_tokens_details":{"cached_tokens":1024},"prompt_cache_hit_tokens":1024,"prompt_cache_miss_tokens":476,"completion_tokens_details":{"reasoning_tokens":150}}`,
			llm.Usage{Input: 476, Output: 200, CacheRead: 1024, Reasoning: 150}},
		{"DeepSeek without the details object", provider.Settings{Name: "deepseek"},
			`{"prompt_tokens":1500,"completion_tokens":200,"total_tokens":1700,"prompt_cache_hit_tokens":1024,"prompt_cache_miss_tokens":476}`,
			llm.Usage{Input: 476, Output: 200, CacheRead: 1024}},
		{"Gemini: thinking only in total_tokens", provider.Settings{Name: "gemini"},
			// discuss.ai.google.dev/t/question-with-usage-in-openai-compatibility/98760
			`{"completion_tokens":102,"prompt_tokens":758,"total_tokens":1725}`,
			llm.Usage{Input: 758, Output: 102 + 865, Reasoning: 865}},
		{"Moonshot", provider.Settings{Name: "moonshot"},
			`{"prompt_tokens":900,"completion_tokens":50,"total_tokens":950,"cached_tokens":512}`,
			llm.Usage{Input: 388, Output: 50, CacheRead: 512}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const model = "m"
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Events: []string{
				chunk(model, `{"role":"assistant","content":"ok"}`, ""),
				chunk(model, `{}`, "stop"),
				`{"id":"chatcmpl-fixture","object":"chat.completion.chunk","created":1762000000,"model":"m","choices":[],"usage":` + tc.usage + `}`,
				"[DONE]",
			}}}})
			s := tc.settings
			s.BaseURL, s.APIKey = srv.OpenAIURL(), "k"
			r, err := llm.Collect(newClient(t, s, fastRetry).Stream(ctxT(t), ask("hi")))
			if err != nil {
				t.Fatal(err)
			}
			if r.Usage != tc.want {
				t.Errorf("usage %+v, want %+v", r.Usage, tc.want)
			}
			if got := r.Usage.ContextTokens(); tc.name == "cached apart, from total_tokens" && got != 704+7872 {
				t.Errorf("context fill %d, want %d", got, 704+7872)
			}
		})
	}
}
