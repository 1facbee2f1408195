package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

func TestNewRefusesIncompleteSettings(t *testing.T) {
	cases := []struct {
		s    provider.Settings
		want string
	}{
		{provider.Settings{}, "a provider needs a name"},
		{provider.Settings{Name: "work"}, `provider "work": darman does not know it; set its type to "anthropic", "openai" or "openai-compatible"`},
		{provider.Settings{Name: "work", Type: "grpc"}, `provider "work": unknown type "grpc"`},
		{provider.Settings{Name: "work", Type: llm.TypeOpenAICompatible}, `provider "work": set its baseURL`},
		{provider.Settings{Name: "ollama", BaseURL: "localhost:11434"}, `provider "ollama": baseURL "localhost:11434" is not an http(s) URL`},
		{provider.Settings{Name: "openai", APIKey: "k", API: "grpc"}, `provider "openai": unknown api "grpc"`},
		{provider.Settings{Name: "anthropic"}, `no API key for Anthropic: set ANTHROPIC_API_KEY or "provider.anthropic.apiKey" in darman's config`},
		{provider.Settings{Name: "openrouter"}, `no API key for OpenRouter: set OPENROUTER_API_KEY`},
	}
	for _, tc := range cases {
		_, err := provider.New(tc.s, &provider.Options{LookupEnv: noEnv})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.s, err, tc.want)
		}
	}
	_, err := provider.New(provider.Settings{Name: "anthropic"}, &provider.Options{LookupEnv: noEnv})
	if !errors.Is(err, llm.ErrMissingKey) {
		t.Errorf("missing key is not ErrMissingKey: %v", err)
	}
}

func TestPresetsAndEnvironment(t *testing.T) {
	cases := []struct {
		s       provider.Settings
		vars    map[string]string
		base    string
		key     string
		display string
	}{
		{provider.Settings{Name: "ollama"}, nil, "http://127.0.0.1:11434/v1", "", "Ollama"},
		{provider.Settings{Name: "ollama"}, map[string]string{"OLLAMA_HOST": "0.0.0.0"}, "http://127.0.0.1:11434/v1", "", "Ollama"},
		{provider.Settings{Name: "ollama"}, map[string]string{"OLLAMA_HOST": "http://gpu-box:8080"}, "http://gpu-box:8080/v1", "", "Ollama"},
		{provider.Settings{Name: "lmstudio"}, nil, "http://127.0.0.1:1234/v1", "", "LM Studio"},
		{provider.Settings{Name: "vllm"}, map[string]string{"VLLM_API_KEY": "v"}, "http://127.0.0.1:8000/v1", "VLLM_API_KEY", "vLLM"},
		{provider.Settings{Name: "llamacpp"}, nil, "http://127.0.0.1:8080/v1", "", "llama.cpp"},
		{provider.Settings{Name: "openrouter"}, map[string]string{"OPENROUTER_API_KEY": "r"}, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "OpenRouter"},
		{provider.Settings{Name: "anthropic", APIKey: "cfg"}, map[string]string{"ANTHROPIC_API_KEY": "env", "ANTHROPIC_BASE_URL": "https://proxy.example/"},
			"https://proxy.example", "provider.anthropic.apiKey", "Anthropic"},
		{provider.Settings{Name: "openai", BaseURL: "https://eu.api.openai.com/v1"}, map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "https://ignored"},
			"https://eu.api.openai.com/v1", "OPENAI_API_KEY", "OpenAI"},
	}
	for _, tc := range cases {
		c, err := provider.New(tc.s, &provider.Options{LookupEnv: env(tc.vars)})
		if err != nil {
			t.Errorf("%s: %v", tc.s.Name, err)
			continue
		}
		if c.BaseURL() != tc.base || c.KeySource() != tc.key || c.DisplayName() != tc.display {
			t.Errorf("%s with %v: base %q key from %q named %q; want %q, %q, %q",
				tc.s.Name, tc.vars, c.BaseURL(), c.KeySource(), c.DisplayName(), tc.base, tc.key, tc.display)
		}
	}
}

func TestHeadersAreSent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}}})
	c := newClient(t, provider.Settings{Name: "openrouter", BaseURL: srv.OpenAIURL(), APIKey: "sk-or",
		Headers: map[string]string{"X-Title": "my editor", "X-Team": "core"}}, fastRetry)
	if _, err := llm.Collect(c.Stream(ctxT(t), ask("hi"))); err != nil {
		t.Fatal(err)
	}
	h := srv.ModelCalls()[0].Header
	if h.Get("Authorization") != "Bearer sk-or" || h.Get("HTTP-Referer") == "" || h.Get("X-Title") != "my editor" || h.Get("X-Team") != "core" {
		t.Errorf("headers %v", h)
	}
}

func TestInvalidRequests(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok"}}})
	c := newClient(t, apis[0].settings(srv), fastRetry)
	user := llm.UserText("hi")
	cases := []struct {
		req  *llm.Request
		want string
	}{
		{nil, "no request"},
		{&llm.Request{Messages: []llm.Message{user}}, "names no model"},
		{&llm.Request{Model: "m"}, "has no messages"},
		{&llm.Request{Model: "m", Messages: []llm.Message{{Role: "system", Parts: []llm.Part{llm.Text{Text: "x"}}}}}, `role "system"`},
		{&llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Image{MediaType: "image/bmp", Data: []byte{1}}}}}}, `"image/bmp"`},
		{&llm.Request{Model: "m", Messages: []llm.Message{user, {Role: llm.RoleTool, Parts: []llm.Part{llm.ToolResult{CallID: "c9"}}}}}, `"c9" answers no earlier tool call`},
		{&llm.Request{Model: "m", Messages: []llm.Message{user}, Tools: []llm.Tool{{Name: "a"}, {Name: "a"}}}, `two tools are named "a"`},
		{&llm.Request{Model: "m", Messages: []llm.Message{user}, Tools: []llm.Tool{{Name: "a", Schema: []byte(`[1]`)}}}, "schema is not a JSON object"},
		{&llm.Request{Model: "m", Messages: []llm.Message{user}, MaxOutputTokens: -1}, "MaxOutputTokens is -1"},
		{&llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{nil}}}}, "nil part"},
	}
	for _, tc := range cases {
		_, err := drain(c.Stream(ctxT(t), tc.req))
		if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want a bad request about %q", err, tc.want)
		}
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d invalid requests reached the server", n)
	}
}

func TestListModels(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Models: []string{"a", "b"}})
	for _, api := range apis {
		c := newClient(t, api.settings(srv), fastRetry)
		ids, err := c.ListModels(ctxT(t))
		if err != nil || strings.Join(ids, ",") != "a,b" {
			t.Errorf("%s: %v %v", api.name, ids, err)
		}
	}
}
