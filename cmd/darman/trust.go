package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/cmd/darman/internal/doctor"
	"github.com/darman-dev/darman/cmd/darman/internal/terminal"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/server/acp"
	"github.com/darman-dev/darman/server/lsp"
)

// Workspace trust: what a folder's own files may change (config.Options
// Trust). The decision is made once per load, from the user's records
// (darman trust), a front's own signal (darman run --trust, the editor's
// workspace trust) or the user's answer to the question a front asks.

// trustAnswer is the user's answer to the trust question.
type trustAnswer int

const (
	answerNotNow trustAnswer = iota
	answerTrust
	answerNever
)

// trustPolicy is how one load decides.
type trustPolicy struct {
	// force trusts the folder for this process, recording nothing
	// (darman run --trust; an editor that says the folder is trusted).
	force bool
	// editorDenied: the editor said the folder is not trusted (VS Code's
	// restricted mode); its signal wins over darman's records.
	editorDenied bool
	// ask puts the question to the user; nil means nobody can be asked,
	// and a folder without a record stays untrusted.
	ask func(folder string, items []config.Item, changed bool) trustAnswer
}

// trustOutcome is what the decision came to, for the fronts' notices and
// doctor.
type trustOutcome struct {
	root    string
	items   []config.Item // what the folder would widen (config and agent files)
	trusted bool
	verdict config.TrustVerdict
	// editorDenied: the editor's signal kept the folder untrusted.
	editorDenied bool
	err          error // the records could not be read or written
}

// askable reports whether the user may be asked: the folder would widen,
// is not trusted, and neither the editor nor a never decided.
func (o trustOutcome) askable() bool {
	return !o.trusted && len(o.items) > 0 && !o.editorDenied && o.verdict != config.IsNever
}

// recordTrust records the user's answer for the folder at root, with the
// hash of what it configures now, as a load sees it.
func (a *app) recordTrust(root string, never bool) (config.TrustRecord, []config.Item, error) {
	store, err := config.OpenTrust(nil)
	if err != nil {
		return config.TrustRecord{}, nil, err
	}
	if never {
		rec, err := store.Set(root, config.Never, "")
		return rec, nil, err
	}
	var out trustOutcome
	if _, err := config.Load(config.Options{WorkspaceRoot: root, Flags: a.flags, Trust: decideTrust(trustPolicy{}, &out)}); err != nil {
		return config.TrustRecord{}, nil, err
	}
	rec, err := store.Set(root, config.Trusted, config.Hash(out.items))
	return rec, out.items, err
}

// workspaceItems adds the widening settings of the workspace's agent
// files, and its command files that run shell commands, to the
// configuration's.
func workspaceItems(ws config.Workspace) []config.Item {
	d := prompt.LocateDirs(ws.Root, nil)
	cat := agents.Load(agents.Options{Dirs: d})
	return slices.Concat(ws.Items, cat.Widening(), prompt.LoadCommands(d).Widening(ws.Root))
}

// workspaceCommands are the commands of the workspace at root; when the
// folder is not trusted, the workspace's own command files do not run
// their !`cmd` lines (prompt.ErrUntrusted).
func workspaceCommands(root string, trusted bool) *prompt.Commands {
	cmds := prompt.LoadCommands(prompt.LocateDirs(root, nil))
	if !trusted {
		cmds = cmds.Distrust()
	}
	return cmds
}

// decideTrust returns the config.Options Trust function of a policy; the
// outcome is written to *out.
func decideTrust(p trustPolicy, out *trustOutcome) func(config.Workspace) bool {
	return func(ws config.Workspace) bool {
		*out = trustOutcome{root: ws.Root, items: workspaceItems(ws)}
		if len(out.items) == 0 {
			out.trusted = true
			return true
		}
		if p.force {
			out.trusted = true
			return true
		}
		if p.editorDenied {
			out.editorDenied = true
			return false
		}
		store, err := config.OpenTrust(nil)
		if err != nil {
			out.err = err
			return false
		}
		hash := config.Hash(out.items)
		out.verdict, out.err = store.Check(ws.Root, hash)
		switch {
		case out.err != nil:
			return false
		case out.verdict == config.IsTrusted:
			out.trusted = true
			return true
		case out.verdict == config.IsNever || p.ask == nil:
			return false
		}
		switch p.ask(ws.Root, out.items, out.verdict == config.Changed) {
		case answerTrust:
			_, out.err = store.Set(ws.Root, config.Trusted, hash)
			out.trusted = true
		case answerNever:
			_, out.err = store.Set(ws.Root, config.Never, "")
			out.verdict = config.IsNever
		}
		return out.trusted
	}
}

