package provider

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/anthropic"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/darman-dev/darman/agent/llm/openai"
)

// API names for [Settings.API].
const (
	APIResponses = "responses"
	APIChat      = "chat"
)

// Settings configure one provider. They mirror the provider section of
// darman's config: {type, baseURL, apiKey, headers, timeout, models, api,
// apiVersion, region, project, cachedTokens}.
type Settings struct {
	// Name is the provider's name in the config and in model ids
	// ("anthropic" in "anthropic/claude-sonnet-4-5"). The names of the
	// presets ([PresetNames]: anthropic, openai, deepseek, bedrock,
	// ollama...) bring their defaults.
	Name string
	// Type is the wire API; empty means the preset's.
	Type llm.Type
	// BaseURL is the API's address; empty means the preset's default, or
	// the conventional environment variable (ANTHROPIC_BASE_URL,
	// OPENAI_BASE_URL, OLLAMA_HOST).
	BaseURL string
	// APIKey is the key from the config; empty means the conventional
	// environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY,
	// OPENROUTER_API_KEY, ...).
	APIKey string
	// Headers are sent with every request, after the preset's.
	Headers map[string]string
	// IdleTimeout fails a stream that receives nothing for this long. Zero
	// means 5 minutes; negative means never.
	IdleTimeout time.Duration
	// Models adds to or changes the catalog's entries for this provider.
	Models map[string]llm.ModelOverride
	// API chooses between "responses" and "chat" for Type openai; empty
	// means the preset's, else responses. Other types ignore it.
	API string
	// APIVersion is Azure OpenAI's api-version; empty means
	// AZURE_OPENAI_API_VERSION, else 2024-10-21. "v1" uses Azure's v1 API
	// (/openai/v1, no deployments in the path).
	APIVersion string
	// Region is the cloud region of Bedrock (empty: AWS_REGION,
	// AWS_DEFAULT_REGION, else the AWS profile's) or Vertex AI (empty: CLOUD_ML_REGION, else "global").
	Region string
	// Profile is the AWS profile of Bedrock's credentials and region;
	// empty means AWS_PROFILE, else "default".
	Profile string
	// Project is the Google Cloud project of Vertex AI; empty means
	// ANTHROPIC_VERTEX_PROJECT_ID, else GOOGLE_CLOUD_PROJECT.
	Project string
	// CachedTokens says how a Chat Completions server counts cached prompt
	// tokens when its usage block has no total_tokens to tell: "included"
	// in prompt_tokens (OpenAI's way) or "separate". Empty means the
	// preset's, else included.
	CachedTokens string
}

// The values of [Settings.CachedTokens].
const (
	CachedIncluded = "included"
	CachedSeparate = "separate"
)

// Options are the environment every provider shares.
type Options struct {
	// Retry is the retry policy; the zero value is the defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil means a client of darman's own
	// (proxy settings from the environment, no overall timeout: streams are
	// watched by the idle timeout instead).
	HTTPClient *http.Client
	// LookupEnv reads environment variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Catalog is the model catalog; nil means the built-in one.
	Catalog *llm.Catalog
	// Logger receives debug lines and retries; nil discards them.
	Logger *slog.Logger
}

