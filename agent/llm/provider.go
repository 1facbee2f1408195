package llm

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// Provider streams model calls. Stream may be called from several
// goroutines at once; each Stream it returns belongs to one goroutine.
// [*Client] is darman's implementation, over the official SDKs.
type Provider interface {
	// Stream starts one model call. It never returns nil: a request that
	// cannot be sent gives a stream whose Err says why.
	Stream(ctx context.Context, req *Request) *Stream
	// Model describes a model of this provider, from the catalog and the
	// configuration; unknown models get conservative defaults.
	Model(id string) ModelInfo
}

// Type is the wire API a provider speaks.
type Type string

const (
	// TypeAnthropic is Anthropic's Messages API.
	TypeAnthropic Type = "anthropic"
	// TypeOpenAI is OpenAI's own API: the Responses API by default.
	TypeOpenAI Type = "openai"
	// TypeOpenAICompatible is Chat Completions on any compatible server.
	TypeOpenAICompatible Type = "openai-compatible"
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
	Type Type
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
	Models map[string]ModelOverride
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
	Retry RetryPolicy
	// HTTPClient sends the requests; nil means a client of darman's own
	// (proxy settings from the environment, no overall timeout: streams are
	// watched by the idle timeout instead).
	HTTPClient *http.Client
	// LookupEnv reads environment variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Catalog is the model catalog; nil means the built-in one.
	Catalog *Catalog
	// Logger receives debug lines and retries; nil discards them.
	Logger *slog.Logger
}

// Client is a configured provider. It is safe for concurrent use and holds
// no connections of its own beyond its HTTP client's pool.
type Client struct {
	name      string
	display   string
	typ       Type
	api       string
	baseURL   string
	keySource string
	models    map[string]ModelOverride
	catalog   *Catalog
	retry     RetryPolicy
	log       *slog.Logger
	wire      wire
	// fim is the transport of the fill-in-the-middle calls (fim.go); nil
	// for the cloud providers, which have none.
	fim *transport
}

var _ Provider = (*Client)(nil)

// New builds the client of one provider. It fails when the settings are
// incomplete: an unknown name without a type, a bad base URL, or no key for
// a provider that needs one.
func New(s Settings, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Catalog == nil {
		o.Catalog = BuiltinCatalog()
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
				s.Name, TypeAnthropic, TypeOpenAI, TypeOpenAICompatible)
		}
		typ = p.typ
	}
	switch typ {
	case TypeAnthropic, TypeOpenAI, TypeOpenAICompatible:
	default:
		return nil, fmt.Errorf("provider %q: unknown type %q; use %q, %q or %q",
			s.Name, typ, TypeAnthropic, TypeOpenAI, TypeOpenAICompatible)
	}
	if known && typ != p.typ {
		// A preset name used for another API keeps only its name.
		p = preset{}
	}
	for id, m := range s.Models {
		if m.ReasoningReturn != nil {
			if err := m.ReasoningReturn.validate(); err != nil {
				return nil, fmt.Errorf("provider %q, model %q: %w", s.Name, id, err)
			}
		}
	}
	switch s.CachedTokens {
	case "", CachedIncluded, CachedSeparate:
	default:
		return nil, fmt.Errorf("provider %q: cachedTokens %q; use %q or %q", s.Name, s.CachedTokens, CachedIncluded, CachedSeparate)
	}
	c := &Client{
		name: s.Name, display: p.display, typ: typ,
		models: s.Models, catalog: o.Catalog, retry: o.Retry.withDefaults(),
		log: o.Logger.With("provider", s.Name),
	}
	if c.display == "" {
		c.display = s.Name
	}

	if p.auth == "bedrock" || p.auth == "vertex" {
		return c.newCloud(s, p, o)
	}
	base, err := c.resolveBaseURL(s.BaseURL, p, o.LookupEnv)
	if err != nil {
		return nil, err
	}
	c.baseURL = base

	key := s.APIKey
	c.keySource = "provider." + s.Name + ".apiKey"
	if key == "" && p.keyEnv != "" {
		if v, ok := o.LookupEnv(p.keyEnv); ok && v != "" {
			key, c.keySource = v, p.keyEnv
		}
	}
	if key == "" && p.keyRequired {
		return nil, &Error{Kind: ErrMissingKey, Provider: c.display,
			KeySource: fmt.Sprintf("%s or %q in darman's config", p.keyEnv, c.keySource)}
	}
	if key == "" {
		c.keySource = ""
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
	t := transport{
		baseURL: base, key: key, headers: headers,
		http: o.HTTPClient, idle: idleWatch{timeout: idle},
	}
	c.fim = &t
	api := s.API
	if api == "" {
		api = p.api
	}
	var chat chatOptions
	if p.auth == "azure" {
		if chat, err = c.azure(&t, s, o.LookupEnv); err != nil {
			return nil, err
		}
	}
	chat.behaviour = c.chatBehaviour(s, p)
	switch {
	case typ == TypeAnthropic:
		c.api = originAnthropic
		c.wire = newAnthropicWire(t, nil)
	case typ == TypeOpenAI && (api == "" || api == APIResponses):
		c.api = originResponses
		c.wire = newResponsesWire(t)
	case typ == TypeOpenAI && api == APIChat, typ == TypeOpenAICompatible:
		c.api = originChat
		chat.official = typ == TypeOpenAI
		c.wire = newChatWire(t, chat)
	default:
		return nil, fmt.Errorf("provider %q: unknown api %q; use %q or %q", s.Name, s.API, APIResponses, APIChat)
	}
	return c, nil
}

