package llm

import (
	"sort"
	"strings"

	"github.com/darman-dev/darman/internal/lazyre"
)

// Cost is a model's price list in US dollars per million tokens.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Of is the price of one call's usage in US dollars.
func (c Cost) Of(u Usage) float64 {
	return (float64(u.Input)*c.Input +
		float64(u.Output)*c.Output +
		float64(u.CacheRead)*c.CacheRead +
		float64(u.CacheWrite)*c.CacheWrite) / 1e6
}

// ModelInfo is what darman knows about a model: its limits, prices and
// capabilities.
type ModelInfo struct {
	// ID is the model id as the provider knows it.
	ID string
	// Name is a display name; the ID when the catalog has none.
	Name          string
	ContextWindow int
	MaxOutput     int
	Cost          Cost
	Reasoning     bool
	Images        bool
	Tools         bool
	// AdaptiveThinking: an Anthropic model that thinks with
	// {"type":"adaptive"} and an effort instead of a token budget.
	AdaptiveThinking bool
	// Known is false for a model found neither in the catalog nor in the
	// configuration: its limits are conservative defaults and its prices
	// unknown (zero).
	Known bool
}

// ModelOverride is one model's entry in the configuration. It changes a
// catalog entry field by field, or describes a model the catalog does not
// know; zero and nil fields keep the catalog's value.
type ModelOverride struct {
	Name          string
	ContextWindow int
	MaxOutput     int
	// Cost replaces the catalog's prices as a whole.
	Cost      *Cost
	Reasoning *bool
	Images    *bool
	Tools     *bool
	// ReasoningReturn replaces what Chat Completions requests send back of
	// the model's earlier reasoning (see docs/providers.md); nil keeps the
	// preset's rule.
	ReasoningReturn *ReasoningReturn
}

func (o ModelOverride) apply(m ModelInfo) ModelInfo {
	if o.Name != "" {
		m.Name = o.Name
	}
	if o.ContextWindow > 0 {
		m.ContextWindow = o.ContextWindow
	}
	if o.MaxOutput > 0 {
		m.MaxOutput = o.MaxOutput
	}
	if o.Cost != nil {
		m.Cost = *o.Cost
	}
	if o.Reasoning != nil {
		m.Reasoning = *o.Reasoning
	}
	if o.Images != nil {
		m.Images = *o.Images
	}
	if o.Tools != nil {
		m.Tools = *o.Tools
	}
	m.Known = true
	return m
}

type catalogEntry struct {
	Name             string   `json:"name"`
	Aliases          []string `json:"aliases"`
	ContextWindow    int      `json:"contextWindow"`
	MaxOutput        int      `json:"maxOutput"`
	Cost             Cost     `json:"cost"`
	Reasoning        bool     `json:"reasoning"`
	Images           bool     `json:"images"`
	Tools            bool     `json:"tools"`
	AdaptiveThinking bool     `json:"adaptiveThinking"`
	// SameAs is "family/id" of the entry this one is a copy of: a vendor's
	// model under a host's id (a Bedrock id of a Claude model).
	SameAs string `json:"sameAs"`
}

func (e catalogEntry) info(id string, known bool) ModelInfo {
	name := e.Name
	if name == "" {
		name = id
	}
	return ModelInfo{
		ID: id, Name: name,
		ContextWindow: e.ContextWindow, MaxOutput: e.MaxOutput, Cost: e.Cost,
		Reasoning: e.Reasoning, Images: e.Images, Tools: e.Tools,
		AdaptiveThinking: e.AdaptiveThinking, Known: known,
	}
}

// Catalog is the model data shipped in the binary, by provider type, and
// for presets that serve their own models, by preset name.
type Catalog struct {
	// families are sorted by type, their models by id and their aliases
	// by alias, so that lookups need no index built at run time.
	families []builtinFamily
}

// builtinFamily is one provider type's part of catalog.json.
type builtinFamily struct {
	typ      Type
	defaults catalogEntry
	models   []builtinModel
	aliases  []builtinAlias
}

type builtinModel struct {
	id    string
	entry catalogEntry
}

// builtinAlias names a model by another id (a dated snapshot's).
type builtinAlias struct{ alias, id string }

// builtin is catalog.json as Go data (catalog_data.go).
//
// catalog.json is read when the binary is built, not when darman starts:
// parsing its 15 KB, then indexing it in maps, cost 0.2 to 0.5 ms on the
// way to darman lsp's answer to initialize (the models list needs the
// catalog), for data that is the same at every start. The compiler lays
// the slices out as data, so nothing runs for them.
// TestBuiltinCatalogIsCatalogJSON holds the two together (go test
// ./agent/llm -run TestBuiltinCatalogIsCatalogJSON -update rewrites
// catalog_data.go).
var builtin = Catalog{families: builtinCatalog}

// BuiltinCatalog is the catalog shipped in the binary. It must not be
// modified.
func BuiltinCatalog() *Catalog { return &builtin }

