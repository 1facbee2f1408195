package llm

import (
	"context"
	"log/slog"
	"sort"
)

// Provider streams model calls. Stream may be called from several
// goroutines at once; each Stream it returns belongs to one goroutine.
// [*Client] is darman's implementation.
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

// Client is a configured provider. It is safe for concurrent use and holds
// no connections of its own beyond its HTTP client's pool. The provider
// constructor (agent/llm/provider) builds it with [NewClient].
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
	wire      Wire
	fim       FIMWire
}

var _ Provider = (*Client)(nil)

// Config is what a [Client] is made of: the provider as configured and
// the wire that speaks its API.
type Config struct {
	// Name is the provider's name in the configuration and in model ids.
	Name string
	// Display is its name for people ("Anthropic"); empty means Name.
	Display string
	Type    Type
	// API is the wire API, named as [Reasoning.Origin] names it
	// ([OriginAnthropic], [OriginResponses] or [OriginChat]).
	API string
	// BaseURL is the address requests go to.
	BaseURL string
	// KeySource says where the key came from; empty when there is none.
	KeySource string
	// Models are the configuration's changes to the catalog's entries.
	Models map[string]ModelOverride
	// Catalog is the model catalog; nil means the built-in one.
	Catalog *Catalog
	// Retry is the retry policy; the zero value is the defaults.
	Retry RetryPolicy
	// Logger receives debug lines and retries; nil discards them.
	Logger *slog.Logger
	// Wire speaks the provider's API.
	Wire Wire
	// FIM speaks its fill-in-the-middle APIs; nil when it has none.
	FIM FIMWire
}

// NewClient makes the client of a configured provider.
func NewClient(c Config) *Client {
	if c.Display == "" {
		c.Display = c.Name
	}
	if c.Catalog == nil {
		c.Catalog = BuiltinCatalog()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{
		name: c.Name, display: c.Display, typ: c.Type, api: c.API,
		baseURL: c.BaseURL, keySource: c.KeySource,
		models: c.Models, catalog: c.Catalog, retry: c.Retry.withDefaults(),
		log: c.Logger.With("provider", c.Name), wire: c.Wire, fim: c.FIM,
	}
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

// ReasoningReturn is what Chat Completions requests for the model send
// back of earlier reasoning; other APIs send back all of it, in their own
// fields.
func (c *Client) ReasoningReturn(model string) ReasoningReturn {
	if w, ok := c.wire.(interface{ ReasoningReturn(string) ReasoningReturn }); ok {
		return w.ReasoningReturn(model)
	}
	return ReasoningReturn{}
}

// ListModels asks the server which models it offers. Errors are
// [*Error]s, like a stream's.
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	ids, err := c.wire.Models(ctx)
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
	catalog := c.catalog.PresetModels(c.name)
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
