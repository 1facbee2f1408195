package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/llm"
)

// modelRow is one model darman models lists.
type modelRow struct {
	Model         string   `json:"model"` // provider/model-id
	Name          string   `json:"name,omitempty"`
	Known         bool     `json:"known"`
	ContextWindow int      `json:"contextWindow,omitempty"`
	MaxOutput     int      `json:"maxOutput,omitempty"`
	Input         []string `json:"input"` // text, image
	Reasoning     bool     `json:"reasoning"`
	Tools         bool     `json:"tools"`
	// FIM is the fill-in-the-middle template completion.template "auto"
	// picks for the model; "" when there is none.
	FIM  string    `json:"fimTemplate,omitempty"`
	Cost *llm.Cost `json:"cost,omitempty"` // US dollars per million tokens; nil when unknown
	// Served is set by --remote: whether the provider's server lists it.
	Served *bool `json:"served,omitempty"`
}

// modelsProvider is one provider's part of darman models.
type modelsProvider struct {
	Provider string `json:"provider"`
	// Source says where the list comes from.
	Source string     `json:"source"`
	Models []modelRow `json:"models"`
	// Remote is what --remote's question to the server answered, when it
	// failed.
	RemoteError string `json:"remoteError,omitempty"`
}

func (a *app) modelsCommand() *cobra.Command {
	var asJSON, remote bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models of the providers darman can reach, with what each takes and costs",
		Long: `models lists, for every provider the configuration makes usable (the
configured ones, and anthropic, openai and openrouter when their key is in
the environment), the models darman knows: the context window, the output
limit, what each takes (text, images), whether it reasons, the FIM
template darman's completions use for it ("auto"), and its price in US
dollars per million input and output tokens.

The list comes from the configuration's models of the provider and from
darman's built-in catalog; a local server (Ollama, llama.cpp, vLLM) lists
only what the configuration names, since darman cannot know what it holds
without asking it. --remote asks each server which models it serves, and
marks the list with it (a model the server serves but the catalog does not
know is listed with unknown limits and prices).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loaded, err := a.config()
			if err != nil {
				return err
			}
			log, err := a.logger()
			if err != nil {
				return err
			}
			providers := usableProviders(loaded.Config, nil, log)
			if len(providers) == 0 {
				return &exitError{code: 1, err: fmt.Errorf("no provider is usable: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY, or configure a provider (docs/providers.md); darman doctor says what is missing")}
			}
			var out []modelsProvider
			for _, p := range providers {
				mp := modelsProvider{Provider: p.Name, Source: modelsSource(p.Name, loaded.Config.Provider[p.Name].Models != nil, len(p.Models))}
				var served []string
				if remote {
					ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
					served, err = p.Client.ListModels(ctx)
					cancel()
					if err != nil {
						mp.RemoteError = err.Error()
						served = nil
					} else {
						mp.Source += "; checked against the server's list"
					}
				}
				models := p.Models
				for _, id := range served {
					if !slices.ContainsFunc(models, func(m llm.ModelInfo) bool { return m.ID == id }) {
						models = append(models, p.Client.Model(id))
					}
				}
				slices.SortFunc(models, func(a, b llm.ModelInfo) int { return strings.Compare(a.ID, b.ID) })
				for _, m := range models {
					row := newModelRow(p.Name, m)
					if served != nil {
						row.Served = new(slices.Contains(served, m.ID))
					}
					mp.Models = append(mp.Models, row)
				}
				out = append(out, mp)
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			return printModels(a.stdout, out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&remote, "remote", false, "ask each provider's server which models it serves")
	return cmd
}

func modelsSource(provider string, configured bool, n int) string {
	switch {
	case configured && n > 0:
		return "the configuration's models of " + provider + ", then darman's built-in catalog"
	case n == 0:
		return "none known: configure provider." + provider + ".models, or use --remote"
	}
	return "darman's built-in catalog"
}

func newModelRow(provider string, m llm.ModelInfo) modelRow {
	r := modelRow{Model: provider + "/" + m.ID, Known: m.Known, Input: []string{"text"}, Reasoning: m.Reasoning, Tools: m.Tools}
	if m.Name != m.ID {
		r.Name = m.Name
	}
	if m.Images {
		r.Input = append(r.Input, "image")
	}
	if m.Known {
		r.ContextWindow, r.MaxOutput = m.ContextWindow, m.MaxOutput
		if m.Cost != (llm.Cost{}) {
			r.Cost = &m.Cost
		}
	}
	if t, err := llm.LookupFIMTemplate("auto", m.ID); err == nil && t != nil {
		r.FIM = t.Name
	}
	return r
}

func printModels(w io.Writer, providers []modelsProvider) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	unknown := false
	for i, p := range providers {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s — %s\n", p.Provider, p.Source)
		if p.RemoteError != "" {
			fmt.Fprintf(tw, "  (the server was not asked: %s)\n", p.RemoteError)
		}
		if len(p.Models) == 0 {
			continue
		}
		served := p.Models[0].Served != nil
		fmt.Fprint(tw, "  MODEL\tCONTEXT\tOUTPUT\tINPUT\tREASONING\tFIM\t$/M IN\t$/M OUT")
		if served {
			fmt.Fprint(tw, "\tSERVED")
		}
		fmt.Fprintln(tw)
		for _, m := range p.Models {
			price := "?\t?"
			unknown = unknown || m.Cost == nil || !m.Known
			if m.Cost != nil {
				price = fmt.Sprintf("%.2f\t%.2f", m.Cost.Input, m.Cost.Output)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s", m.Model, tokens(m.ContextWindow), tokens(m.MaxOutput),
				strings.Join(m.Input, "+"), yesNo(m.Reasoning), dash(m.FIM), price)
			if served {
				fmt.Fprintf(tw, "\t%s", yesNo(*m.Served))
			}
			fmt.Fprintln(tw)
		}
	}
	if unknown {
		fmt.Fprintln(tw, "\n? = not known to darman: set provider.NAME.models.ID (contextWindow, maxOutput, cost, images) in the configuration.")
	}
	return tw.Flush()
}

// tokens writes a token count readably: 200k, 1M; "?" when unknown.
func tokens(n int) string {
	switch {
	case n == 0:
		return "?"
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
