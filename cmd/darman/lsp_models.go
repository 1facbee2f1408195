package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server"
)

// lspModels lists, for initialize, the models of the providers the
// configuration of setup's workspace makes usable, without starting the
// agent or asking any server.
func (a *app) lspModels(log *slog.Logger) func(context.Context, server.Setup) (server.ModelChoices, error) {
	return func(_ context.Context, setup server.Setup) (server.ModelChoices, error) {
		if cfg, ok := a.startConfig(setup); ok {
			return modelChoices(cfg, nil, log), nil
		}
		loaded, err := config.Load(config.Options{WorkspaceRoot: setup.Root, Flags: a.flags, LookupEnv: withSettings(setup.Settings), Trust: decideTrust(trustPolicy{}, new(trustOutcome))})
		if err != nil {
			return server.ModelChoices{}, err
		}
		return modelChoices(loaded.Config, nil, log), nil
	}
}

// startConfig is the configuration darman lsp loaded when it started, with
// the editor's model over it, when that is the configuration setup names
// as far as models go: the editor started darman in the workspace, and its
// settings change no provider. Most editors do, and loading the
// configuration again inside initialize would double what it spends on it
// (other tools' MCP files included, which can be large).
func (a *app) startConfig(setup server.Setup) (config.Config, bool) {
	root, err := a.workspaceRoot()
	if err != nil || a.loaded == nil || filepath.Clean(root) != filepath.Clean(setup.Root) {
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

// modelChoices lists the models of every usable provider: the configured
// ones, the keyed presets whose key is set, and the configured model's
// provider. A provider's models are the catalog's of its type with the
// configuration's entries over them (a local server lists only what is
// configured: darman cannot know what it holds without asking it). The
// default is the configured model, else what llm.Select picks first
// without asking the network (a configured provider with models); ""
// otherwise. lookupEnv nil means os.LookupEnv.
func modelChoices(cfg config.Config, lookupEnv func(string) (string, bool), log *slog.Logger) server.ModelChoices {
	names := make([]string, 0, len(cfg.Provider)+len(keyedPresets)+1)
	for name := range cfg.Provider {
		names = append(names, name)
	}
	names = append(names, keyedPresets...)
	configured, _, refErr := config.ParseModelRef(cfg.Model)
	if refErr == nil {
		names = append(names, configured)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	// The clients are never used to send anything: one shared HTTP client
	// spares each a transport of its own.
	opts := &llm.Options{LookupEnv: lookupEnv, HTTPClient: &http.Client{}}
	var out server.ModelChoices
	seen := map[string]bool{}
	add := func(name string, m llm.ModelInfo) {
		id := name + "/" + m.ID
		if seen[id] {
			return
		}
		seen[id] = true
		c := server.ModelChoice{ID: id}
		if m.Name != m.ID {
			c.Name = m.Name
		}
		if m.Known {
			c.ContextWindow = m.ContextWindow
		}
		out.Models = append(out.Models, c)
	}
	for _, name := range names {
		c, err := llm.New(settings(name, cfg.Provider[name]), opts)
		if err != nil {
			// Unusable as configured (no key, unknown type): the agent says
			// why when a session asks for it.
			if _, ok := cfg.Provider[name]; ok || name == configured {
				log.Debug("lsp: a provider's models are not offered", "provider", name, "err", err)
			}
			continue
		}
		for _, m := range c.Models() {
			add(name, m)
		}
		if name == configured {
			_, id, _ := config.ParseModelRef(cfg.Model)
			add(name, c.Model(id))
		}
		if out.Default == "" && len(cfg.Provider[name].Models) > 0 {
			ids := make([]string, 0, len(cfg.Provider[name].Models))
			for id := range cfg.Provider[name].Models {
				ids = append(ids, id)
			}
			out.Default = name + "/" + slices.Min(ids)
		}
	}
	if refErr == nil {
		out.Default = cfg.Model
	}
	return out
}
