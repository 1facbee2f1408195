package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm"
)

// SelectOptions say what is configured and where Select may look.
type SelectOptions struct {
	// Model is the configured model, "provider/model-id"; empty means
	// darman looks for one.
	Model string
	// Providers are the configured providers, by name.
	Providers map[string]Settings
	// Options build the clients; nil means defaults. Its LookupEnv and
	// HTTPClient are also what Select uses to look around.
	Options *Options
	// ProbeTimeout bounds the look for a local Ollama; zero means 1 s.
	ProbeTimeout time.Duration
}

// Selection is the provider and model darman will use.
type Selection struct {
	Client *llm.Client
	// Model is the model id, without the provider's name.
	Model string
	// Reason says how the choice was made, for `darman doctor`.
	Reason string
}

// Ref is the selection as a config value: "provider/model-id".
func (s *Selection) Ref() string { return s.Client.Name() + "/" + s.Model }

// ErrNoModel is what [Select] returns, wrapped in a [*NoModelError], when it
// finds nothing to use.
var ErrNoModel = errors.New("no model configured")

// NoModelError explains what to set when no model could be selected.
type NoModelError struct {
	// Ollama is why Ollama could not be used.
	Ollama error
}

func (e *NoModelError) Unwrap() error { return ErrNoModel }

func (e *NoModelError) Error() string {
	var b strings.Builder
	b.WriteString("darman has no model to talk to; do one of these:\n")
	b.WriteString(`  - set "model" in darman's config, e.g. "anthropic/claude-sonnet-4-6" or "ollama/qwen3:8b"` + "\n")
	for _, name := range []string{"anthropic", "openai", "openrouter"} {
		p := presets[name]
		fmt.Fprintf(&b, "  - set %s (darman then uses %s/%s)\n", p.keyEnv, name, p.model)
	}
	b.WriteString("  - start Ollama on its default address and pull a model (ollama pull qwen3:8b)")
	if e.Ollama != nil {
		fmt.Fprintf(&b, "; %v", e.Ollama)
	}
	return b.String()
}

// SplitModelRef splits "provider/model-id" at the first '/': the model id
// itself may contain '/' and ':' ("openrouter/anthropic/claude-sonnet-4.6",
// "ollama/qwen3:8b").
func SplitModelRef(ref string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(ref, "/")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("model %q: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-6 or ollama/qwen3:8b", ref)
	}
	return provider, model, nil
}

// Select picks the provider and model. A configured model wins. With none,
// darman uses a configured provider that lists models, then a local
// Ollama server that has a model, then the first of ANTHROPIC_API_KEY,
// OPENAI_API_KEY and OPENROUTER_API_KEY that is set; otherwise it returns
// a [*NoModelError] that says exactly what to set.
func Select(ctx context.Context, o SelectOptions) (*Selection, error) {
	var opts Options
	if o.Options != nil {
		opts = *o.Options
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	settings := func(name string) Settings {
		s, ok := o.Providers[name]
		if !ok {
			s = Settings{}
		}
		s.Name = name
		return s
	}

	if o.Model != "" {
		name, model, err := SplitModelRef(o.Model)
		if err != nil {
			return nil, err
		}
		c, err := New(settings(name), &opts)
		if err != nil {
			return nil, err
		}
		return &Selection{Client: c, Model: model, Reason: fmt.Sprintf("the config sets model %q", o.Model)}, nil
	}

	names := make([]string, 0, len(o.Providers))
	for name := range o.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := settings(name)
		if len(s.Models) == 0 {
			continue
		}
		ids := make([]string, 0, len(s.Models))
		for id := range s.Models {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		c, err := New(s, &opts)
		if err != nil {
			continue
		}
		return &Selection{Client: c, Model: ids[0],
			Reason: fmt.Sprintf("no model is set; provider %q is configured with model %q", name, ids[0])}, nil
	}

	sel, ollamaErr := probeOllama(ctx, settings("ollama"), &opts, o.ProbeTimeout)
	if sel != nil {
		return sel, nil
	}

	for _, name := range []string{"anthropic", "openai", "openrouter"} {
		p := presets[name]
		if v, ok := opts.LookupEnv(p.keyEnv); !ok || v == "" {
			continue
		}
		c, err := New(settings(name), &opts)
		if err != nil {
			return nil, err
		}
		return &Selection{Client: c, Model: p.model,
			Reason: fmt.Sprintf("no model is set and %s is; using darman's default model for %s", p.keyEnv, p.display)}, nil
	}
	return nil, &NoModelError{Ollama: ollamaErr}
}

// probeOllama looks for an Ollama server and picks its first model.
func probeOllama(ctx context.Context, s Settings, opts *Options, timeout time.Duration) (*Selection, error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	probe := *opts
	// A probe is one short question: no retries, and a client whose
	// timeout covers the whole exchange.
	probe.Retry = llm.RetryPolicy{MaxAttempts: 1}
	if probe.HTTPClient == nil {
		probe.HTTPClient = &http.Client{Timeout: timeout}
	}
	c, err := New(s, &probe)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ids, err := c.ListModels(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("Ollama did not answer at %s within %s", c.BaseURL(), llm.HumanDuration(timeout))
		}
		return nil, fmt.Errorf("Ollama is not running at %s (%v)", c.BaseURL(), shortCause(err))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("Ollama runs at %s but has no model", c.BaseURL())
	}
	// The client for the conversation keeps the caller's options.
	c, err = New(s, opts)
	if err != nil {
		return nil, err
	}
	return &Selection{Client: c, Model: ids[0],
		Reason: fmt.Sprintf("no model is set; Ollama runs at %s with %d model(s), using the first it lists", c.BaseURL(), len(ids))}, nil
}

// shortCause is the innermost message of a network error.
func shortCause(err error) string {
	var e *llm.Error
	if errors.As(err, &e) && e.Err != nil {
		err = e.Err
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
