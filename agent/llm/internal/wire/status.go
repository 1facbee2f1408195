package wire

import (
	"strings"

	"github.com/darman-dev/darman/agent/llm"
)

// KindForStatus classifies an HTTP status when the body says nothing more
// specific.
func KindForStatus(status int) llm.Kind {
	switch {
	case status == 400 || status == 422:
		return llm.ErrBadRequest
	case status == 401:
		return llm.ErrAuth
	case status == 402:
		return llm.ErrBilling
	case status == 403:
		return llm.ErrPermission
	case status == 404:
		return llm.ErrNotFound
	case status == 408:
		return llm.ErrTimeout
	case status == 409:
		return llm.ErrConflict
	case status == 413:
		return llm.ErrContextTooLong
	case status == 429:
		return llm.ErrRateLimited
	case status == 529:
		return llm.ErrOverloaded
	case status >= 500:
		return llm.ErrServer
	}
	return llm.ErrOther
}

// contextTooLongPhrases are what APIs say when the prompt does not fit,
// lower-cased: Anthropic's "prompt is too long", OpenAI's
// context_length_exceeded, and the wording of vLLM, llama.cpp, Ollama and
// OpenRouter.
var contextTooLongPhrases = []string{
	"prompt is too long",
	"context_length_exceeded",
	"context length",
	"context window",
	"maximum context",
	"too many tokens",
	"exceeds the context",
	"exceed_context_size",
	"input is too long",
}

func MentionsContextTooLong(s string) bool {
	s = strings.ToLower(s)
	for _, p := range contextTooLongPhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// MentionsUnknownModel recognises a 404 (or 400) about the model rather
// than the endpoint.
func MentionsUnknownModel(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "model") &&
		(strings.Contains(s, "not found") || strings.Contains(s, "does not exist") ||
			strings.Contains(s, "not exist") || strings.Contains(s, "unknown") ||
			strings.Contains(s, "invalid model") || strings.HasPrefix(s, "model:") ||
			strings.Contains(s, "not a valid model") || strings.Contains(s, "try pulling"))
}

// Truncate shortens s to at most n bytes for an error message.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
