package openai

import (
	"net/url"
	"strings"

	"github.com/darman-dev/darman/agent/llm/internal/wire"
)

// azureAPIVersion is the api-version darman sends Azure OpenAI when none
// is configured: the latest GA version of the data-plane API.
const azureAPIVersion = "2024-10-21"

// Azure adapts t to Azure OpenAI's Chat Completions and returns the
// options of its chat wire: t's base URL is the resource's endpoint
// (https://NAME.openai.azure.com), a model id is a deployment name,
// requests go to /openai/deployments/{deployment}/chat/completions?api-version=V
// with the key in an api-key header. With api-version "v1" they go to
// Azure's v1 API, /openai/v1/chat/completions, the deployment named in the
// body. An empty version means 2024-10-21.
func Azure(t *wire.Transport, version string) Chat {
	if version == "" {
		version = azureAPIVersion
	}
	endpoint := strings.TrimSuffix(strings.TrimSuffix(t.BaseURL, "/openai/v1"), "/openai")
	var o Chat
	if t.Key != "" {
		o.Header = map[string]string{"api-key": t.Key}
	}
	// The key travels as api-key only, never as a bearer token.
	t.Key = ""
	if version == "v1" {
		t.BaseURL = endpoint + "/openai/v1"
		return o
	}
	t.BaseURL = endpoint + "/openai"
	o.Query = url.Values{"api-version": {version}}
	o.Path = func(model string) string {
		return "deployments/" + url.PathEscape(model) + "/chat/completions"
	}
	return o
}
