package tool

import (
	"errors"
	"os/exec"

	"github.com/darman-dev/darman/internal/sandbox"
)

// ShellCommand is the process a command line that is not a tool call (a
// hook's) runs as: bash -c line in dir with environ (secrets already
// filtered out), built as the bash tool builds the model's commands, and
// confined by sb as they are when sb is active (nil: unconfined). Where
// the OS offers no sandbox and sb's mode is required, it fails as bash
// does.
func ShellCommand(line, dir string, environ []string, sb *sandbox.Sandbox, req sandbox.Request) (*exec.Cmd, error) {
	var confine func(*exec.Cmd) error
	if sb != nil {
		switch st := sb.Status(); {
		case st.Active():
			confine = func(cmd *exec.Cmd) error { return sb.Wrap(cmd, req) }
		case st.Mode == sandbox.Required:
			return nil, errors.New(st.Summary())
		}
	}
	return bashCommand(line, dir, environ, confine)
}
