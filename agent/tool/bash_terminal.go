package tool

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/tool/internal/jobs"
)

// Terminal runs a command line outside darman's own processes: in the
// editor's terminal, where the user watches it (ACP's terminal/*).
type Terminal interface {
	// Run runs c.Command with bash -c in c.Dir and returns once it exited,
	// or once ctx ended, after stopping it. A command that runs past
	// c.Timeout is stopped and reported with TimedOut.
	Run(ctx context.Context, c TerminalCommand) (TerminalResult, error)
}

// TerminalCommand is one command for a Terminal.
type TerminalCommand struct {
	// CallID is the tool call the command belongs to, so the front can
	// show the terminal in that call.
	CallID  string
	Command string
	Dir     string
	Timeout time.Duration
	// OutputLimit is how many bytes of output the terminal keeps (its
	// end).
	OutputLimit int
	// Argv, when set, is the command line to run instead of Command in
	// the bash tool's shell (see ShellArgv): the same command wrapped in
	// darman's sandbox helper. Env are variables to set for it (TMPDIR).
	Argv []string
	Env  map[string]string
	// Started, when set, is called by the Terminal once the command runs
	// in a terminal the front made: the call's update then goes on the
	// turn's stream, after the call itself, for the front to show the
	// terminal in. Nil when the call has no stream.
	Started func()
}

// TerminalResult is how a command ended and what it printed.
type TerminalResult struct {
	Output string
	// Truncated says the terminal dropped the output's beginning.
	Truncated bool
	// ExitCode is the command's exit status; -1 when a signal ended it.
	ExitCode int
	Signal   string
	TimedOut bool
}

// terminalOutputLimit is what a terminal keeps of a command's output; the
// model sees its head and tail cut to the usual cap.
const terminalOutputLimit = 1 << 20

// NewTerminalBash returns the bash tool for a front whose commands run in
// the editor's terminal: the same name, description, input and permission
// checks as bash, with a foreground command run by term. Background
// commands (run_in_background) stay darman's: local, the usual bash tool,
// runs them, so bash_output and bash_kill keep working.
//
// When local is darman's own bash tool with a sandbox, the command line
// handed to the editor is wrapped in darman's sandbox helper ("darman
// sandbox-exec …"), so the command is confined as a local one is.
func NewTerminalBash(term Terminal, local Tool) Tool {
	sb := &bashSandbox{guard: NewRootGuard("", nil)}
	if bt, ok := local.(*bashTool); ok {
		sb = bt.sb
	}
	return newBashTool(bashMaxTimeout, func(ctx context.Context, env *Env, in bashInput) (Result, error) {
		if in.RunInBackground {
			raw, err := json.Marshal(in)
			if err != nil {
				return Result{}, err
			}
			return local.Run(ctx, env, raw)
		}
		return runInTerminal(ctx, env, in, term, sb)
	})
}

func runInTerminal(ctx context.Context, env *Env, in bashInput, term Terminal, sb *bashSandbox) (Result, error) {
	c, answer, ok, err := prepareBash(ctx, env, in, bashMaxTimeout)
	if !ok {
		return answer, err
	}
	tc := TerminalCommand{CallID: env.CallID, Command: in.Command, Dir: c.dir, Timeout: c.timeout, OutputLimit: terminalOutputLimit}
	if env.Progress != nil {
		tc.Started = func() { env.Progress("") }
	}
	argv, vars, notice, err := sb.commandLine(env, in.Command)
	if err != nil {
		return failure("no sandbox", "The command was not run: %v. Tell the user; they can change sandbox.mode.", err), nil
	}
	tc.Argv, tc.Env = argv, vars
	res, output, err := sb.guard.guardRoot(ctx, env, func() (Result, string, error) {
		return runTerminalCommand(ctx, term, tc, c)
	})
	if err != nil || !res.IsError || argv == nil {
		return withNotice(res, notice), err
	}
	return sb.escape(ctx, env, in.Command, c.dir, output, res, func() (Result, error) {
		tc.Argv, tc.Env = nil, nil
		res, _, err := sb.guard.guardRoot(ctx, env, func() (Result, string, error) {
			return runTerminalCommand(ctx, term, tc, c)
		})
		return res, err
	})
}

// runTerminalCommand runs tc in the editor's terminal and returns its
// result and its output.
func runTerminalCommand(ctx context.Context, term Terminal, tc TerminalCommand, c bashCall) (Result, string, error) {
	res, err := term.Run(ctx, tc)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, "", ctx.Err()
		}
		return failure("terminal failed", "The editor's terminal could not run the command: %v", err), "", nil
	}

	end := bashEnd{code: res.ExitCode, signal: res.Signal, timedOut: res.TimedOut, timeout: c.timeout}
	var b strings.Builder
	text, cut := headTail(res.Output, jobs.OutputMax, jobs.OutputHead)
	meta := end.report(&b, text, "")
	switch {
	case res.Truncated:
		b.WriteString("\nThe output's beginning was dropped: the editor's terminal keeps only its end. Run the command again with less output (through grep, head or tail) to see more.")
	case cut:
		b.WriteString("\nThe output was cut to its beginning and end. Run the command again with less output (through grep, head or tail) to see the middle.")
	}
	meta["terminal"] = true
	return Result{
		Output:   b.String(),
		IsError:  end.failed(),
		Title:    c.title,
		Metadata: metadata(meta),
	}, res.Output, nil
}
