package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/config"
)

// terminalAsker asks permission questions on the user's terminal: the
// question on out, the answer read from in (the controlling terminal, so
// that a prompt piped into darman run does not answer questions).
type terminalAsker struct {
	in  *bufio.Reader
	out io.Writer
	mu  sync.Mutex // one question at a time; held for what follows

	// One goroutine reads the terminal for every question: a question
	// given up (its turn cancelled) must not leave a reader behind that
	// takes the answer to the next one. Started by the first question.
	lines chan string // closed at the end of the input
}

// line returns the next line typed, without its end ("" at the end of
// the input), or gives up when ctx ends.
func (a *terminalAsker) line(ctx context.Context) (string, error) {
	if a.lines == nil {
		a.lines = make(chan string, 1)
		go a.read()
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-a.lines:
		return s, nil
	}
}

func (a *terminalAsker) read() {
	defer close(a.lines)
	for {
		s, err := a.in.ReadString('\n')
		if err != nil && s == "" {
			return
		}
		a.lines <- strings.TrimSpace(s)
		if err != nil {
			return
		}
	}
}

// fresh drops a line typed while no question waited (the answer to one
// that was given up), so it does not answer the next.
func (a *terminalAsker) fresh() {
	if a.lines == nil {
		return
	}
	select {
	case <-a.lines:
	default:
	}
}

// newTerminalAsker opens the controlling terminal, or returns nil when
// there is none (CI, a pipe, an editor).
func newTerminalAsker(out io.Writer) *terminalAsker {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return nil
	}
	return &terminalAsker{in: bufio.NewReader(tty), out: out}
}

func (a *terminalAsker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fresh()
	fmt.Fprintf(a.out, "\n? darman asks to use %s: %s\n", req.Permission, req.Title)
	for _, why := range req.Reasons {
		fmt.Fprintf(a.out, "  ! %s\n", why)
	}
	always := "always"
	if len(req.Suggest) > 0 {
		always = "always allow " + strings.Join(req.Suggest, ", ")
	}
	fmt.Fprintf(a.out, "  [y] allow once  [a] %s  [n] reject  [d] reject always  (or type why you reject it)\n> ", always)
	s, err := a.line(ctx)
	if err != nil {
		return permission.Reply{}, err
	}
	switch strings.ToLower(s) {
	case "y", "yes":
		return permission.Reply{Answer: permission.AllowOnce}, nil
	case "a", "always":
		return permission.Reply{Answer: permission.AllowAlways}, nil
	case "n", "no", "":
		return permission.Reply{Answer: permission.RejectOnce}, nil
	case "d":
		return permission.Reply{Answer: permission.RejectAlways}, nil
	default:
		return permission.Reply{Answer: permission.RejectOnce, Message: s}, nil
	}
}

// grantStore keeps "always" answers in the session store, per workspace.
type grantStore struct{ s *store.Store }

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
// configuration's, then the command line's.
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
	return r, nil
}
