package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server/lsp"
)

// lspModels lists, for initialize, the models of the providers the
// configuration of setup's workspace makes usable, without starting the
// agent or asking any server.
func (a *app) lspModels(log *slog.Logger) func(context.Context, lsp.Setup) (lsp.ModelChoices, error) {
	return func(_ context.Context, setup lsp.Setup) (lsp.ModelChoices, error) {
		cfg, err := a.setupConfig(setup, false)
		if err != nil {
			return lsp.ModelChoices{}, err
		}
		return modelChoices(cfg, nil, log), nil
	}
}

// setupConfig is the configuration of setup's workspace with the editor's
// settings over it, for what initialize answers before the agent starts:
// startConfig when that is the one (unless reload), else loaded for
// setup as the agent's start loads it.
func (a *app) setupConfig(setup lsp.Setup, reload bool) (config.Config, error) {
	if cfg, ok := a.startConfig(setup); ok && !reload {
		return cfg, nil
	}
	opts := lspConfigOptions(setup, new(trustOutcome))
	opts.Flags = a.flags
	loaded, err := config.Load(opts)
	if err != nil {
		return config.Config{}, err
	}
	return loaded.Config, nil
}

// lspConfigOptions load the configuration of setup's workspace, the
// editor's settings over it, its trust decided by the editor's word and
// the user's records (recorded in trust).
func lspConfigOptions(setup lsp.Setup, trust *trustOutcome) config.Options {
	return config.Options{WorkspaceRoot: setup.Root, LookupEnv: withSettings(setup.Settings), Trust: decideTrust(lspPolicy(setup), trust)}
}

// startConfig is the configuration darman lsp loaded when it started, with
// the editor's model over it, when that is the configuration setup names
// as far as models go: the editor started darman in the workspace, and its
// settings change no provider. Most editors do, and loading the
// configuration again inside initialize would double what it spends on it
// (other tools' MCP files included, which can be large).
func (a *app) startConfig(setup lsp.Setup) (config.Config, bool) {
	root, err := a.workspaceRoot()
	// An untrusted load is not reused: the editor may trust the folder.
	if err != nil || a.loaded == nil || filepath.Clean(root) != filepath.Clean(setup.Root) || !a.loaded.Config.WorkspaceTrusted {
		return config.Config{}, false
	}
	cfg := a.loaded.Config
	if len(setup.Settings) == 0 || string(setup.Settings) == "null" {
		return cfg, true
	}
	var settings map[string]json.RawMessage
	if err := json.Unmarshal(setup.Settings, &settings); err != nil {
		return config.Config{}, false
	}
	if _, ok := settings["provider"]; ok {
		return config.Config{}, false
	}
	if raw, ok := settings["model"]; ok {
		var model string
		if err := json.Unmarshal(raw, &model); err != nil {
			return config.Config{}, false
		}
		// The settings are under DARMAN_MODEL and --model.
		if _, env := os.LookupEnv(config.EnvModel); !env && a.flags.Model == "" {
			cfg.Model = model
		}
	}
	return cfg, true
}

// keyedPresets are the providers darman knows that need only their API
// key in the environment to be usable.
var keyedPresets = []string{"anthropic", "openai", "openrouter"}

// usableProvider is one provider darman can reach as configured, with
// the models it knows of it.
type usableProvider struct {
	Name   string
	Client *llm.Client
	// Models are the configuration's entries, then the catalog's of its
	// type (a local server lists only what is configured: darman cannot
	// know what it holds without asking it), the configured model among
	// them.
	Models []llm.ModelInfo
}

