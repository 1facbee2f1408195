// Package doctor is darman doctor's report: its lines, grouped by
// section, and the checks that word each part of darman as a line. The
// command (cmd/darman) builds what is checked — the configuration, the
// store, the models, the language and MCP servers, the sandbox — and hands
// it to the checks here, which judge and describe it; none of them builds
// a part of darman itself.
package doctor

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/samber/lo"

	"github.com/darman-dev/darman/diagnostics"
)

// Check is one line of the doctor's report.
type Check struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	// Status is "ok", "missing" (optional and absent), "warn" or "fail"
	// (required and broken: doctor exits 1).
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Report is what doctor prints, and its --json.
type Report struct {
	// Version is darman's build (cmd/darman's buildInfo).
	Version any     `json:"version"`
	Checks  []Check `json:"checks"`
	// LanguageServers is each language server's state as the diagnostics
	// pool sees it (started ones only with --check-lsp).
	LanguageServers []diagnostics.ServerStatus `json:"languageServers,omitempty"`
}

// Add appends a line.
func (r *Report) Add(section, name, status, detail string) {
	r.Checks = append(r.Checks, Check{Section: section, Name: name, Status: status, Detail: detail})
}

// Failed says whether a line failed (doctor exits 1).
func (r *Report) Failed() bool {
	return lo.ContainsBy(r.Checks, func(c Check) bool { return c.Status == "fail" })
}

// InsertBefore puts checks before the first check of section (at the end
// when there is none).
func (r *Report) InsertBefore(section string, checks []Check) {
	i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Section == section })
	if i < 0 {
		i = len(r.Checks)
	}
	r.Checks = slices.Insert(r.Checks, i, checks...)
}

var marks = map[string]string{"ok": "✓", "missing": "·", "warn": "!", "fail": "✗"}

// Print writes the report for a person: the heading line (darman's
// version), then each section's lines with their marks.
func (r *Report) Print(w io.Writer, heading string) {
	fmt.Fprintln(w, heading)
	section := ""
	for _, c := range r.Checks {
		if c.Section != section {
			section = c.Section
			fmt.Fprintf(w, "\n%s\n", section)
		}
		line := fmt.Sprintf("  %s %s", marks[c.Status], c.Name)
		if c.Detail != "" {
			line += ": " + strings.ReplaceAll(c.Detail, "\n", "\n      ")
		}
		fmt.Fprintln(w, line)
	}
	if fails := lo.CountBy(r.Checks, func(c Check) bool { return c.Status == "fail" }); fails > 0 {
		fmt.Fprintf(w, "\n%d problem(s) need fixing.\n", fails)
	}
}
