package doctor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/internal/config"
)

// Model reports the model darman would use (sel, or why none: selErr), how
// it was chosen, and each configured or preset provider's key source
// (never the key), each provider's client made by client. With check,
// the model is sent one tiny request.
func Model(ctx context.Context, r *Report, c config.Config, sel *provider.Selection, selErr error, client func(name string) (*llm.Client, error), check bool) {
	switch {
	case selErr != nil:
		// darman has nothing to talk to: required, and broken.
		r.Add("model", "model", "fail", selErr.Error())
	case !sel.Client.Model(sel.Model).Known:
		r.Add("model", sel.Ref(), "warn", fmt.Sprintf("%s; but darman knows no model %q of %s (neither its catalog nor the configuration): its limits are defaults and its cost is counted as 0. "+
			"Check the id (darman models lists the known ones; --check-model asks the server), or describe it in provider.%s.models.%s",
			sel.Reason, sel.Model, sel.Client.Name(), sel.Client.Name(), sel.Model))
	default:
		r.Add("model", sel.Ref(), "ok", sel.Reason)
	}
	names := map[string]bool{}
	for _, n := range provider.PresetNames() {
		names[n] = true
	}
	for n := range c.Provider {
		names[n] = true
	}
	behaviour := map[string]string{}
	for _, p := range provider.Presets() {
		behaviour[p.Name] = presetBehaviour(p)
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		_, configured := c.Provider[name]
		client, err := client(name)
		about := ""
		if b := behaviour[name]; b != "" {
			about = "; " + b
		}
		switch {
		case err != nil && configured:
			r.Add("providers", name, "fail", unnamed(err, name)+about)
		case err != nil:
			r.Add("providers", name, "missing", unnamed(err, name)+about)
		case client.KeySource() != "":
			r.Add("providers", name, "ok", fmt.Sprintf("%s, key from %s%s", client.BaseURL(), client.KeySource(), about))
		default:
			r.Add("providers", name, "missing", client.BaseURL()+", no key"+about)
		}
	}
	if check && sel != nil {
		res := provider.Check(ctx, sel.Client, sel.Model)
		status := "ok"
		if !res.OK() {
			status = "fail"
		}
		r.Add("model", "check", status, res.String())
	}
}

// unnamed is err's text without the provider's name in front, which the
// error carries for other places and doctor's line already begins with
// ("anthropic: provider anthropic: provider \"anthropic\": no API key").
func unnamed(err error, name string) string {
	msg := err.Error()
	for _, prefix := range []string{"provider " + name + ": ", fmt.Sprintf("provider %q: ", name)} {
		for strings.HasPrefix(msg, prefix) {
			msg = strings.TrimPrefix(msg, prefix)
		}
	}
	return msg
}

// presetBehaviour says, for doctor, what a preset speaks and what it is
// sent back: "openai-chat; reasoning_content sent back with tool-call
// turns; prompt_tokens include cached tokens (checked against
// total_tokens); 4 catalog models".
func presetBehaviour(p provider.PresetInfo) string {
	parts := []string{p.API}
	if p.Auth != "API key" && p.Auth != "none" {
		parts = append(parts, p.Auth)
	}
	parts = append(parts, "reasoning: "+p.Reasoning, "usage: "+p.Usage)
	if n := len(p.Models); n > 0 {
		parts = append(parts, fmt.Sprintf("%d catalog model%s", n, map[bool]string{true: "s"}[n > 1]))
	}
	return strings.Join(parts, "; ")
}
