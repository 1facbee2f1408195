package permission

// Mode is how a session answers, before anyone is asked, what its rules
// leave open (an ACP client's session modes). The session's Checker keeps
// it, so its tools, its sub-tasks and every front see the same mode.
type Mode int32

const (
	// ModeAsk asks every open question.
	ModeAsk Mode = iota
	// ModeAcceptEdits allows the file edits darman itself would ask about,
	// not one a rule of the user's asks about (Request.AskedBy), and asks
	// the rest.
	ModeAcceptEdits
	// ModeReadOnly refuses every file edit, those a rule allows included,
	// and answers every open question no.
	ModeReadOnly
)

// SetMode makes m the mode of the Checker's calls from now on.
func (c *Checker) SetMode(m Mode) { c.mode.Store(int32(m)) }

// Mode is the Checker's mode.
func (c *Checker) Mode() Mode { return Mode(c.mode.Load()) }

// isEdit reports whether a permission is a file edit's.
func isEdit(permission string) bool { return permission == Edit || permission == Write }

// readOnlyAnswer is how ModeReadOnly answers an open question.
const readOnlyAnswer = "the session is in read-only mode; tell the user what you would do instead"

// modeAnswer decides req by the Checker's mode: done is false when the
// mode leaves it to the Asker.
func (c *Checker) modeAnswer(req Request) (done bool, err error) {
	switch c.Mode() {
	case ModeReadOnly:
		return true, &DeniedError{Permission: req.Permission, Subjects: req.Patterns, Message: readOnlyAnswer}
	case ModeAcceptEdits:
		// The mode answers darman's own caution about edits, not the
		// user's rule asking for them.
		if isEdit(req.Permission) && len(req.AskedBy) == 0 {
			return true, nil
		}
	}
	return false, nil
}
