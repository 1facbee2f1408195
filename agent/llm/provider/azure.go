package provider

import (
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/darman-dev/darman/agent/llm/openai"
)

// azure sets up Azure OpenAI's Chat Completions (openai.Azure) with the
// configured api-version, else AZURE_OPENAI_API_VERSION.
func azure(c *llm.Config, t *wire.Transport, s Settings, lookup func(string) (string, bool)) openai.Chat {
	version := s.APIVersion
	if version == "" {
		if v, ok := lookup("AZURE_OPENAI_API_VERSION"); ok && v != "" {
			version = v
		}
	}
	o := openai.Azure(t, version)
	c.BaseURL = t.BaseURL
	return o
}
