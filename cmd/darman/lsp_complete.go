package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server/lsp"
)

// lspCompletion finds, for initialize, the inline completion setup of the
// workspace's configuration with the editor's settings over it, without
// asking any server.
func (a *app) lspCompletion(log *slog.Logger) func(context.Context, lsp.Setup) (*lsp.CompletionConfig, error) {
	client := completionHTTPClient()
	return func(_ context.Context, setup lsp.Setup) (*lsp.CompletionConfig, error) {
		cfg, err := a.setupConfig(setup, setupChangesCompletion(setup))
		if err != nil {
			// The agent's start reports the configuration's problems.
			return nil, nil
		}
		cc, _, err := completionSetup(cfg, nil, client, log)
		return cc, err
	}
}

// setupChangesCompletion reports whether the editor's settings hold
// completion keys, which startConfig does not apply.
func setupChangesCompletion(setup lsp.Setup) bool {
	return strings.Contains(string(setup.Settings), `"completion"`)
}

// completionHTTPClient keeps connections to the completion server open
// between keystrokes: a completion is a small request, and a new TCP (or
// TLS) connection each time would cost more than darman's own work.
func completionHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 8
	t.IdleConnTimeout = 5 * time.Minute
	return &http.Client{Transport: t}
}

// completionSetup reads completion.* of a configuration: nil when
// completions are off (no model, or enabled false), with why in words
// (for doctor); an error when the settings cannot work.
func completionSetup(cfg config.Config, lookupEnv func(string) (string, bool), client *http.Client, log *slog.Logger) (*lsp.CompletionConfig, string, error) {
	c := cfg.Completion
	if c.Enabled != nil && !*c.Enabled {
		return nil, "completion.enabled is false", nil
	}
	if c.Model == "" {
		return nil, "no completion.model is set", nil
	}
	name, id := c.Provider, c.Model
	if name == "" {
		var err error
		if name, id, err = config.ParseModelRef(c.Model); err != nil {
			return nil, "", fmt.Errorf("completion.model %q: %v (expected provider/model-id, or set completion.provider)", c.Model, err)
		}
	}
	client2, err := newProvider(cfg, name, &provider.Options{LookupEnv: lookupEnv, HTTPClient: client, Logger: log,
		// A completion is worth one attempt: by a retry's end the user
		// has typed on.
		Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		return nil, "", fmt.Errorf("completion.model %q: %w", c.Model, err)
	}
	api := c.API
	if api == "" {
		api = defaultCompletionAPI(name, client2.Type())
	}
	var model complete.Model
	why := ""
	switch api {
	case "chat":
		model = &complete.ChatModel{Provider: client2, Name: name, Model: id}
		why = "a chat model with a hole-filling prompt"
	default:
		if !slices.Contains(llm.FIMAPIs, llm.FIMAPI(api)) {
			return nil, "", fmt.Errorf("completion.api %q: use completions, ollama, infill, fim or chat", api)
		}
		tmpl := c.Template
		if tmpl == "" && name == "vllm" {
			tmpl = "auto" // vLLM ignores the suffix
		}
		t, err := llm.LookupFIMTemplate(tmpl, id)
		if err != nil {
			return nil, "", fmt.Errorf("completion.template: %w", err)
		}
		model = &complete.FIMModel{Client: client2, API: llm.FIMAPI(api), Model: id, Template: t}
		why = "fill-in-the-middle"
	}
	if c.API == "" {
		why += fmt.Sprintf(", api %q chosen for provider %q (set completion.api to change it)", api, name)
	}
	o := complete.Options{
		Model: model, MaxTokens: c.MaxTokens, Temperature: c.Temperature, Stop: c.Stop, Languages: c.Languages,
		Exclude: c.Exclude, MaxConcurrent: c.MaxConcurrent, SkipCommentsStrings: c.SkipComments,
		PrefixTokens: c.Context.PrefixTokens, SuffixTokens: c.Context.SuffixTokens,
		BufferTokens: c.Context.BufferTokens, DefinitionTokens: c.Context.DefinitionMax,
		NoBuffers:     c.Context.Buffers != nil && !*c.Context.Buffers,
		NoDefinitions: c.Context.Definitions != nil && !*c.Context.Definitions,
	}
	if c.Debounce != nil {
		o.Debounce = *c.Debounce
		if o.Debounce == 0 {
			o.Debounce = -1 // "0s": none
		}
	}
	if c.Context.LSPBudget != nil {
		o.LSPBudget = *c.Context.LSPBudget
	}
	return &lsp.CompletionConfig{Options: o, Items: c.Items}, model.Describe() + ": " + why, nil
}

// defaultCompletionAPI is the wire format a provider is asked in when
// completion.api is not set: its native FIM where it has one, chat for
// the providers that have no FIM endpoint.
func defaultCompletionAPI(name string, typ llm.Type) string {
	switch name {
	case "ollama":
		return string(llm.FIMOllama)
	case "llamacpp":
		return string(llm.FIMInfill)
	case "codestral", "mistral":
		return string(llm.FIMMistral)
	case "openai", "openrouter", "azure", "bedrock", "vertex", "gemini", "xai", "groq", "zai", "moonshot":
		return "chat"
	}
	if typ == llm.TypeAnthropic || typ == llm.TypeOpenAI {
		return "chat"
	}
	return string(llm.FIMCompletions)
}

// poolDefiner answers the completions' definition lookups from the
// agent's language servers.
type poolDefiner struct{ pool *diagnostics.Pool }

func (d poolDefiner) Definition(ctx context.Context, path string, line, column int) ([]complete.Location, error) {
	locs, err := d.pool.Definition(ctx, path, diagnostics.Position{Line: line, Column: column})
	if err != nil {
		return nil, err
	}
	out := make([]complete.Location, 0, len(locs))
	for _, l := range locs {
		out = append(out, complete.Location{Path: l.Path, Line: l.Start.Line})
	}
	return out, nil
}
