package llm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// presetShape is what one preset's request looks like on the wire.
type presetShape struct {
	// model is the model id asked for.
	model string
	// settings adds to {Name, BaseURL, APIKey: "test-key"}.
	settings func(s *provider.Settings)
	// base is the base URL for the scripted server: "anthropic" (srv.URL)
	// or "openai" (srv.OpenAIURL()).
	base string
	// defaultURL is the preset's own address.
	defaultURL string
	// path is the request's path (and query).
	path string
	// header and value: the authorisation; absent lists headers that must
	// not be sent.
	header, value string
	absent        []string
	// fields are gjson paths of the body that must exist; missing those
	// that must not.
	fields, missing []string
	// also checks more.
	also func(t *testing.T, c *llmtest.Call)
}

var chatFields = []string{"model", "messages", "stream", "stream_options.include_usage", "max_tokens"}

var presetShapes = map[string]presetShape{
	"anthropic": {model: "claude-sonnet-4-6", base: "anthropic", defaultURL: "https://api.anthropic.com",
		// The SDK's WithAPIKey sends the key as a bearer token.
		path: "/v1/messages", header: "Authorization", value: "Bearer test-key",
		fields: []string{"model", "max_tokens", "stream", "system.0.cache_control"}},
	"openai": {model: "gpt-5.1", base: "openai", defaultURL: "https://api.openai.com/v1",
		path: "/v1/responses", header: "Authorization", value: "Bearer test-key",
		fields: []string{"model", "input", "store", "include"}},
	"openrouter": {model: "anthropic/claude-sonnet-4.6", base: "openai", defaultURL: "https://openrouter.ai/api/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields,
		also: func(t *testing.T, c *llmtest.Call) {
			if c.Header.Get("HTTP-Referer") == "" || c.Header.Get("X-Title") != "darman" {
				t.Errorf("attribution headers: %v", c.Header)
			}
		}},
	"deepseek": {model: "deepseek-chat", base: "openai", defaultURL: "https://api.deepseek.com",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"zai": {model: "glm-4.6", base: "openai", defaultURL: "https://api.z.ai/api/paas/v4",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"moonshot": {model: "kimi-k2.5", base: "openai", defaultURL: "https://api.moonshot.ai/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"mistral": {model: "devstral-medium-latest", base: "openai", defaultURL: "https://api.mistral.ai/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key",
		fields: []string{"model", "messages", "stream"}, missing: []string{"stream_options"}},
	"codestral": {model: "codestral-latest", base: "openai", defaultURL: "https://codestral.mistral.ai/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key",
		fields: []string{"model", "messages", "stream"}, missing: []string{"stream_options"}},
	"groq": {model: "openai/gpt-oss-120b", base: "openai", defaultURL: "https://api.groq.com/openai/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"together": {model: "openai/gpt-oss-120b", base: "openai", defaultURL: "https://api.together.xyz/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"fireworks": {model: "accounts/fireworks/models/gpt-oss-120b", base: "openai", defaultURL: "https://api.fireworks.ai/inference/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"xai": {model: "grok-4", base: "openai", defaultURL: "https://api.x.ai/v1",
		path: "/v1/responses", header: "Authorization", value: "Bearer test-key",
		fields: []string{"model", "input", "store", "include"}},
	"gemini": {model: "gemini-2.5-pro", base: "openai", defaultURL: "https://generativelanguage.googleapis.com/v1beta/openai",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"azure": {model: "my-gpt-4o", base: "anthropic",
		path: "/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21", header: "Api-Key", value: "test-key",
		absent: []string{"Authorization"}, fields: []string{"model", "messages", "stream", "max_completion_tokens"}},
	"bedrock": {model: "anthropic.claude-sonnet-4-5-20250929-v1:0", base: "anthropic",
		defaultURL: "https://bedrock-runtime.us-west-2.amazonaws.com",
		settings:   func(s *provider.Settings) { s.Region = "us-west-2" },
		path:       "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
		header:     "Authorization", value: "Bearer test-key", absent: []string{"X-Api-Key", "Anthropic-Version"},
		fields: []string{"anthropic_version", "max_tokens", "messages"}, missing: []string{"model", "stream"}},
	"vertex": {model: "claude-sonnet-4-5@20250929", base: "anthropic",
		defaultURL: "https://us-east5-aiplatform.googleapis.com",
		settings:   func(s *provider.Settings) { s.Region, s.Project = "us-east5", "my-project" },
		path:       "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
		header:     "Authorization", value: "Bearer test-key", absent: []string{"X-Api-Key", "Anthropic-Version"},
		fields: []string{"max_tokens", "messages", "stream"}, missing: []string{"model"},
		also: func(t *testing.T, c *llmtest.Call) {
			if v := c.Get("anthropic_version").String(); v != "vertex-2023-10-16" {
				t.Errorf("anthropic_version %q", v)
			}
		}},
	"ollama": {model: "qwen3:8b", base: "openai", defaultURL: "http://127.0.0.1:11434/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"lmstudio": {model: "qwen3-8b", base: "openai", defaultURL: "http://127.0.0.1:1234/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"vllm": {model: "Qwen/Qwen3-32B", base: "openai", defaultURL: "http://127.0.0.1:8000/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
	"llamacpp": {model: "any", base: "openai", defaultURL: "http://127.0.0.1:8080/v1",
		path: "/v1/chat/completions", header: "Authorization", value: "Bearer test-key", fields: chatFields},
}

// Every preset sends its requests to the path, with the authorisation and
// the body fields its API documents.
func TestPresetRequestShapes(t *testing.T) {
	for _, name := range provider.PresetNames() {
		shape, ok := presetShapes[name]
		if !ok {
			t.Errorf("preset %s has no request-shape test", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			// The default address, before any is configured.
			if shape.defaultURL != "" {
				s := provider.Settings{Name: name, APIKey: "test-key"}
				if shape.settings != nil {
					shape.settings(&s)
				}
				c, err := provider.New(s, &provider.Options{LookupEnv: noEnv})
				if err != nil {
					t.Fatal(err)
				}
				if c.BaseURL() != shape.defaultURL {
					t.Errorf("default base URL %s, want %s", c.BaseURL(), shape.defaultURL)
				}
			}

			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "OK"}}})
			s := provider.Settings{Name: name, APIKey: "test-key", BaseURL: srv.OpenAIURL()}
			if shape.base == "anthropic" {
				s.BaseURL = srv.URL
			}
			if shape.settings != nil {
				shape.settings(&s)
			}
			c := newClient(t, s, fastRetry)
			req := &llm.Request{Model: shape.model, System: system, Tools: tools, MaxOutputTokens: 1000,
				Messages: []llm.Message{llm.UserText(question)}}
			r, err := llm.Collect(c.Stream(ctxT(t), req))
			if err != nil {
				t.Fatal(err)
			}
			if r.Text() != "OK" {
				t.Errorf("answer %q", r.Text())
			}
			calls := srv.ModelCalls()
			if len(calls) != 1 {
				t.Fatalf("%d calls", len(calls))
			}
			call := calls[0]
			path := call.Path
			if q := call.Query; q != "" {
				path += "?" + q
			}
			if path != shape.path {
				t.Errorf("path %s, want %s", path, shape.path)
			}
			if got := call.Header.Get(shape.header); got != shape.value {
				t.Errorf("%s: %q, want %q", shape.header, got, shape.value)
			}
			for _, h := range shape.absent {
				if v := call.Header.Get(h); v != "" {
					t.Errorf("header %s: %q is sent", h, v)
				}
			}
			for _, f := range shape.fields {
				if !call.Get(f).Exists() {
					t.Errorf("body has no %s: %s", f, call.Body)
				}
			}
			for _, f := range shape.missing {
				if v := call.Get(f); v.Exists() {
					t.Errorf("body has %s = %s", f, v.Raw)
				}
			}
			if shape.also != nil {
				shape.also(t, call)
			}
		})
	}
}