// chatBehaviour resolves what the Chat Completions adapter sends back of
// reasoning (the model's configuration, else the model family's rule on an
// open-weights server or on a server darman has no preset for — a router
// such as LiteLLM in front of several providers — else the preset's) and
// how it reads usage.
func (c *Client) chatBehaviour(s Settings, p preset) chatBehaviour {
	models, name := s.Models, s.Name
	generic := p.display == "" // no preset: the server's rule is unknown
	return chatBehaviour{
		reasoning: func(model string) ReasoningReturn {
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
		cachedApart:     s.CachedTokens == CachedSeparate || (s.CachedTokens == "" && p.cachedApart),
		noStreamOptions: p.noStreamOptions,
		toolCallExtra:   p.toolCallExtra,
	}
}

// ReasoningReturn is what Chat Completions requests for the model send
// back of earlier reasoning; other APIs send back all of it, in their own
// fields.
func (c *Client) ReasoningReturn(model string) ReasoningReturn {
	if w, ok := c.wire.(*chatWire); ok {
		return w.behaviour.reasoning(model)
	}
	return ReasoningReturn{}
}

// transport is what every adapter needs to build its SDK client.
type transport struct {
	baseURL string
	key     string
	headers map[string]string
	http    *http.Client
	idle    idleWatch
}

func (c *Client) resolveBaseURL(configured string, p preset, lookup func(string) (string, bool)) (string, error) {
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
		return "", fmt.Errorf("provider %q: set its baseURL or %s (e.g. https://NAME.openai.azure.com)", c.name, p.baseURLEnv)
	}
	if base == "" {
		return "", fmt.Errorf("provider %q: set its baseURL (the server's address, e.g. http://127.0.0.1:8000/v1)", c.name)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("provider %q: baseURL %q is not an http(s) URL", c.name, base)
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

// Name is the provider's configured name.
func (c *Client) Name() string { return c.name }

// DisplayName is the provider's name for people: "Anthropic", "Ollama".
func (c *Client) DisplayName() string { return c.display }

// Type is the provider's type.
func (c *Client) Type() Type { return c.typ }

// API is the wire API the client speaks, named as [Reasoning.Origin] names
// it: "anthropic", "openai-responses" or "openai-chat". Reasoning of
// another origin is not sent back to this client's API.
func (c *Client) API() string { return c.api }

// BaseURL is the address the client sends requests to.
func (c *Client) BaseURL() string { return c.baseURL }

// KeySource says where the API key came from: an environment variable's
// name, "provider.<name>.apiKey", or "" when the provider has none.
func (c *Client) KeySource() string { return c.keySource }

// Model describes a model of this provider: the catalog's entry with the
// configuration's changes, or conservative defaults.
func (c *Client) Model(id string) ModelInfo {
	m := c.catalog.LookupFor(c.name, c.typ, id)
	if o, ok := c.models[id]; ok {
		m = o.apply(m)
	}
	return m
}

// ListModels asks the server which models it offers. Errors are
// [*Error]s, like a stream's.
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	ids, err := c.wire.models(ctx)
	if err != nil {
		s := &Stream{client: c, req: &Request{}, ctx: ctx}
		return nil, s.classify(err)
	}
	return ids, nil
}

// Models lists the models configured for this provider and the catalog's
// models of its type.
func (c *Client) Models() []ModelInfo {
	seen := map[string]bool{}
	var out []ModelInfo
	for id := range c.models {
		seen[id] = true
		out = append(out, c.Model(id))
	}
	catalog := c.catalog.presetModels(c.name)
	if len(catalog) == 0 {
		catalog = c.catalog.Models(c.typ)
	}
	for _, m := range catalog {
		if !seen[m.ID] {
			out = append(out, c.Model(m.ID))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
