package permission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/darman-dev/darman/agent"
)

// Options configure a Checker.
type Options struct {
	// Root is the workspace root; required, and it must exist. Paths are
	// judged against it and grants are stored under it.
	Root string
	// Rules come from configuration, in order: Defaults, then the global
	// and project files. nil means no rules, so everything asks. What a
	// rule not marked Default asks is the user's own question (see
	// Request.AskedBy).
	Rules []Rule
	// Grants keeps "always" answers for later sessions in Root; nil keeps
	// them for this Checker only.
	Grants GrantStore
	// Asker asks the human; nil means no one can be asked and Fallback
	// decides, as it does for a question the Asker answers with
	// ErrUnattended.
	Asker Asker
	// Fallback is what a call that needs an answer becomes when Asker is
	// nil: Deny (the zero value) rejects it with a message telling the model
	// why; Allow lets it run, for trusted automation. Deny rules apply
	// either way.
	Fallback Action
	// Logger receives decisions at debug level and a failure to store a
	// grant at warn level; nil discards.
	Logger *slog.Logger
}

// Call is one tool call to decide.
type Call struct {
	// Permission is the tool's permission: Bash, Edit, Read, MCP, ….
	Permission string
	// Subjects are what rules match: bash command lines; paths for path
	// permissions (absolute, or relative to Dir); "{server}_{tool}" for MCP.
	Subjects []string
	// Shell is the language of a Bash call's command lines: "" for bash,
	// PowerShell for PowerShell (see SplitPowerShell). On Windows bash is
	// Git for Windows' bash, and a line's paths are read as its MSYS layer
	// reads them: /c/x is C:\x, and other POSIX paths (/usr, /tmp) are
	// asked about as outside the workspace.
	Shell string
	// Dir is the directory relative paths and bash redirections start from;
	// "" means the workspace root, and a relative Dir is taken from it.
	Dir string
	// Title, CallID, Diffs and Metadata are passed to the Asker as they
	// are (see Request).
	Title    string
	CallID   string
	Diffs    []agent.Diff
	Metadata map[string]any
	// Child is the sub-task's session when a sub-agent makes the call;
	// it reaches the Asker as Request.Child. "" for the session's own.
	Child agent.ID
	// Rules are decided after the Checker's rules and grants, for this
	// call alone: the running agent's (agent/agents), so its overrides
	// and a locked agent's denials win over everything configured. Their
	// asks are the user's own, as the configuration's are.
	Rules []Rule
}

// Checker decides the tool calls of one session: the configured rules, then
// the workspace's grants, then the session's own "always" answers (the last
// match wins); what still needs an answer goes to the Asker. Its methods are
// safe for concurrent use; asks are made one at a time, and a call waiting
// to ask is decided again once its turn comes, so an "always" answer given
// meanwhile covers it without asking twice.
type Checker struct {
	root     string
	realRoot string // root with symlinks resolved
	home     string // the real home directory, "" when unknown
	// wsPath and wsPathRelative are the PATH directories commands look
	// programs up in that lie in the workspace (see pathShadow).
	wsPath         []string
	wsPathRelative bool
	asker          Asker
	store          GrantStore
	fallback       Action
	log            *slog.Logger
	// windows is set when command lines run in Windows' shells: a bash
	// line in Git for Windows' bash, whose paths are read as MSYS reads
	// them (see msysPath), a PowerShell line's as a Windows program
	// reads them (see psPath).
	windows bool

	mu    sync.RWMutex
	rules []Rule // configuration then grants; replaced on grant, never changed in place
	// granted loads the stored grants into rules at the first decision
	// (see loadGrants): a session's first model request waits for no
	// store.
	granted sync.Once
	loadCtx context.Context

	asking chan struct{} // holds a token while an Ask is outstanding
	mode   atomic.Int32  // a Mode; see SetMode
}

