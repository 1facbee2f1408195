package permission

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/darman-dev/darman/agent"
)

// Request is what the human is asked: may the agent use Permission on these
// subjects?
type Request struct {
	Permission string
	// Patterns are the subjects that need an answer: the commands of a bash
	// line that no rule allowed, the files, the MCP tool name.
	Patterns []string
	// Title is a one-line summary for the prompt, e.g. the whole command line.
	Title string
	// Reasons say, one line each, why some patterns must be asked whatever
	// the rules say: the line does not parse, a command name is only known
	// at run time. Empty for most requests.
	Reasons []string
	// Session is the session whose checker asks: the top-level session
	// a front shows (a sub-task asks in its parent's); set by the session
	// service, "" for a checker used without one.
	Session agent.ID
	// CallID is the tool call the question is about, from Call; "" for a
	// question that belongs to no call (a command template's !`cmd`).
	CallID string
	// Child is the sub-task's session when a sub-agent's call asks (the
	// task tool's child session, whose events nest under the parent's
	// task call); "" for the session's own calls.
	Child agent.ID
	// Diffs are the changes the call would make, one per file, from Call:
	// every file of a multi-file patch. Empty for calls that change no
	// file.
	Diffs []agent.Diff
	// Metadata is passed through from Call for the front end to render
	// what the fields above do not say (an MCP tool's server and input);
	// the Checker does not read it.
	Metadata map[string]any
	// Suggest are the patterns an "always" answer grants, for the front end
	// to show ("always allow git status *"). Empty when the subjects cannot
	// be granted for good; "always" then counts once.
	Suggest []string
	// AskedBy are the user's own ask rules (see Rule.Default) that ask
	// some of Patterns, each once: the question is then the user's to
	// answer, whatever a PreToolUse hook said of the call, as in Claude
	// Code, where a hook's allow does not override an ask rule. Empty when
	// only darman's caution asks (its defaults, or no rule).
	AskedBy []Rule
}

// Answer is the human's choice. The values mirror ACP's permission option
// kinds.
type Answer string

const (
	AllowOnce    Answer = "allow_once"
	AllowAlways  Answer = "allow_always"
	RejectOnce   Answer = "reject_once"
	RejectAlways Answer = "reject_always"
)

// Reply is the human's answer to a Request.
type Reply struct {
	Answer Answer
	// Message, optional, is passed to the model with a rejection ("use the
	// make target instead").
	Message string
}

// Asker asks the human. The CLI and the LSP front implement it.
type Asker interface {
	// Ask shows req and blocks until the human answers or ctx is done; then
	// it returns ctx's error promptly, and the Checker treats that as the
	// call being cancelled, not as a rejection. A Checker has at most one
	// Ask outstanding at a time, but the Checkers of different sessions share
	// an Asker, so Ask must be safe for concurrent use.
	Ask(ctx context.Context, req Request) (Reply, error)
}

// ErrUnattended is what an Asker returns, wrapped or not, when no one can
// answer the question (a non-interactive run whose session answers some
// questions itself): the Checker then decides it as Options.Fallback says,
// as it does when there is no Asker.
var ErrUnattended = errors.New("no one can be asked")

// GrantStore keeps a workspace's "always" answers across sessions. The store
// package implements it; the Checker only appends.
type GrantStore interface {
	// LoadGrants returns the rules granted in workspace, oldest first.
	// It is called once, by New.
	LoadGrants(ctx context.Context, workspace string) ([]Rule, error)
	// AddGrants appends rules to workspace's grants. Checkers of several
	// sessions may call it concurrently.
	AddGrants(ctx context.Context, workspace string, rules []Rule) error
}

// ErrDenied is what every *DeniedError matches with errors.Is: a call that
// must not run, whose error text is for the model.
var ErrDenied = errors.New("permission denied")

// DeniedError says why a call may not run, in words meant for the model.
// A tool returns it as its result; it is not a failure of the environment.
type DeniedError struct {
	Permission string
	Subjects   []string
	// Rule is the rule that denied the call; nil when a person did.
	Rule *Rule
	// Message is the human's message with a rejection.
	Message string
	// Unattended is set when the call needed an answer and no one could be
	// asked (a non-interactive session).
	Unattended bool
	// AskedBy are the user's ask rules that made an unattended call
	// need the answer (Request.AskedBy).
	AskedBy []Rule
	// ReadOnly is set on an edit refused by ModeReadOnly.
	ReadOnly bool
}

func (e *DeniedError) Error() string {
	what := e.Permission + " " + quoteAll(e.Subjects)
	switch {
	case e.Rule != nil:
		return "permission denied: " + what + " is denied by the rule " + e.Rule.String() +
			"; do not retry it, find another way or ask the user to change the rule"
	case e.ReadOnly:
		return "permission denied: the session is in read-only mode: darman does not change files in it (" + what +
			"). Tell the user what you would change, or ask them to switch the mode"
	case e.Unattended:
		why := ""
		if len(e.AskedBy) > 0 {
			why = " (the user's own rule " + rulesString(e.AskedBy) + " asks for it)"
		}
		return "permission denied: " + what + " needs the user's approval" + why + ", and no one can be asked in this" +
			" non-interactive session; do not retry it: finish without it, or tell the user which" +
			" permission rule would allow it"
	case e.Message != "":
		return "the user rejected " + what + ": " + e.Message
	}
	return "the user rejected " + what + "; do not retry it unless the user asks for it"
}

// Is makes errors.Is(err, ErrDenied) true.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// rulesString renders rules for a sentence: `bash "git push *" ask`,
// joined with "and".
func rulesString(rules []Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, " and ")
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
