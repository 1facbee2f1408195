package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
)

// refusals are the permission questions of darman run's tool calls that
// were refused because there was no terminal to ask them on (and no
// PreToolUse hook allowed the call), kept to tell the user, once the turn
// ends, which flags would allow them. Its methods are safe for concurrent
// use: sub-tasks ask at the same time.
type refusals struct {
	mu       sync.Mutex
	subjects []string // "permission \"subject\"", in order, once each
	flags    []string
	askedBy  []string // the user's own ask rules that asked, once each
}

// add is session.Options.Refused.
func (r *refusals) add(_ agent.ID, req permission.Request) {
	if req.CallID == "" {
		// A command template's !`cmd`: the turn fails with it, and
		// commandFailed says which flag allows it.
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rule := range req.AskedBy {
		if s := rule.String(); !slices.Contains(r.askedBy, s) {
			r.askedBy = append(r.askedBy, s)
		}
	}
	for _, s := range req.Patterns {
		subject := req.Permission + " " + strconv.Quote(s)
		if slices.Contains(r.subjects, subject) {
			continue
		}
		r.subjects = append(r.subjects, subject)
		r.flags = append(r.flags, allowFlag(req.Permission, s))
	}
}

// tell writes, when calls were refused, what was not allowed and how to
// allow it for a run.
func (r *refusals) tell(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.subjects) == 0 {
		return
	}
	fmt.Fprintf(w, "darman: refused, as there is no terminal to ask: %s; allow it for a run with %s, or with a permission rule in the configuration\n",
		strings.Join(r.subjects, ", "), strings.Join(r.flags, " "))
	if len(r.askedBy) > 0 {
		// An agent's rules are applied after the flags: a flag does not
		// override them.
		fmt.Fprintf(w, "darman: your own rule %s asked; an --allow flag overrides a rule in the configuration, not one in an agent file, which must be changed there\n",
			strings.Join(r.askedBy, " and "))
	}
}

// allowFlag is the --allow flag that allows permission on subject.
func allowFlag(permission, subject string) string {
	return fmt.Sprintf("--allow %q", permission+":"+subject)
}
