package provider

import (
	"net/url"
	"strings"

	"github.com/darman-dev/darman/agent/llm/internal/wire"

	"github.com/darman-dev/darman/agent/llm"
)

// azureAPIVersion is the api-version darman sends Azure OpenAI when none
// is configured: the latest GA version of the data-plane API.
const azureAPIVersion = "2024-10-21"

// azure sets up Azure OpenAI's Chat Completions: the base URL is the
// resource's endpoint (https://NAME.openai.azure.com), a model id is a
// deployment name, requests go to
// /openai/deployments/{deployment}/chat/completions?api-version=V with the
// key in an api-key header. With api-version "v1" they go to Azure's v1
// API, /openai/v1/chat/completions, the deployment named in the body.
func azure(c *llm.Config, t *wire.Transport, s Settings, lookup func(string) (string, bool)) (chatOptions, error) {
	version := s.APIVersion
	if version == "" {
		if v, ok := lookup("AZURE_OPENAI_API_VERSION"); ok && v != "" {
			version = v
		}
	}
	if version == "" {
		version = azureAPIVersion
	}
	endpoint := strings.TrimSuffix(strings.TrimSuffix(t.BaseURL, "/openai/v1"), "/openai")
	var o chatOptions
	if t.Key != "" {
		o.header = map[string]string{"api-key": t.Key}
	}
	// The key travels as api-key only, never as a bearer token.
	t.Key = ""
	if version == "v1" {
		t.BaseURL = endpoint + "/openai/v1"
		c.BaseURL = t.BaseURL
		return o, nil
	}
	t.BaseURL = endpoint + "/openai"
	o.query = url.Values{"api-version": {version}}
	o.path = func(model string) string {
		return "deployments/" + url.PathEscape(model) + "/chat/completions"
	}
	c.BaseURL = t.BaseURL
	return o, nil
}
