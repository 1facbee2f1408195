package permission

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// answerSome answers the questions about its own command and has no one
// to ask about the others, as a session does where a hook allowed a call
// and no human is there.
type answerSome struct{ command string }

func (a answerSome) Ask(_ context.Context, req Request) (Reply, error) {
	if len(req.Patterns) == 1 && req.Patterns[0] == a.command {
		return Reply{Answer: AllowOnce}, nil
	}
	return Reply{}, fmt.Errorf("the session: %w", ErrUnattended)
}

// An Asker that answers ErrUnattended leaves the question to Fallback, as
// no Asker does, with the same refusal; what it answers holds, and a deny
// rule is never asked.
func TestCheckerAskerUnattended(t *testing.T) {
	rules := []Rule{{Permission: Bash, Pattern: "rm *", Action: Deny}}
	c := newChecker(t, Options{Asker: answerSome{"make"}, Rules: rules})
	if err := c.Check(t.Context(), bash("make")); err != nil {
		t.Errorf("the answered command: %v", err)
	}
	err := c.Check(t.Context(), bash("go vet"))
	var denied *DeniedError
	if !errors.As(err, &denied) || !denied.Unattended {
		t.Fatalf("Check = %v, want an unattended denial", err)
	}
	if want := (&DeniedError{Permission: Bash, Subjects: []string{"go vet"}, Unattended: true}).Error(); err.Error() != want {
		t.Errorf("message = %q, want the unattended refusal %q", err, want)
	}
	if err := c.Check(t.Context(), bash("rm -rf x")); !errors.As(err, &denied) || denied.Rule == nil {
		t.Errorf("a denied command = %v, want the rule's denial", err)
	}

	trusting := newChecker(t, Options{Asker: answerSome{"make"}, Fallback: Allow, Rules: rules})
	if err := trusting.Check(t.Context(), bash("go vet")); err != nil {
		t.Errorf("Fallback allow: %v", err)
	}
}