// New builds a Checker; the workspace's grants load when it first decides
// a call (or is asked its Rules). A grant store that fails to load, or a
// stored grant that is not valid, is logged and left out: the session then
// asks more, never less.
func New(ctx context.Context, opts Options) (*Checker, error) {
	if opts.Root == "" {
		return nil, errors.New("permission: Options.Root is empty; give the workspace root")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("permission: make the workspace root absolute: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("permission: the workspace root must exist: %w", err)
	}
	for i, r := range opts.Rules {
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("permission: configured rule %d: %w", i+1, err)
		}
	}
	switch opts.Fallback {
	case "":
		opts.Fallback = Deny
	case Allow, Deny:
	default:
		return nil, fmt.Errorf("permission: Options.Fallback is %q; want %q or %q", opts.Fallback, Allow, Deny)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	home := realHome()
	c := &Checker{
		root:     root,
		realRoot: realRoot,
		home:     home,
		asker:    opts.Asker,
		store:    opts.Grants,
		fallback: opts.Fallback,
		log:      log,
		windows:  runtime.GOOS == "windows",
		rules:    homeRules(slices.Clone(opts.Rules), home),
		asking:   make(chan struct{}, 1),
	}
	c.wsPath, c.wsPathRelative = workspacePath(os.Getenv("PATH"), realRoot)
	c.loadCtx = context.WithoutCancel(ctx)
	return c, nil
}

// loadGrants appends the stored grants to the configured rules, once,
// before the first decision or grant: darman run opens its store beside
// a new session's first model request, which decides no call.
func (c *Checker) loadGrants() {
	if c.store == nil {
		return
	}
	grants, err := c.store.LoadGrants(c.loadCtx, c.root)
	if err != nil {
		c.log.Warn("permission: the workspace's grants did not load; asking instead", "workspace", c.root, "err", err)
	}
	var valid []Rule
	for _, g := range grants {
		if err := g.Validate(); err != nil {
			c.log.Warn("permission: skipping a stored grant", "workspace", c.root, "err", err)
			continue
		}
		valid = append(valid, g)
	}
	c.mu.Lock()
	c.rules = append(slices.Clip(c.rules), valid...)
	c.mu.Unlock()
}

// Rules returns the rules in force: configuration, then grants, in order.
func (c *Checker) Rules() []Rule {
	return slices.Clone(c.snapshot())
}

func (c *Checker) snapshot() []Rule {
	c.granted.Do(c.loadGrants)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rules
}

// Check decides call. It returns nil when the call may run, a *DeniedError
// (errors.Is ErrDenied) whose text is for the model when it may not, and
// another error when call is malformed, the Asker failed or ctx ended.
func (c *Checker) Check(ctx context.Context, call Call) error {
	dir, err := c.validate(call)
	if err != nil {
		return err
	}
	if c.Mode() == ModeReadOnly && isEdit(call.Permission) {
		return &DeniedError{Permission: call.Permission, Subjects: call.Subjects, ReadOnly: true}
	}
	if done, err := c.settle(call, c.checks(call, dir)); done {
		return err
	}

	select {
	case c.asking <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait to ask for %s permission: %w", call.Permission, ctx.Err())
	}
	defer func() { <-c.asking }()

	checks := c.checks(call, dir)
	if done, err := c.settle(call, checks); done {
		return err
	}
	for _, req := range requests(call, checks) {
		if err := c.ask(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

func (c *Checker) validate(call Call) (dir string, err error) {
	for i, r := range call.Rules {
		if err := r.Validate(); err != nil {
			return "", fmt.Errorf("permission: the agent's rule %d: %w", i+1, err)
		}
	}
	if call.Permission == "" {
		return "", errors.New("permission: the call names no permission")
	}
	if len(call.Subjects) == 0 {
		return "", fmt.Errorf("permission: the %s call has no subject", call.Permission)
	}
	for i, s := range call.Subjects {
		if s == "" {
			return "", fmt.Errorf("permission: subject %d of the %s call is empty", i+1, call.Permission)
		}
	}
	dir = call.Dir
	switch {
	case dir == "":
		dir = c.root
	case !filepath.IsAbs(dir):
		dir = filepath.Join(c.root, dir)
	}
	return filepath.Clean(dir), nil
}

// settle reports whether checks decide the call without asking, and how.
func (c *Checker) settle(call Call, checks []Check) (bool, error) {
	action := combine(checks)
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		// Checked first: the arguments alone cost more than a short check.
		c.log.Debug("permission", "permission", call.Permission, "subjects", call.Subjects, "action", action)
	}
	switch action {
	case Allow:
		return true, nil
	case Deny:
		for _, ch := range checks {
			if ch.Action == Deny {
				return true, &DeniedError{Permission: ch.Permission, Subjects: []string{ch.Subject}, Rule: ch.Rule}
			}
		}
	}
	return false, nil
}

// checks decides every subject of call against the rules in force.
func (c *Checker) checks(call Call, dir string) []Check {
	rules := c.snapshot()
	if len(call.Rules) > 0 {
		rules = slices.Concat(rules, homeRules(call.Rules, c.home))
	}
	var out []Check
	var pl *place
	for _, s := range call.Subjects {
		switch {
		case call.Permission == Bash && call.Shell == PowerShell:
			out = append(out, powershellChecks(rules, s, func(p string) []Check {
				if c.windows {
					if why := psPath(p); why != "" {
						return []Check{decideOpaque(rules, ExternalDirectory, p, why), exact(rules, Edit, p)}
					}
				}
				return c.pathChecks(rules, Edit, p, dir)
			})...)
		case call.Permission == Bash:
			if pl == nil {
				pl = newPlace(c.root, c.realRoot, dir, c.home)
				pl.msys = c.windows
				pl.wsPath, pl.wsPathRelative = c.wsPath, c.wsPathRelative
			}
			cs, _ := bashChecks(rules, s, pl, func(p string) []Check {
				if pl.msys {
					t, why := msysPath(p)
					switch {
					case why != "":
						return []Check{decideOpaque(rules, ExternalDirectory, p, why), exact(rules, Edit, p)}
					case t == "":
						return nil // the null device
					case msysAbs(t):
						return c.pathChecks(rules, Edit, t, dir)
					}
				}
				if path.IsAbs(p) {
					return c.pathChecks(rules, Edit, p, dir)
				}
				return c.landedEdit(rules, pl.land(pl.realDir, p), pl.gitDirs())
			})
			if out == nil {
				out = cs // the usual one command line: no copy
			} else {
				out = append(out, cs...)
			}
		case isPathPermission(call.Permission) && call.Permission != ExternalDirectory:
			out = append(out, c.pathChecks(rules, call.Permission, s, dir)...)
		default:
			ch := decide(rules, call.Permission, s)
			ch.Suggest = escapePattern(s)
			if call.Permission == WebFetch {
				ch.Suggest = originPattern(s)
			}
			out = append(out, ch)
		}
	}
	return out
}

// landedEdit decides a bash redirection's write to a path already resolved,
// as pathChecks does.
func (c *Checker) landedEdit(rules []Rule, j judged, gits []string) []Check {
	var out []Check
	subject := j.rel
	if j.outside() {
		subject = filepath.ToSlash(j.real)
		ext := decide(rules, ExternalDirectory, subject)
		tree := j.real
		if !isDir(tree) {
			tree = filepath.Dir(tree)
		}
		ext.Suggest = escapePattern(strings.TrimSuffix(filepath.ToSlash(tree), "/")) + "/**"
		out = append(out, ext)
	}
	if why := protectedWhy(rules, j.rel, j.real, gits); why != "" {
		out = append(out, decideProtected(rules, subject, why))
	}
	return append(out, exact(rules, Edit, subject))
}

// pathChecks decides a path: inside the workspace its subject is the
// resolved path relative to the root; outside it is the resolved absolute
// path, and external_directory is decided first.
func (c *Checker) pathChecks(rules []Rule, permission, p, dir string) []Check {
	full := p
	if !filepath.IsAbs(p) {
		full = dir + string(filepath.Separator) + p
	}
	realRoot, real, err := resolve(c.root, full)
	if err != nil {
		subject := filepath.ToSlash(filepath.Clean(full))
		ext := decideOpaque(rules, ExternalDirectory, subject, "the path does not resolve: "+err.Error())
		return []Check{ext, exact(rules, permission, subject)}
	}
	// Inside is within the root and relative to it. A path within it by
	// winpath's reading but with no relative form (the root spelt with
	// another volume, \\?\C: against C:) is judged as outside: its
	// subject would be "", which no protected path or rule names.
	inside, rel := false, ""
	if within(realRoot, real) {
		if r, err := filepath.Rel(realRoot, real); err == nil {
			inside, rel = true, filepath.ToSlash(r)
		}
	}
	var protected []Check
	if permission == Edit || permission == Write {
		if why := protectedWhy(rules, rel, real, gitDirs(realRoot)); why != "" {
			subject := rel
			if subject == "" {
				subject = filepath.ToSlash(real)
			}
			protected = []Check{decideProtected(rules, subject, why)}
		}
	}
	if inside {
		return append(protected, exact(rules, permission, rel))
	}
	subject := filepath.ToSlash(real)
	ext := decide(rules, ExternalDirectory, subject)
	tree := real
	if !isDir(real) {
		tree = filepath.Dir(real)
	}
	ext.Suggest = escapePattern(strings.TrimSuffix(filepath.ToSlash(tree), "/")) + "/**"
	return append([]Check{ext, exact(rules, permission, subject)}, protected...)
}

// exact decides a subject whose "always" grant is the subject itself.
func exact(rules []Rule, permission, subject string) Check {
	ch := decide(rules, permission, subject)
	ch.Suggest = escapePattern(subject)
	return ch
}

// requests groups the subjects that need an answer by permission, in the
// order they came.
func requests(call Call, checks []Check) []Request {
	title := call.Title
	if title == "" {
		title = call.Permission + " " + strings.Join(call.Subjects, "; ")
	}
	var reqs []Request
	for _, ch := range checks {
		if ch.Action != Ask {
			continue
		}
		i := slices.IndexFunc(reqs, func(r Request) bool { return r.Permission == ch.Permission })
		if i < 0 {
			i = len(reqs)
			reqs = append(reqs, Request{Permission: ch.Permission, Title: title, CallID: call.CallID, Diffs: call.Diffs, Metadata: call.Metadata, Child: call.Child})
		}
		r := &reqs[i]
		if !slices.Contains(r.Patterns, ch.Subject) {
			r.Patterns = append(r.Patterns, ch.Subject)
		}
		if ch.Suggest != "" && !slices.Contains(r.Suggest, ch.Suggest) {
			r.Suggest = append(r.Suggest, ch.Suggest)
		}
		if ch.Reason != "" {
			if reason := ch.Subject + ": " + ch.Reason; !slices.Contains(r.Reasons, reason) {
				r.Reasons = append(r.Reasons, reason)
			}
		}
		if ch.userAsk() && !slices.Contains(r.AskedBy, *ch.Rule) {
			r.AskedBy = append(r.AskedBy, *ch.Rule)
		}
	}
	return reqs
}

// ask puts one request to the human, or to the fallback, and applies the
// answer.
func (c *Checker) ask(ctx context.Context, req Request) error {
	if done, err := c.modeAnswer(req); done {
		return err
	}
	if c.asker == nil {
		return c.unattended(req)
	}
	reply, err := c.asker.Ask(ctx, req)
	if errors.Is(err, ErrUnattended) {
		return c.unattended(req)
	}
	if err != nil {
		return fmt.Errorf("ask the user for %s permission: %w", req.Permission, err)
	}
	c.log.Debug("permission answered", "permission", req.Permission, "subjects", req.Patterns, "answer", reply.Answer)
	switch reply.Answer {
	case AllowOnce:
		return nil
	case AllowAlways:
		c.grant(ctx, req, Allow)
		return nil
	case RejectOnce:
		return &DeniedError{Permission: req.Permission, Subjects: req.Patterns, Message: reply.Message}
	case RejectAlways:
		c.grant(ctx, req, Deny)
		return &DeniedError{Permission: req.Permission, Subjects: req.Patterns, Message: reply.Message}
	}
	return fmt.Errorf("permission: the asker answered %q; want %s, %s, %s or %s",
		reply.Answer, AllowOnce, AllowAlways, RejectOnce, RejectAlways)
}

// unattended decides a request no one can answer, as Fallback says.
func (c *Checker) unattended(req Request) error {
	if c.fallback == Allow {
		c.log.Info("permission: allowed without asking (unattended)", "permission", req.Permission, "subjects", req.Patterns)
		return nil
	}
	return &DeniedError{Permission: req.Permission, Subjects: req.Patterns, Unattended: true, AskedBy: req.AskedBy}
}

// grant turns an "always" answer into rules: in force at once for this
// Checker, and stored for the workspace's later sessions.
func (c *Checker) grant(ctx context.Context, req Request, action Action) {
	if len(req.Suggest) == 0 {
		return
	}
	rules := make([]Rule, len(req.Suggest))
	for i, p := range req.Suggest {
		rules[i] = Rule{Permission: req.Permission, Pattern: p, Action: action}
	}
	c.granted.Do(c.loadGrants) // the stored ones first, in order
	c.mu.Lock()
	c.rules = append(slices.Clip(c.rules), rules...)
	c.mu.Unlock()
	if c.store == nil {
		return
	}
	// The human has answered; keep the answer even if the call it came
	// with is being cancelled. The store call is bounded by this Check.
	if err := c.store.AddGrants(context.WithoutCancel(ctx), c.root, rules); err != nil {
		c.log.Warn("permission: the grant holds for this session only; storing it failed",
			"workspace", c.root, "permission", req.Permission, "patterns", req.Suggest, "err", err)
	}
}

// originPattern is what an "always" answer to a fetch grants: the URL's
// origin, every path under it ("https://go.dev/*"), as the question names
// the host. A subject that is not an absolute URL is granted as it is.
func originPattern(subject string) string {
	u, err := url.Parse(subject)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return escapePattern(subject)
	}
	return escapePattern(u.Scheme+"://"+u.Host) + "/*"
}
