//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
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
func NewTerminalBash(term Terminal, local Tool) Tool {
	return newTyped(Info{
		Name:        "bash",
		Description: bashDescription,
		Kind:        agent.ToolKindExecute,
		Timeout:     bashMaxTimeout + stopGrace + 5*time.Second,
	}, func(s *jsonschema.Schema) {
		setMinimum(s, 0, "timeout")
		max := float64(bashMaxTimeout.Milliseconds())
		s.Properties["timeout"].Maximum = &max
	}, func(ctx context.Context, env *Env, in bashInput) (Result, error) {
		if in.RunInBackground {
			raw, err := json.Marshal(in)
			if err != nil {
				return Result{}, err
			}
			return local.Run(ctx, env, raw)
		}
		return runInTerminal(ctx, env, in, term)
	})
}

func runInTerminal(ctx context.Context, env *Env, in bashInput, term Terminal) (Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return failure("invalid input", "The command is empty."), nil
	}
	root := ws.Root()
	dir := root
	if in.Workdir != "" {
		if dir, err = resolvePath(ws, in.Workdir); err != nil {
			return failure("invalid workdir", "%v", err), nil
		}
		info, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return failure("no such directory", "The workdir %s does not exist.", displayPath(root, dir)), nil
		case err != nil:
			return failure("bad workdir", "The workdir %s cannot be used: %v", displayPath(root, dir), err), nil
		case !info.IsDir():
			return failure("not a directory", "The workdir %s is not a directory.", displayPath(root, dir)), nil
		}
		if outside, err := permission.Outside(root, dir); err != nil || outside {
			real, rerr := filepath.EvalSymlinks(dir)
			if rerr != nil {
				real = dir
			}
			if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.ExternalDirectory, Subjects: []string{real}, Title: "Run a command in " + real}); !ok {
				return denied, err
			}
		}
	}
	title := in.Description
	if title == "" {
		title = shorten(strings.Join(strings.Fields(in.Command), " "), 80)
	}
	if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.Bash, Subjects: []string{in.Command}, Dir: dir, Title: in.Command}); !ok {
		return denied, err
	}
	timeout := bashDefaultTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Millisecond, bashMaxTimeout)
	}
	res, err := term.Run(ctx, TerminalCommand{CallID: env.CallID, Command: in.Command, Dir: dir, Timeout: timeout, OutputLimit: terminalOutputLimit})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return failure("terminal failed", "The editor's terminal could not run the command: %v", err), nil
	}

	var b strings.Builder
	text, cut := headTail(res.Output, outputMax, outputHead)
	if text == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString(strings.TrimRight(text, "\n"))
	}
	b.WriteString("\n\n")
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "The command timed out after %s and was stopped.", timeout)
	case res.Signal != "":
		fmt.Fprintf(&b, "The command was killed by signal %s.", res.Signal)
	default:
		fmt.Fprintf(&b, "Exit code %d.", res.ExitCode)
	}
	switch {
	case res.Truncated:
		b.WriteString("\nThe output's beginning was dropped: the editor's terminal keeps only its end. Run the command again with less output (through grep, head or tail) to see more.")
	case cut:
		b.WriteString("\nThe output was cut to its beginning and end. Run the command again with less output (through grep, head or tail) to see the middle.")
	}
	meta := map[string]any{"exitCode": res.ExitCode, "timedOut": res.TimedOut, "terminal": true}
	if res.Signal != "" {
		meta["signal"] = res.Signal
	}
	return Result{
		Output:   b.String(),
		IsError:  res.TimedOut || res.Signal != "" || res.ExitCode != 0,
		Title:    title,
		Metadata: metadata(meta),
	}, nil
}
