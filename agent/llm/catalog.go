package llm

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
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

//go:embed catalog.json
var catalogJSON []byte

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

type catalogFamily struct {
	Defaults catalogEntry            `json:"defaults"`
	Models   map[string]catalogEntry `json:"models"`
}

// Catalog is the model data shipped in the binary, by provider type.
type Catalog struct {
	families map[Type]catalogFamily
	// byAlias maps every id and alias to its canonical id, per type.
	byAlias map[Type]map[string]string
}

// BuiltinCatalog is the catalog shipped in the binary. It is parsed once
// and must not be modified.
var BuiltinCatalog = sync.OnceValue(func() *Catalog {
	c, err := parseCatalog(catalogJSON)
	if err != nil {
		// catalog.json is part of the source tree and a test parses it; a
		// failure here is a build defect, like a bad regexp literal.
		panic(fmt.Sprintf("llm: built-in catalog.json: %v", err))
	}
	return c
})

func parseCatalog(data []byte) (*Catalog, error) {
	var raw map[Type]catalogFamily
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	c := &Catalog{families: raw, byAlias: map[Type]map[string]string{}}
	for typ, fam := range raw {
		ids := map[string]string{}
		for id, e := range fam.Models {
			ids[id] = id
			for _, a := range e.Aliases {
				ids[a] = id
			}
		}
		c.byAlias[typ] = ids
	}
	return c, nil
}

// datedSuffix matches the snapshot dates providers append to model ids:
// "-20250929", "-2025-08-07".
var datedSuffix = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

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
	fam := c.families[typ]
	return fam.Defaults.info(id, false)
}

func (c *Catalog) find(typ Type, id string) (ModelInfo, bool) {
	ids := c.byAlias[typ]
	canon, ok := ids[id]
	if !ok {
		canon, ok = ids[datedSuffix.ReplaceAllString(id, "")]
	}
	if !ok {
		return ModelInfo{}, false
	}
	m := c.families[typ].Models[canon].info(id, true)
	return m, true
}

// Models lists the catalog's models of a provider type, sorted by id,
// without aliases.
func (c *Catalog) Models(typ Type) []ModelInfo {
	fam := c.families[typ]
	out := make([]ModelInfo, 0, len(fam.Models))
	for id, e := range fam.Models {
		out = append(out, e.info(id, true))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