// Every preset with models of its own lists them, with limits, and doctor's
// description of it says what it sends back.
func TestPresetCatalogs(t *testing.T) {
	infos := provider.Presets()
	if len(infos) != len(provider.PresetNames()) {
		t.Fatalf("%d presets described, %d named", len(infos), len(provider.PresetNames()))
	}
	own := []string{"deepseek", "zai", "moonshot", "mistral", "codestral", "groq", "together", "fireworks", "xai", "gemini", "bedrock", "vertex"}
	for _, p := range infos {
		if p.Reasoning == "" || p.Usage == "" || p.Auth == "" || p.API == "" {
			t.Errorf("%s: incomplete description %+v", p.Name, p)
		}
		if !slices.Contains(own, p.Name) {
			continue
		}
		if len(p.Models) == 0 {
			t.Errorf("%s: no catalog entries", p.Name)
			continue
		}
		c, err := provider.New(provider.Settings{Name: p.Name, APIKey: "k", BaseURL: "http://127.0.0.1:1", Region: "us-east-1", Project: "p"},
			&provider.Options{LookupEnv: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range p.Models {
			m := c.Model(id)
			if !m.Known || m.ContextWindow == 0 || m.MaxOutput == 0 {
				t.Errorf("%s/%s: %+v", p.Name, id, m)
			}
		}
	}
	for name, want := range map[string]string{
		"deepseek":   "reasoning_content sent back with tool-call turns",
		"openrouter": "reasoning_details sent back unchanged",
		"mistral":    "not sent back",
	} {
		for _, p := range infos {
			if p.Name == name && !strings.Contains(p.Reasoning, want) {
				t.Errorf("%s: %q", name, p.Reasoning)
			}
		}
	}
	// A Claude id of either cloud finds Anthropic's entry.
	c, err := provider.New(provider.Settings{Name: "bedrock", APIKey: "k", Region: "eu-west-1"}, &provider.Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Model("eu.anthropic.claude-haiku-4-5-20251001-v1:0"); !m.Known || m.Cost.Input != 1 {
		t.Errorf("cross-region Bedrock id: %+v", m)
	}
}

// Azure's v1 API takes the deployment in the body, not the path.
func TestAzureV1(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "OK"}}})
	c := newClient(t, provider.Settings{Name: "azure", BaseURL: srv.URL, APIKey: "test-key", APIVersion: "v1"}, fastRetry)
	if _, err := llm.Collect(c.Stream(ctxT(t), ask("hi"))); err != nil {
		t.Fatal(err)
	}
	call := srv.ModelCalls()[0]
	if call.Path != "/openai/v1/chat/completions" || call.Query != "" || call.Header.Get("Api-Key") != "test-key" {
		t.Errorf("path %s?%s, api-key %q", call.Path, call.Query, call.Header.Get("Api-Key"))
	}
	if _, err := provider.New(provider.Settings{Name: "azure", APIKey: "k"}, &provider.Options{LookupEnv: noEnv}); err == nil ||
		!strings.Contains(err.Error(), "baseURL") {
		t.Errorf("azure without an endpoint: %v", err)
	}
}