// notice is the one line every front shows when the folder's settings
// were left out: what, and how to trust it. "" when nothing was.
func (o trustOutcome) notice() string {
	if o.trusted || len(o.items) == 0 {
		return ""
	}
	why := "this folder is not trusted"
	switch {
	case o.editorDenied:
		why = "the editor does not trust this folder (restricted mode)"
	case o.verdict == config.Changed:
		why = "this folder's settings changed since you trusted it"
	case o.verdict == config.IsNever:
		why = "you chose never to trust this folder"
	}
	s := fmt.Sprintf("%s, so darman ignores what would widen its defences: %s. To trust it: darman trust %s", why, itemKeys(o.items), quotePath(o.root))
	if o.err != nil {
		s += " (" + o.err.Error() + ")"
	}
	return s
}

// itemKeys names the items briefly, grouped by file: "darman.json:
// permission.bash, hooks.PreToolUse; .mcp.json: mcpServers.db".
func itemKeys(items []config.Item) string {
	var parts []string
	var source string
	var keys []string
	flush := func() {
		if source != "" {
			parts = append(parts, source+": "+strings.Join(keys, ", "))
		}
	}
	for _, it := range items {
		if it.Source != source {
			flush()
			source, keys = it.Source, nil
		}
		if !slices.Contains(keys, it.Key) {
			keys = append(keys, it.Key)
		}
	}
	flush()
	return strings.Join(parts, "; ")
}

// trustSummary is the question's body: every item with its value, one a
// line, and what stays in force meanwhile.
func trustSummary(folder string, items []config.Item, changed bool) string {
	var b strings.Builder
	if changed {
		fmt.Fprintf(&b, "%s changed since you trusted it; it now ", folder)
	} else {
		fmt.Fprintf(&b, "%s ", folder)
	}
	b.WriteString("configures what only a folder you trust may:\n")
	for _, it := range items {
		fmt.Fprintf(&b, "  %s\n", it)
	}
	b.WriteString("Untrusted, darman ignores these; the folder's deny and ask rules, a stricter sandbox and its instructions (AGENTS.md) apply either way.\n")
	return b.String()
}

func quotePath(p string) string {
	if strings.ContainsAny(p, " \t'\"$`\\") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}

func (a *app) trustCommand() *cobra.Command {
	var list bool
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust [PATH]",
		Short: "Trust a folder's own configuration (hooks, MCP servers, allow rules, providers)",
		Long: `trust records that you trust the folder PATH (default: the workspace), so
that what its own files configure applies: darman.json and .darman/, the
hooks of .claude/settings.json, the servers of .mcp.json and
.vscode/mcp.json, the permission blocks of its agent files. An untrusted
folder's files may only narrow what darman does (deny and ask rules, a
stricter sandbox, instructions).

The record holds a hash of what the folder configures: when a hook, a
server, a provider or a rule changes, darman asks again. Trusting a folder
trusts every folder below it, whatever they configure. The records are
in trust.json in darman's user config directory.

  darman trust              trust the workspace as it is now
  darman trust ~/src        trust everything below ~/src
  darman trust --list       show the records
  darman trust --revoke P   forget P's record`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := config.OpenTrust(nil)
			if err != nil {
				return err
			}
			if list {
				if len(args) > 0 {
					return fmt.Errorf("--list takes no folder")
				}
				recs, err := store.List()
				if err != nil {
					return err
				}
				if len(recs) == 0 {
					fmt.Fprintln(a.stdout, "no folder is trusted (darman trust PATH trusts one)")
				}
				for _, r := range recs {
					what := "trusted, as configured then"
					switch {
					case r.Answer == config.Never:
						what = "never trusted"
					case r.Hash == "":
						what = "trusted, whatever it configures"
					}
					fmt.Fprintf(a.stdout, "%s\t%s\t%s\n", r.Path, what, r.At.Format("2006-01-02"))
				}
				return nil
			}
			dir := ""
			if len(args) > 0 {
				dir = args[0]
			} else if dir, err = a.workspaceRoot(); err != nil {
				return err
			}
			if revoke {
				found, err := store.Revoke(dir)
				switch {
				case err != nil:
					return err
				case !found:
					return fmt.Errorf("%s has no trust record (darman trust --list shows them)", dir)
				}
				fmt.Fprintf(a.stdout, "%s: no longer trusted\n", dir)
				return nil
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is not a folder: darman trust takes an existing folder (the workspace when none is given)", abs)
			}
			rec, items, err := a.recordTrust(abs, false)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				fmt.Fprintf(a.stdout, "%s: trusted (it configures nothing that needs trust yet)\n", rec.Path)
				return nil
			}
			fmt.Fprintf(a.stdout, "%s: trusted; what it configures now applies:\n", rec.Path)
			for _, it := range items {
				fmt.Fprintf(a.stdout, "  %s\n", it)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trust records")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the folder's record")
	return cmd
}