// family is the catalog's part for a type.
func (c *Catalog) family(typ Type) (*builtinFamily, bool) {
	i := sort.Search(len(c.families), func(i int) bool { return c.families[i].typ >= typ })
	if i < len(c.families) && c.families[i].typ == typ {
		return &c.families[i], true
	}
	return nil, false
}

// model finds a model by its id or an alias.
func (f *builtinFamily) model(id string) (catalogEntry, bool) {
	i := sort.Search(len(f.models), func(i int) bool { return f.models[i].id >= id })
	if i < len(f.models) && f.models[i].id == id {
		return f.models[i].entry, true
	}
	a := sort.Search(len(f.aliases), func(i int) bool { return f.aliases[i].alias >= id })
	if a < len(f.aliases) && f.aliases[a].alias == id {
		return f.model(f.aliases[a].id)
	}
	return catalogEntry{}, false
}

// datedSuffix matches the snapshot dates providers append to model ids:
// "-20250929", "-2025-08-07".
var datedSuffix = lazyre.New(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// Lookup finds a model of a provider type. A dated snapshot of a known
// model ("gpt-4o-2024-11-20") gets the model's entry; on an
// OpenAI-compatible router, "anthropic/claude-sonnet-4.5" and
// "openai/gpt-5" get the vendor's entry. Anything else gets the type's
// conservative defaults with Known false.
func (c *Catalog) Lookup(typ Type, id string) ModelInfo {
	if m, ok := c.find(typ, id); ok {
		return m
	}
	if typ == TypeOpenAICompatible {
		if vendor, name, ok := strings.Cut(id, "/"); ok {
			var m ModelInfo
			var found bool
			switch vendor {
			case "anthropic":
				m, found = c.find(TypeAnthropic, strings.ReplaceAll(name, ".", "-"))
			case "openai":
				m, found = c.find(TypeOpenAI, name)
			}
			if found {
				m.ID = id
				return m
			}
		}
	}
	var defaults catalogEntry
	if fam, ok := c.family(typ); ok {
		defaults = fam.defaults
	}
	return defaults.info(id, false)
}

func (c *Catalog) find(typ Type, id string) (ModelInfo, bool) {
	fam, ok := c.family(typ)
	if !ok {
		return ModelInfo{}, false
	}
	e, ok := fam.model(id)
	if !ok {
		e, ok = fam.model(datedSuffix.ReplaceAllString(id, ""))
	}
	if !ok {
		return ModelInfo{}, false
	}
	if fam, other, ok := strings.Cut(e.SameAs, "/"); ok {
		if m, ok := c.find(Type(fam), other); ok {
			m.ID = id
			if e.Name != "" {
				m.Name = e.Name
			}
			return m, true
		}
	}
	return e.info(id, true), true
}

// LookupFor finds a model of a provider: the preset's own entries first
// (DeepSeek's, Groq's...), the model's vendor behind a cloud's id (Claude
// on Bedrock or Vertex), then what [Catalog.Lookup] finds for the type.
func (c *Catalog) LookupFor(provider string, typ Type, id string) ModelInfo {
	if _, ok := c.family(Type(provider)); ok && Type(provider) != typ {
		if m, ok := c.find(Type(provider), id); ok {
			return m
		}
	}
	if provider == "bedrock" || provider == "vertex" {
		if m, ok := c.find(TypeAnthropic, cloudClaudeID(id)); ok {
			m.ID = id
			return m
		}
	}
	return c.Lookup(typ, id)
}

// cloudClaudeID turns a Bedrock or Vertex id of a Claude model into
// Anthropic's: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" and
// "claude-sonnet-4-5@20250929" are "claude-sonnet-4-5-20250929".
func cloudClaudeID(id string) string {
	if i := strings.Index(id, "anthropic."); i >= 0 {
		id = id[i+len("anthropic."):]
	}
	if i := strings.LastIndex(id, "-v"); i > 0 && strings.Contains(id[i:], ":") {
		id = id[:i]
	}
	return strings.Replace(id, "@", "-", 1)
}

// PresetModels lists the catalog's own models of a preset ("deepseek",
// "bedrock"): none for the names of the types' own families (anthropic,
// openai), whose models [Catalog.Models] lists.
func (c *Catalog) PresetModels(name string) []ModelInfo {
	if _, ok := c.family(Type(name)); !ok || Type(name) == TypeAnthropic || Type(name) == TypeOpenAI {
		return nil
	}
	out := c.Models(Type(name))
	for i, m := range out {
		if full, ok := c.find(Type(name), m.ID); ok {
			out[i] = full
		}
	}
	return out
}

// Models lists the catalog's models of a provider type, sorted by id,
// without aliases.
func (c *Catalog) Models(typ Type) []ModelInfo {
	fam, ok := c.family(typ)
	if !ok {
		return []ModelInfo{}
	}
	out := make([]ModelInfo, 0, len(fam.models))
	for _, m := range fam.models {
		out = append(out, m.entry.info(m.id, true))
	}
	return out
}
