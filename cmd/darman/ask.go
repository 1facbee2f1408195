package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/config"
)

// grantStore keeps "always" answers in the session store, per workspace.
type grantStore struct{ s records }

func (g grantStore) LoadGrants(ctx context.Context, workspace string) ([]permission.Rule, error) {
	grants, err := g.s.Grants(ctx, workspace)
	if err != nil {
		return nil, err
	}
	rules := make([]permission.Rule, len(grants))
	for i, gr := range grants {
		rules[i] = permission.Rule{Permission: gr.Permission, Pattern: gr.Pattern, Action: permission.Action(gr.Action)}
	}
	return rules, nil
}

func (g grantStore) AddGrants(ctx context.Context, workspace string, rules []permission.Rule) error {
	for _, r := range rules {
		err := g.s.PutGrant(ctx, store.Grant{Workspace: workspace, Permission: r.Permission, Pattern: r.Pattern,
			Action: string(r.Action), Created: time.Now().UTC()})
		if err != nil {
			return err
		}
	}
	return nil
}

// rules are the permission rules in force: darman's defaults, then the
// configuration's, then the command line's. Only the defaults are marked
// permission.Rule.Default: what the others ask is the user's own question,
// which a PreToolUse hook's allow does not answer.
func rules(cfg config.Config, extra []permission.Rule) []permission.Rule {
	out := permission.Defaults()
	for _, r := range cfg.Permission {
		out = append(out, permission.Rule{Permission: r.Permission, Pattern: r.Pattern, Action: permission.Action(r.Action)})
	}
	return append(out, extra...)
}

// parseRuleFlag reads --allow/--deny values: "permission" or
// "permission:pattern", e.g. "edit" or "bash:go test *".
func parseRuleFlag(v string, action permission.Action) (permission.Rule, error) {
	perm, pattern, ok := strings.Cut(v, ":")
	if !ok {
		pattern = "*"
	}
	r := permission.Rule{Permission: strings.TrimSpace(perm), Pattern: pattern, Action: action}
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("--%s %q: %v (expected permission or permission:pattern, e.g. \"bash:go test *\")", action, v, err)
	}
	if r.Permission != "" {
		if msg := config.CheckPermissionName(r.Permission); msg != "" {
			return r, fmt.Errorf("--%s %q: %s", action, v, msg)
		}
	}
	return r, nil
}
