package main

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/samber/lo"
	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/internal/config"
)

// check is one line of the doctor's report.
type check struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Status is "ok", "missing" (optional and absent), "warn" or "fail"
	// (required and broken: doctor exits 1).
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

type report struct {
	Version buildInfo `json:"version"`
	Checks  []check   `json:"checks"`
}

func (r *report) add(section, name, status, detail string) {
	r.Checks = append(r.Checks, check{Section: section, Name: name, Status: status, Detail: detail})
}

func (r *report) failed() bool {
	return lo.ContainsBy(r.Checks, func(c check) bool { return c.Status == "fail" })
}

func (a *app) doctorCommand() *cobra.Command {
	var asJSON, checkModel bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, data directory, providers and language servers",
		Long: `doctor reports what darman found: the config files it merged, the data
directory and the health of the session store, which model providers have a
key (keys are never printed) and which language servers are on PATH.
It exits with status 1 when something required is broken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := a.diagnose(cmd.Context(), checkModel)
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else {
				printReport(a, r)
			}
			if r.failed() {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&checkModel, "check-model", false, "send the model one tiny request to check the provider, key and model")
	return cmd
}

func (a *app) diagnose(ctx context.Context, checkModel bool) *report {
	r := &report{Version: readBuildInfo()}
	loaded, err := a.config()
	if err != nil {
		r.add("config", "configuration", "fail", err.Error())
		return r
	}
	projectFound := false
	for _, src := range loaded.Sources {
		switch {
		case src.Found:
			r.add("config", src.Path, "ok", src.Layer)
			projectFound = projectFound || src.Layer == "project"
		case src.Layer == "user":
			r.add("config", src.Path, "missing", "user config, not present")
		}
	}
	if !projectFound {
		if root, err := a.workspaceRoot(); err == nil {
			r.add("config", filepath.Join(root, "darman.json"), "missing",
				"project config, not present (nor .darman/config.json here or in a parent up to the repository root)")
		}
	}
	for _, w := range loaded.Warnings {
		r.add("config", "warning", "warn", w)
	}
	c := loaded.Config
	a.diagnoseStore(ctx, r)
	a.diagnoseModel(ctx, r, c, checkModel)
	if root, err := a.workspaceRoot(); err == nil {
		log, _ := a.logger()
		diagnoseMCPServers(ctx, r, c, root, log)
	}
	diagnoseLanguageServers(r, c)
	return r
}

func (a *app) diagnoseStore(ctx context.Context, r *report) {
	s, err := a.openStore(ctx)
	if err != nil {
		r.add("data", "session store", "fail", err.Error())
		return
	}
	st, err := s.Stats(ctx)
	if err != nil {
		r.add("data", s.Dir(), "fail", err.Error())
		return
	}
	who := "this process"
	if !s.Owner() {
		who = fmt.Sprintf("served by darman process %d", st.OwnerPID)
	}
	r.add("data", s.Dir(), "ok", fmt.Sprintf("%d sessions, %s on disk, schema %d, %s",
		st.Sessions, humanize.IBytes(uint64(st.LSMBytes+st.ValueLogBytes)), st.Schema, who))
}

// diagnoseModel reports the model darman would use, how it was chosen, and
// each configured or preset provider's key source (never the key).
func (a *app) diagnoseModel(ctx context.Context, r *report, c config.Config, check bool) {
	log, _ := a.logger()
	m := newModels(c, log)
	sel, err := m.selectModel(ctx)
	if err != nil {
		// No model is not broken darman: doctor says what to set.
		r.add("model", "model", "warn", err.Error())
	} else {
		r.add("model", sel.Ref(), "ok", sel.Reason)
	}
	names := map[string]bool{}
	for _, n := range llm.PresetNames() {
		names[n] = true
	}
	for n := range c.Provider {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		_, configured := c.Provider[name]
		client, err := m.client(name)
		switch {
		case err != nil && configured:
			r.add("providers", name, "fail", err.Error())
		case err != nil:
			r.add("providers", name, "missing", err.Error())
		case client.KeySource() != "":
			r.add("providers", name, "ok", fmt.Sprintf("%s, key from %s", client.BaseURL(), client.KeySource()))
		default:
			r.add("providers", name, "missing", client.BaseURL()+", no key")
		}
	}
	if check && sel != nil {
		res := llm.Check(ctx, sel.Client, sel.Model)
		status := "ok"
		if !res.OK() {
			status = "fail"
		}
		r.add("model", "check", status, res.String())
	}
}

func diagnoseLanguageServers(r *report, c config.Config) {
	langs := make([]string, 0, len(c.LSP))
	for lang := range c.LSP {
		langs = append(langs, lang)
	}
	slices.Sort(langs)
	for _, lang := range langs {
		ls := c.LSP[lang]
		switch {
		case ls.Disabled:
			r.add("language servers", lang, "missing", "disabled in config")
		case len(ls.Command) == 0:
			r.add("language servers", lang, "warn", "no command configured")
		default:
			if path, err := exec.LookPath(ls.Command[0]); err == nil {
				r.add("language servers", lang, "ok", path)
			} else {
				r.add("language servers", lang, "missing", ls.Command[0]+" is not on PATH; diagnostics for "+strings.Join(ls.Extensions, " ")+" files are off")
			}
		}
	}
}

var marks = map[string]string{"ok": "✓", "missing": "·", "warn": "!", "fail": "✗"}

func printReport(a *app, r *report) {
	v := r.Version
	fmt.Fprintf(a.stdout, "darman %s (%s, %s)\n", v.Version, v.Go, v.Platform)
	section := ""
	for _, c := range r.Checks {
		if c.Section != section {
			section = c.Section
			fmt.Fprintf(a.stdout, "\n%s\n", section)
		}
		line := fmt.Sprintf("  %s %s", marks[c.Status], c.Name)
		if c.Detail != "" {
			line += ": " + strings.ReplaceAll(c.Detail, "\n", "\n      ")
		}
		fmt.Fprintln(a.stdout, line)
	}
	if fails := lo.CountBy(r.Checks, func(c check) bool { return c.Status == "fail" }); fails > 0 {
		fmt.Fprintf(a.stdout, "\n%d problem(s) need fixing.\n", fails)
	}
}