// askTrust puts the trust question on the terminal.
func askTrust(ctx context.Context, ta *terminal.Asker) func(string, []config.Item, bool) trustAnswer {
	return func(folder string, items []config.Item, changed bool) trustAnswer {
		s, err := ta.Line(ctx, "\n? darman: "+trustSummary(folder, items, changed)+"  [t] trust this folder  [n] not now  [v] never ask again\n> ")
		if err != nil {
			return answerNotNow
		}
		switch strings.ToLower(s) {
		case "t", "trust", "y", "yes":
			return answerTrust
		case "v", "never":
			return answerNever
		}
		return answerNotNow
	}
}

// lspPolicy is the trust policy of an editor's folder: the editor's own
// signal when it sent one (VS Code's workspace trust), else darman's
// records; the question is the server's (lsp.TrustState).
func lspPolicy(setup lsp.Setup) trustPolicy {
	if setup.EditorTrusted != nil {
		return trustPolicy{force: *setup.EditorTrusted, editorDenied: !*setup.EditorTrusted}
	}
	return trustPolicy{}
}

// lspTrust is the outcome as the LSP server tells it.
func lspTrust(o trustOutcome) lsp.TrustState {
	st := lsp.TrustState{Trusted: o.trusted, Notice: o.notice(), Ignored: o.ignored()}
	if o.askable() {
		st.Question = trustSummary(o.root, o.items, o.verdict == config.Changed)
	}
	return st
}

// ignored lists what was left out, "" when trusted.
func (o trustOutcome) ignored() []string {
	if o.trusted {
		return nil
	}
	out := []string{}
	for _, it := range o.items {
		out = append(out, it.String())
	}
	return out
}

// status is the trust part of darman.status and doctor --json.
func (o trustOutcome) status() map[string]any {
	return map[string]any{"trusted": o.trusted, "ignored": o.ignored(), "records": trustRecordsFile()}
}

func trustRecordsFile() string {
	if store, err := config.OpenTrust(nil); err == nil {
		return store.Path()
	}
	return ""
}

// acpTrust is the outcome as darman acp tells it: asked once per folder
// through session/request_permission.
func (a *app) acpTrust(root string, o trustOutcome) acp.Trust {
	t := acp.Trust{Notice: o.notice(), Record: func(_ context.Context, never bool) error {
		_, _, err := a.recordTrust(root, never)
		return err
	}}
	if o.askable() {
		t.Question = trustSummary(o.root, o.items, o.verdict == config.Changed) +
			"Allow always trusts it now (its sessions take its configuration at their next prompt); reject always never asks again."
	}
	return t
}

// diagnose is doctor's trust section: whether the folder's own settings
// apply, and each one left out.
func (o trustOutcome) diagnose(r *doctor.Report) {
	const section = "trust"
	switch {
	case len(o.items) == 0:
		r.Add(section, "workspace", "ok", "configures nothing that needs trust")
	case o.trusted:
		r.Add(section, "workspace", "ok", fmt.Sprintf("trusted: its %d widening settings apply (%s)", len(o.items), itemKeys(o.items)))
	default:
		r.Add(section, "workspace", "warn", o.notice())
		for _, it := range o.items {
			r.Add(section, "ignored", "warn", it.String())
		}
	}
}
