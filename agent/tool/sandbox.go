package tool

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/sandbox"
)

// SandboxEscape is the permission to run a command again outside the OS
// sandbox after the sandbox refused it. It is asked (the defaults have no
// rule for it, so "*" asks), and "always" is kept per command line.
const SandboxEscape = "sandbox_escape"

// bashSandbox is how the bash tool confines commands: nil sandbox runs
// them as they are.
type bashSandbox struct {
	sb *sandbox.Sandbox
	// network says whether a command line may use the network (the
	// configured per-command patterns); nil: never beyond the sandbox's
	// own setting.
	network func(command string) bool
	// guard watches the protected names at the workspace root around
	// the commands, confined or not (rootguard.go); never nil.
	guard *RootGuard
	// told holds the sessions already told that commands run unsandboxed.
	told sync.Map
}

// ended is what runs when a background job of env's session ends: a look
// at the protected names of the root (RootGuard.ended).
func (b *bashSandbox) ended(env *Env) func() {
	if env.Workspace == nil {
		return nil
	}
	root, jobs := env.Workspace.Root(), env.Jobs
	return func() { b.guard.ended(root, jobs) }
}

func (b *bashSandbox) request(env *Env, command string) sandbox.Request {
	req := sandbox.Request{Session: string(env.SessionID)}
	if env.Workspace != nil {
		req.Root = env.Workspace.Root()
	}
	if b.network != nil {
		req.Network = b.network(command)
	}
	return req
}

// prepare returns what confines command (nil when nothing does) and,
// once per session when commands run unsandboxed, a note saying so. err
// is set when the sandbox is required and missing: the command must not
// run.
func (b *bashSandbox) prepare(env *Env, command string) (confine func(*exec.Cmd) error, notice string, err error) {
	if b == nil || b.sb == nil {
		return nil, "", nil
	}
	st := b.sb.Status()
	if !st.Active() {
		if st.Mode == sandbox.Required {
			return nil, "", fmt.Errorf("%s", st.Summary())
		}
		if st.Mode != sandbox.Off {
			if _, seen := b.told.LoadOrStore(env.SessionID, true); !seen {
				notice = "Note: this command ran without an OS sandbox (" + st.Reason + "); darman says so once per session."
			}
		}
		return nil, notice, nil
	}
	req := b.request(env, command)
	return func(cmd *exec.Cmd) error { return b.sb.Wrap(cmd, req) }, "", nil
}

// commandLine is prepare for the editor's terminal: the wrapped command
// line (nil: run bash -c command as it is) and the variables to set.
func (b *bashSandbox) commandLine(env *Env, command string) (argv []string, vars map[string]string, notice string, err error) {
	if b == nil || b.sb == nil {
		return nil, nil, "", nil
	}
	confine, notice, err := b.prepare(env, command)
	if err != nil || confine == nil {
		return nil, nil, notice, err
	}
	argv, vars, err = b.sb.CommandLine([]string{"bash", "-c", command}, b.request(env, command))
	return argv, vars, "", err
}

// escape looks at a sandboxed command that failed: when the sandbox looks
// like the cause, it adds a note naming the rule to res and asks
// sandbox_escape; rerun runs the command again outside the sandbox when
// the user allows it.
func (b *bashSandbox) escape(ctx context.Context, env *Env, command, dir, output string, res Result, rerun func() (Result, error)) (Result, error) {
	note := b.sb.Explain(command, output, b.request(env, command))
	if note == "" {
		return res, nil
	}
	res.Output += "\n" + note
	_, ok, err := permit(ctx, env, permission.Call{
		Permission: SandboxEscape, Subjects: []string{command}, Dir: dir,
		Title:    "Run outside the sandbox: " + shorten(strings.Join(strings.Fields(command), " "), 80),
		Metadata: map[string]any{"reason": note},
	})
	if err != nil {
		return res, err
	}
	if !ok {
		res.Output += "\nRunning it outside the sandbox was not allowed (permission " + SandboxEscape + ")."
		return res, nil
	}
	again, err := rerun()
	if err != nil {
		return again, err
	}
	again.Output = "The sandbox refused the command; the user allowed running it outside the sandbox, and this is that run.\n\n" + again.Output
	return again, nil
}
