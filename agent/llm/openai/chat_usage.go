package openai

import (
	"github.com/darman-dev/darman/agent/llm"
	"github.com/tidwall/gjson"
)

// chatUsage reads a Chat Completions usage block. OpenAI's prompt_tokens
// include the cached tokens (prompt_tokens_details.cached_tokens); some
// compatible servers count them apart, so that total_tokens is prompt +
// completion + cached. Subtracting the cached tokens from such a
// prompt_tokens would count a 704-token prompt with 7,872 cached as no
// input at all. total_tokens tells the two apart when the server sends it
// and it adds up one way only; otherwise cachedApart (the preset's
// convention) decides.
//
// Cached counts are read where each server puts them:
// prompt_tokens_details.cached_tokens (OpenAI, OpenRouter, GLM, most),
// prompt_cache_hit_tokens (DeepSeek), cached_tokens (Moonshot).
func chatUsage(u gjson.Result, cachedApart bool) llm.Usage {
	prompt := int(u.Get("prompt_tokens").Int())
	completion := int(u.Get("completion_tokens").Int())
	cached := int(u.Get("prompt_tokens_details.cached_tokens").Int())
	if cached == 0 {
		cached = int(u.Get("prompt_cache_hit_tokens").Int())
	}
	if cached == 0 {
		cached = int(u.Get("cached_tokens").Int())
	}
	written := int(u.Get("prompt_tokens_details.cache_write_tokens").Int())
	if total := u.Get("total_tokens"); total.Exists() && cached+written > 0 {
		t := int(total.Int())
		switch {
		case t == prompt+completion+cached+written && t != prompt+completion:
			cachedApart = true
		case t == prompt+completion:
			cachedApart = false
		}
	}
	input := prompt
	if !cachedApart {
		input = max(prompt-cached-written, 0)
	}
	out := llm.Usage{
		Input:      input,
		Output:     completion,
		CacheRead:  cached,
		CacheWrite: written,
		Reasoning:  int(u.Get("completion_tokens_details.reasoning_tokens").Int()),
	}
	// Gemini's OpenAI-compatible API leaves the thinking out of
	// completion_tokens and counts it in total_tokens only
	// (discuss.ai.google.dev/t/question-with-usage-in-openai-compatibility/98760:
	// the total includes input, output and thinking). Output counts the
	// thinking, as it is billed.
	if total := u.Get("total_tokens"); total.Exists() && !u.Get("completion_tokens_details.reasoning_tokens").Exists() {
		counted := prompt + completion
		if cachedApart {
			counted += cached + written
		}
		if extra := int(total.Int()) - counted; extra > 0 {
			out.Output += extra
			out.Reasoning = extra
		}
	}
	return out
}
