package llm_test

import (
	"math"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
)

func TestBuiltinCatalogIsSane(t *testing.T) {
	cat := llm.BuiltinCatalog()
	for _, typ := range []llm.Type{llm.TypeAnthropic, llm.TypeOpenAI} {
		models := cat.Models(typ)
		if len(models) < 5 {
			t.Errorf("%s: only %d models", typ, len(models))
		}
		for _, m := range models {
			if !m.Known || m.Name == "" || !m.Tools {
				t.Errorf("%s/%s: %+v", typ, m.ID, m)
			}
			if m.ContextWindow < 100000 || m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow {
				t.Errorf("%s/%s: context %d, output %d", typ, m.ID, m.ContextWindow, m.MaxOutput)
			}
			c := m.Cost
			if c.Input <= 0 || c.Output < c.Input || c.CacheRead <= 0 || c.CacheRead >= c.Input {
				t.Errorf("%s/%s: prices %+v", typ, m.ID, c)
			}
			if typ == llm.TypeAnthropic && c.CacheWrite <= c.Input {
				t.Errorf("%s/%s: cache writes cost more than input on Anthropic: %+v", typ, m.ID, c)
			}
		}
	}
}

func TestCatalogLookup(t *testing.T) {
	cat := llm.BuiltinCatalog()
	cases := []struct {
		typ   llm.Type
		id    string
		known bool
		name  string
	}{
		{llm.TypeAnthropic, "claude-sonnet-4-5", true, "Claude Sonnet 4.5"},
		{llm.TypeAnthropic, "claude-sonnet-4-5-20250929", true, "Claude Sonnet 4.5"},
		{llm.TypeOpenAI, "gpt-4o-2024-11-20", true, "GPT-4o"},
		{llm.TypeOpenAI, "gpt-5-2025-08-07", true, "GPT-5"},
		{llm.TypeOpenAICompatible, "anthropic/claude-sonnet-4.5", true, "Claude Sonnet 4.5"},
		{llm.TypeOpenAICompatible, "openai/gpt-5-mini", true, "GPT-5 mini"},
		{llm.TypeOpenAICompatible, "qwen3:8b", false, "qwen3:8b"},
		{llm.TypeAnthropic, "claude-future-9", false, "claude-future-9"},
	}
	for _, tc := range cases {
		m := cat.Lookup(tc.typ, tc.id)
		if m.Known != tc.known || m.Name != tc.name || m.ID != tc.id {
			t.Errorf("Lookup(%s, %s) = %+v", tc.typ, tc.id, m)
		}
		if m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			t.Errorf("Lookup(%s, %s) has no limits: %+v", tc.typ, tc.id, m)
		}
	}
	// Unknown local models get conservative limits and no price.
	if m := cat.Lookup(llm.TypeOpenAICompatible, "qwen3:8b"); m.ContextWindow > 32768 || m.Cost != (llm.Cost{}) {
		t.Errorf("unknown local model: %+v", m)
	}
}

func TestModelOverrides(t *testing.T) {
	yes, no := true, false
	c, err := provider.New(provider.Settings{Name: "anthropic", APIKey: "k", Models: map[string]llm.ModelOverride{
		"claude-sonnet-4-5": {ContextWindow: 1000000, Images: &no},
		"claude-internal":   {Name: "Internal", ContextWindow: 50000, MaxOutput: 4000, Cost: &llm.Cost{Input: 1, Output: 2}, Reasoning: &yes},
	}}, &provider.Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Model("claude-sonnet-4-5")
	if m.ContextWindow != 1000000 || m.Images || m.MaxOutput != 64000 || m.Cost.Input != 3 || !m.Known {
		t.Errorf("override of a catalog model: %+v", m)
	}
	m = c.Model("claude-internal")
	if m.Name != "Internal" || m.ContextWindow != 50000 || m.Cost.Output != 2 || !m.Reasoning || !m.Known {
		t.Errorf("model added by config: %+v", m)
	}
	var found bool
	for _, m := range c.Models() {
		found = found || m.ID == "claude-internal"
	}
	if !found {
		t.Error("Models() lacks the configured model")
	}
}

func TestCostOf(t *testing.T) {
	c := llm.Cost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	u := llm.Usage{Input: 1000, Output: 2000, CacheRead: 100000, CacheWrite: 10000}
	want := 0.003 + 0.03 + 0.03 + 0.0375
	if got := c.Of(u); math.Abs(got-want) > 1e-12 {
		t.Errorf("cost %v, want %v", got, want)
	}
	if got := u.ContextTokens(); got != 111000 {
		t.Errorf("context tokens %d", got)
	}
}
