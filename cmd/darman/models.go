package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/internal/config"
)

// models turns "provider/model-id" references into provider clients, built
// from the configuration on first use and shared afterwards.
type models struct {
	cfg  config.Config
	opts *provider.Options

	mu      sync.Mutex
	clients map[string]*llm.Client
}

func newModels(cfg config.Config, log *slog.Logger) *models {
	return &models{
		cfg: cfg,
		opts: &provider.Options{
			Retry:  llm.RetryPolicy{MaxAttempts: cfg.Retry.MaxAttempts, MaxDelay: cfg.Retry.MaxDelay},
			Logger: log,
		},
		clients: map[string]*llm.Client{},
	}
}

// selectModel picks the model: the configured one, or what provider.Select finds
// (a local Ollama, a provider key in the environment).
func (m *models) selectModel(ctx context.Context) (*provider.Selection, error) {
	providers := map[string]provider.Settings{}
	for name, p := range m.cfg.Provider {
		providers[name] = settings(name, p)
	}
	return provider.Select(ctx, provider.SelectOptions{Model: m.cfg.Model, Providers: providers, Options: m.opts})
}

// resolve returns the client of ref's provider and the model id it knows.
func (m *models) resolve(ref string) (llm.Provider, string, error) {
	provider, model, err := config.ParseModelRef(ref)
	if err != nil {
		return nil, "", err
	}
	c, err := m.client(provider)
	if err != nil {
		return nil, "", err
	}
	return c, model, nil
}

func (m *models) client(name string) (*llm.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[name]; ok {
		return c, nil
	}
	c, err := newProvider(m.cfg, name, m.opts)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", name, err)
	}
	m.clients[name] = c
	return c, nil
}

// newProvider is darman's one way from the configuration to a provider's
// client: the provider the configuration names (or a preset of that name),
// with opts (retries, HTTP client, environment, logger). The client is
// made, never used to send anything.
func newProvider(cfg config.Config, name string, opts *provider.Options) (*llm.Client, error) {
	return provider.New(settings(name, cfg.Provider[name]), opts)
}

// settings maps a provider's configuration onto the adapter's settings.
func settings(name string, p config.Provider) provider.Settings {
	s := provider.Settings{
		Name:         name,
		Type:         llm.Type(p.Type),
		BaseURL:      p.BaseURL,
		APIKey:       p.APIKey,
		Headers:      p.Headers,
		IdleTimeout:  p.Timeout,
		API:          string(p.API),
		APIVersion:   p.APIVersion,
		Region:       p.Region,
		Profile:      p.Profile,
		Project:      p.Project,
		CachedTokens: string(p.CachedTokens),
	}
	if len(p.Models) > 0 {
		s.Models = map[string]llm.ModelOverride{}
		for id, cm := range p.Models {
			o := llm.ModelOverride{Name: cm.Name, ContextWindow: cm.ContextWindow, MaxOutput: cm.MaxOutput,
				Reasoning: cm.Reasoning, Images: cm.Images, Tools: cm.Tools}
			if r := cm.ReasoningReturn; r != nil {
				o.ReasoningReturn = &llm.ReasoningReturn{Field: string(r.Field), Turns: string(r.Turns)}
			}
			if cm.Cost != (config.Cost{}) {
				o.Cost = &llm.Cost{Input: cm.Cost.Input, Output: cm.Cost.Output, CacheRead: cm.Cost.CacheRead, CacheWrite: cm.Cost.CacheWrite}
			}
			s.Models[id] = o
		}
	}
	return s
}