// New builds the client of one provider. It fails when the settings are
// incomplete: an unknown name without a type, a bad base URL, or no key for
// a provider that needs one.
func New(s Settings, opts *Options) (*llm.Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Catalog == nil {
		o.Catalog = llm.BuiltinCatalog()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient()
	}
	if s.Name == "" {
		return nil, fmt.Errorf("llm: a provider needs a name (the part of the model id before the first '/')")
	}
	p, known := presets[s.Name]
	typ := s.Type
	if typ == "" {
		if !known {
			return nil, fmt.Errorf("provider %q: darman does not know it; set its type to %q, %q or %q",
				s.Name, llm.TypeAnthropic, llm.TypeOpenAI, llm.TypeOpenAICompatible)
		}
		typ = p.typ
	}
	switch typ {
	case llm.TypeAnthropic, llm.TypeOpenAI, llm.TypeOpenAICompatible:
	default:
		return nil, fmt.Errorf("provider %q: unknown type %q; use %q, %q or %q",
			s.Name, typ, llm.TypeAnthropic, llm.TypeOpenAI, llm.TypeOpenAICompatible)
	}
	if known && typ != p.typ {
		// A preset name used for another API keeps only its name.
		p = preset{}
	}
	for id, m := range s.Models {
		if m.ReasoningReturn != nil {
			if err := m.ReasoningReturn.Validate(); err != nil {
				return nil, fmt.Errorf("provider %q, model %q: %w", s.Name, id, err)
			}
		}
	}
	switch s.CachedTokens {
	case "", CachedIncluded, CachedSeparate:
	default:
		return nil, fmt.Errorf("provider %q: cachedTokens %q; use %q or %q", s.Name, s.CachedTokens, CachedIncluded, CachedSeparate)
	}
	c := &llm.Config{
		Name: s.Name, Display: p.display, Type: typ,
		Models: s.Models, Catalog: o.Catalog, Retry: o.Retry, Logger: o.Logger,
	}

	if p.auth == "bedrock" || p.auth == "vertex" {
		if err := newCloud(c, s, p, o); err != nil {
			return nil, err
		}
		return llm.NewClient(*c), nil
	}
	base, err := resolveBaseURL(s.Name, s.BaseURL, p, o.LookupEnv)
	if err != nil {
		return nil, err
	}
	c.BaseURL = base

	key := s.APIKey
	c.KeySource = "provider." + s.Name + ".apiKey"
	if key == "" && p.keyEnv != "" {
		if v, ok := o.LookupEnv(p.keyEnv); ok && v != "" {
			key, c.KeySource = v, p.keyEnv
		}
	}
	if key == "" && p.keyRequired {
		display := p.display
		if display == "" {
			display = s.Name
		}
		return nil, &llm.Error{Kind: llm.ErrMissingKey, Provider: display,
			KeySource: fmt.Sprintf("%s or %q in darman's config", p.keyEnv, c.KeySource)}
	}
	if key == "" {
		c.KeySource = ""
	}

	headers := map[string]string{}
	for k, v := range p.headers {
		headers[k] = v
	}
	for k, v := range s.Headers {
		headers[k] = v
	}
	idle := s.IdleTimeout
	if idle == 0 {
		idle = 5 * time.Minute
	}
	t := wire.Transport{
		BaseURL: base, Key: key, Headers: headers,
		HTTP: o.HTTPClient, Idle: wire.IdleWatch{Timeout: idle},
	}
	c.FIM = openai.NewFIM(s.Name, &t)
	api := s.API
	if api == "" {
		api = p.api
	}
	var chat openai.Chat
	if p.auth == "azure" {
		chat = azure(c, &t, s, o.LookupEnv)
	}
	chat.Behaviour = chatBehaviourOf(s, p)
	switch {
	case typ == llm.TypeAnthropic:
		c.API = llm.OriginAnthropic
		c.Wire = anthropic.New(t)
	case typ == llm.TypeOpenAI && (api == "" || api == APIResponses):
		c.API = llm.OriginResponses
		c.Wire = openai.NewResponses(t)
	case typ == llm.TypeOpenAI && api == APIChat, typ == llm.TypeOpenAICompatible:
		c.API = llm.OriginChat
		chat.Official = typ == llm.TypeOpenAI
		c.Wire = openai.NewChat(t, chat)
	default:
		return nil, fmt.Errorf("provider %q: unknown api %q; use %q or %q", s.Name, s.API, APIResponses, APIChat)
	}
	return llm.NewClient(*c), nil
}

// chatBehaviourOf resolves what the Chat Completions adapter sends back of
// reasoning (the model's configuration, else the model family's rule on an
// open-weights server or on a server darman has no preset for — a router
// such as LiteLLM in front of several providers — else the preset's) and
// how it reads usage.
func chatBehaviourOf(s Settings, p preset) openai.ChatBehaviour {
	models, name := s.Models, s.Name
	generic := p.display == "" // no preset: the server's rule is unknown
	return openai.ChatBehaviour{
		Reasoning: func(model string) llm.ReasoningReturn {
			if m, ok := models[model]; ok && m.ReasoningReturn != nil {
				return *m.ReasoningReturn
			}
			if p.openWeights && isGPTOSS(model) {
				return gptOSSReturn(name)
			}
			if r, ok := familyReturn(model); ok && generic {
				return r
			}
			return p.reasoning
		},
		CachedApart:     s.CachedTokens == CachedSeparate || (s.CachedTokens == "" && p.cachedApart),
		NoStreamOptions: p.noStreamOptions,
		ToolCallExtra:   p.toolCallExtra,
	}
}

func resolveBaseURL(name, configured string, p preset, lookup func(string) (string, bool)) (string, error) {
	base := configured
	if base == "" && p.baseURLEnv != "" {
		if v, ok := lookup(p.baseURLEnv); ok && v != "" {
			base = v
			if p.baseURLEnv == "OLLAMA_HOST" {
				base = ollamaHostURL(v)
			}
		}
	}
	if base == "" {
		base = p.baseURL
	}
	if base == "" && p.baseURLEnv != "" {
		return "", fmt.Errorf("provider %q: set its baseURL or %s (e.g. https://NAME.openai.azure.com)", name, p.baseURLEnv)
	}
	if base == "" {
		return "", fmt.Errorf("provider %q: set its baseURL (the server's address, e.g. http://127.0.0.1:8000/v1)", name)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("provider %q: baseURL %q is not an http(s) URL", name, base)
	}
	return strings.TrimSuffix(base, "/"), nil
}

// ollamaHostURL turns OLLAMA_HOST, which Ollama reads as "host",
// "host:port" or a URL, into the base URL of its OpenAI-compatible API.
func ollamaHostURL(v string) string {
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return v
	}
	host, port := u.Hostname(), u.Port()
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "11434"
	}
	u.Host = net.JoinHostPort(host, port)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1"
	return u.String()
}

func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 0
	return &http.Client{Transport: t}
}