// usableProviders are the providers a configuration makes usable, sorted
// by name: the configured ones, the keyed presets whose key is set, and
// the configured model's provider. The clients are made, never used to
// send anything. lookupEnv nil means os.LookupEnv.
func usableProviders(cfg config.Config, lookupEnv func(string) (string, bool), log *slog.Logger) []usableProvider {
	names := make([]string, 0, len(cfg.Provider)+len(keyedPresets)+1)
	for name := range cfg.Provider {
		names = append(names, name)
	}
	names = append(names, keyedPresets...)
	configured, configuredID, refErr := config.ParseModelRef(cfg.Model)
	if refErr == nil {
		names = append(names, configured)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	// One shared HTTP client spares each client a transport of its own.
	opts := &provider.Options{LookupEnv: lookupEnv, HTTPClient: &http.Client{}}
	var out []usableProvider
	for _, name := range names {
		c, err := newProvider(cfg, name, opts)
		if err != nil {
			// Unusable as configured (no key, unknown type): the agent says
			// why when a session asks for it.
			if _, ok := cfg.Provider[name]; ok || name == configured {
				log.Debug("models: a provider is not usable", "provider", name, "err", err)
			}
			continue
		}
		p := usableProvider{Name: name, Client: c, Models: c.Models()}
		if name == configured && !slices.ContainsFunc(p.Models, func(m llm.ModelInfo) bool { return m.ID == configuredID }) {
			p.Models = append(p.Models, c.Model(configuredID))
		}
		out = append(out, p)
	}
	return out
}

// modelChoices lists the models of every usable provider for the
// editors. The default is the configured model, else the first model
// configured for a provider (what provider.Select picks first without asking
// the network); "" otherwise. lookupEnv nil means os.LookupEnv.
func modelChoices(cfg config.Config, lookupEnv func(string) (string, bool), log *slog.Logger) lsp.ModelChoices {
	return choicesOf(cfg, usableProviders(cfg, lookupEnv, log))
}

// servedWait bounds darman.model.list's question to each server.
const servedWait = 5 * time.Second

// lspServedModels lists, for darman.model.list, what each usable
// provider's server says it serves (GET /v1/models: an Ollama or other
// OpenAI-compatible server lists the models it holds), all asked at once;
// a provider whose server does not answer within servedWait keeps the
// models initialize offered, and the log says why.
func (a *app) lspServedModels(log *slog.Logger) func(context.Context, lsp.Setup) (lsp.ModelChoices, error) {
	return func(ctx context.Context, setup lsp.Setup) (lsp.ModelChoices, error) {
		cfg, err := a.setupConfig(setup, false)
		if err != nil {
			return lsp.ModelChoices{}, err
		}
		providers := usableProviders(cfg, nil, log)
		var wg sync.WaitGroup
		for i := range providers {
			p := &providers[i]
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, servedWait)
				defer cancel()
				ids, err := p.Client.ListModels(ctx)
				if err != nil {
					log.Info("models: the server's list is unknown; offering the configured and catalog models", "provider", p.Name, "err", err)
					return
				}
				slices.Sort(ids)
				p.Models = p.Models[:0]
				for _, id := range slices.Compact(ids) {
					p.Models = append(p.Models, p.Client.Model(id))
				}
			})
		}
		wg.Wait()
		return choicesOf(cfg, providers), nil
	}
}

// choicesOf lists providers' models for the editors, with modelChoices' default.
func choicesOf(cfg config.Config, providers []usableProvider) lsp.ModelChoices {
	var out lsp.ModelChoices
	for _, p := range providers {
		for _, m := range p.Models {
			c := lsp.ModelChoice{ID: p.Name + "/" + m.ID}
			if m.Name != m.ID {
				c.Name = m.Name
			}
			if m.Known {
				c.ContextWindow = m.ContextWindow
			}
			out.Models = append(out.Models, c)
		}
		if out.Default == "" && len(cfg.Provider[p.Name].Models) > 0 {
			out.Default = p.Name + "/" + slices.Min(slices.Collect(maps.Keys(cfg.Provider[p.Name].Models)))
		}
	}
	if _, _, err := config.ParseModelRef(cfg.Model); err == nil {
		out.Default = cfg.Model
	}
	return out
}
