package permission

import (
	"errors"
	"fmt"
	"strconv"
)

// Action is what a rule says about a call: allow it, ask the human, or deny it.
type Action string

const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// ParseAction reads an action as configuration spells it.
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case Allow, Ask, Deny:
		return a, nil
	}
	return "", fmt.Errorf("permission action %q is not one of allow, ask, deny", s)
}

// The permissions darman's tools ask for. Every built-in tool has its own,
// named after it; these are the ones with special meaning here.
const (
	Read  = "read"
	Edit  = "edit"
	Write = "write"
	Glob  = "glob"
	Grep  = "grep"
	List  = "list"
	Bash  = "bash"
	// ExternalDirectory is asked for any path that resolves, after symlinks,
	// outside the workspace root (see Outside); its subject is that resolved
	// absolute path.
	ExternalDirectory = "external_directory"
	// DoomLoop is asked when the model makes the same call with the same
	// input three times in a row; its subject is the tool's name.
	DoomLoop = "doom_loop"
	// MCP guards tools from MCP servers; its subject is "{server}_{tool}".
	MCP = "mcp"
	// WebFetch guards fetches; its subject is the URL, and an "always"
	// answer grants the URL's origin.
	WebFetch = "webfetch"
)

// isPathPermission reports whether subjects of permission are file paths,
// which changes what '*' matches (see match) and makes the Checker look for
// paths outside the workspace.
func isPathPermission(permission string) bool {
	switch permission {
	case Read, Edit, Write, Glob, Grep, List, ExternalDirectory:
		return true
	}
	return false
}

// Rule says what to do with the calls of a permission whose subject matches a
// pattern. Permission may itself be a pattern ("*" for every permission).
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     Action `json:"action"`
	// Default marks darman's own rules, those of Defaults. A question one
	// of them asks, like one no rule decides, is darman's caution, which
	// a PreToolUse hook's allow may answer; a question a rule without the
	// mark asks (the configuration's, the command line's, an agent's
	// permission) is the user's own, which only the user answers (see
	// Request.AskedBy). It is not stored with a grant.
	Default bool `json:"-"`
}

// Validate reports what is wrong with a rule that configuration or a store
// produced.
func (r Rule) Validate() error {
	var errs []error
	if r.Permission == "" {
		errs = append(errs, errors.New("the permission is empty (use \"*\" for every permission)"))
	}
	if r.Pattern == "" {
		errs = append(errs, errors.New("the pattern is empty (use \"*\" for every subject)"))
	}
	if _, err := ParseAction(string(r.Action)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rule %s: %w", r, err)
	}
	return nil
}

// String renders the rule as `permission "pattern" action`.
func (r Rule) String() string {
	return r.Permission + " " + strconv.Quote(r.Pattern) + " " + string(r.Action)
}

// Matches reports whether the rule applies to a call of permission on subject.
func (r Rule) Matches(permission, subject string) bool {
	return match(r.Permission, permission, false) &&
		match(r.Pattern, subject, isPathPermission(permission))
}

// Evaluate decides a call of permission on subject: the last matching rule
// wins and no match means Ask. A rule whose action is not allow, ask or deny
// counts as ask. It is a pure function of its arguments.
//
// A bash subject is a whole command line: every simple command in it is
// decided on its own, as SplitBash finds them, and files it writes through
// redirection are decided as edit subjects. Every path a command names
// (see Path) that leaves the workspace is decided as external_directory,
// which no bash rule can allow; options that run programs are decided as
// bash, which no broad rule can allow (see Command.Dangers); writes to
// protected paths are decided as protected_path. Without a file system,
// Evaluate judges paths lexically: absolute ones, ~ and those that climb
// above the working directory are outside. Any deny denies, all allow
// allows, anything else asks. Explain says why.
func Evaluate(rules []Rule, permission, subject string) Action {
	if permission != Bash {
		return decide(rules, permission, subject).Action
	}
	return Explain(rules, permission, subject).Action
}

// Verdict is a decision with its reasons.
type Verdict struct {
	Action Action
	// Checks are the decisions it combines: one for most permissions; for
	// bash one per simple command plus one edit check per file written.
	Checks []Check
	// Err is set when a bash command line does not parse; Action is then
	// Ask, or Deny when a deny rule matches the whole line.
	Err error
}

// Check is the decision for one subject.
type Check struct {
	Permission string
	Subject    string
	Action     Action
	// Rule is the last rule that matched, nil when none did. It points
	// into the rules the check was decided with, which the Checker never
	// changes in place.
	Rule *Rule
	// Reason is set when no rule may allow the subject, saying why (see
	// Command.Reason); such a check is asked unless a rule denies it.
	Reason string
	// Suggest is the pattern an "always" answer would grant, "" when
	// the subject cannot be granted for good.
	Suggest string
}

// Explain is Evaluate with the reasons: what was checked and which rule
// decided each part.
func Explain(rules []Rule, permission, subject string) Verdict {
	if permission != Bash {
		c := decide(rules, permission, subject)
		c.Suggest = escapePattern(subject)
		return Verdict{Action: c.Action, Checks: []Check{c}}
	}
	checks, err := bashChecks(rules, subject, newLexicalPlace(), func(path string) []Check {
		c := decide(rules, Edit, path)
		c.Suggest = escapePattern(path)
		return []Check{c}
	})
	return Verdict{Action: combine(checks), Checks: checks, Err: err}
}

// userAsk reports whether c is asked by one of the user's own ask rules
// (see Rule.Default). A subject asked by darman's defaults, by no rule,
// or despite the allow rule that matched it (a dangerous option, a
// subject no rule may allow) is not.
func (c *Check) userAsk() bool {
	return c.Action == Ask && c.Rule != nil && !c.Rule.Default && c.Rule.Action != Allow && c.Rule.Action != Deny
}

// SandboxEscape is the permission to run a command again outside the OS
// sandbox (agent/tool asks it). Like ProtectedPath, only a rule naming it
// can allow it: an allow whose permission is a pattern ("*": allow, an
// agent file's or the configuration's) does not.
const SandboxEscape = "sandbox_escape"

// decide finds the last rule matching one subject.
func decide(rules []Rule, permission, subject string) Check {
	c := Check{Permission: permission, Subject: subject, Action: Ask}
	for i := len(rules) - 1; i >= 0; i-- {
		if r := &rules[i]; r.Matches(permission, subject) {
			if permission == SandboxEscape && r.Action == Allow && r.Permission != SandboxEscape {
				continue
			}
			c.Rule = r
			c.Action = r.Action
			if c.Action != Allow && c.Action != Deny {
				c.Action = Ask
			}
			break
		}
	}
	return c
}

// decideOpaque decides a subject no rule may allow: only a deny counts.
func decideOpaque(rules []Rule, permission, subject, reason string) Check {
	c := decide(rules, permission, subject)
	if c.Action != Deny {
		c.Action = Ask
	}
	c.Reason = reason
	return c
}

// combine folds decisions: any deny denies, all allow allows, else ask.
// Nothing to decide (an empty command line) allows.
func combine(checks []Check) Action {
	action := Allow
	for _, c := range checks {
		switch c.Action {
		case Deny:
			return Deny
		case Allow:
		default:
			action = Ask
		}
	}
	return action
}
