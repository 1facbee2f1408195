//go:build unix

package tool

import (
	"context"
	_ "embed"
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
	"github.com/darman-dev/darman/internal/child"
)

//go:embed bash.md
var bashDescription string

const (
	bashDefaultTimeout = 2 * time.Minute
	bashMaxTimeout     = 10 * time.Minute
	// pipeGrace is how long a command's output may keep coming after its
	// main process exited, before what still holds the pipe is treated as
	// left running in the background.
	pipeGrace = 250 * time.Millisecond
	// cancelGrace is the SIGTERM-to-SIGKILL wait when the turn is
	// cancelled: short, so that cancelling takes under a second.
	cancelGrace = 500 * time.Millisecond
)

type bashInput struct {
	Command         string `json:"command" jsonschema:"the command line, run with bash -c"`
	Timeout         int    `json:"timeout,omitempty" jsonschema:"milliseconds before the command is stopped (default 120000)"`
	Workdir         string `json:"workdir,omitempty" jsonschema:"the directory to run in, absolute or relative to the workspace root (default: the root)"`
	Description     string `json:"description,omitempty" jsonschema:"what the command does, in five to ten words, shown to the user"`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"start the command and return a job id at once; read it with bash_output, stop it with bash_kill"`
}

// newBash returns the bash tool; maxTimeout (0 for ten minutes) bounds the
// timeout a call may ask for.
func newBash(maxTimeout time.Duration, reg *child.Registry) Tool {
	if maxTimeout <= 0 {
		maxTimeout = bashMaxTimeout
	}
	return newTyped(Info{
		Name:        "bash",
		Description: bashDescription,
		Kind:        agent.ToolKindExecute,
		// The tool stops the command itself; this leaves room for that.
		Timeout: maxTimeout + stopGrace + 5*time.Second,
	}, func(s *jsonschema.Schema) {
		setMinimum(s, 0, "timeout")
		max := float64(maxTimeout.Milliseconds())
		s.Properties["timeout"].Maximum = &max
	}, func(ctx context.Context, env *Env, in bashInput) (Result, error) {
		return runBash(ctx, env, in, maxTimeout, reg)
	})
}

func runBash(ctx context.Context, env *Env, in bashInput, maxTimeout time.Duration, reg *child.Registry) (Result, error) {
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
	if in.RunInBackground {
		return startBackground(env, in.Command, dir, title, reg)
	}
	timeout := bashDefaultTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Millisecond, maxTimeout)
	}

	out := newCapture(func() (*os.File, error) { return saveFile(env, "bash") }, env.Progress)
	p, err := startProc(in.Command, dir, out, reg)
	if err != nil {
		return failure("could not start", "The command could not be started: %v", err), nil
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-p.exited:
	case <-timer.C:
		timedOut = true
		p.stop(stopGrace)
	case <-ctx.Done():
		p.stop(cancelGrace)
		out.finish()
		return Result{}, ctx.Err()
	}

	// The command has exited. What it started may live on: holding its
	// output (a server started with "&"), or not (one whose output goes to
	// a file).
	var notes []string
	held := !p.waitRead(pipeGrace)
	if held || child.GroupAlive(p.pgid) {
		if jb, ok := adoptLeftovers(env, p, in.Command); ok {
			notes = append(notes, fmt.Sprintf("The command exited, but processes it started are still running; they are now background job %s. Read their output with bash_output, stop them with bash_kill.", jb.id))
		} else {
			p.stop(stopGrace)
			notes = append(notes, "The command exited, leaving processes it started running; they were stopped. To keep a process running, start it with run_in_background: true.")
		}
	}
	if !held {
		p.closeOut()
	}
	code, signal := p.exitCode()
	text := out.text()
	saved, saveErr := out.finish()

	var b strings.Builder
	if text == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString(strings.TrimRight(text, "\n"))
	}
	b.WriteString("\n\n")
	switch {
	case timedOut:
		fmt.Fprintf(&b, "The command timed out after %s and was stopped, with every process it started.", timeout)
	case signal != "":
		fmt.Fprintf(&b, "The command was killed by signal %s.", signal)
	default:
		fmt.Fprintf(&b, "Exit code %d.", code)
	}
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	meta := map[string]any{"exitCode": code, "timedOut": timedOut}
	if out.truncated() {
		switch {
		case saved != "":
			fmt.Fprintf(&b, "\nThe output was cut to its beginning and end; all of it is in %s (read it with offset and limit).", saved)
			meta["outputPath"] = saved
		case saveErr != nil:
			fmt.Fprintf(&b, "\nThe output was cut to its beginning and end (the full output could not be saved: %v).", saveErr)
		}
	}
	if signal != "" {
		meta["signal"] = signal
	}
	return Result{
		Output:   b.String(),
		IsError:  timedOut || code != 0,
		Title:    title,
		Metadata: metadata(meta),
	}, nil
}

// saveFile makes the file a call's full output is saved to.
func saveFile(env *Env, tool string) (*os.File, error) {
	path, err := saveOutput(env, tool, nil)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
}

// adoptLeftovers hands what a command left running to the session's jobs.
func adoptLeftovers(env *Env, p *proc, command string) (*job, bool) {
	if env.Jobs == nil || !child.GroupAlive(p.pgid) {
		return nil, false
	}
	return env.Jobs.adopt(p, command)
}

func startBackground(env *Env, command, dir, title string, reg *child.Registry) (Result, error) {
	if env.Jobs == nil {
		return failure("no background jobs", "Background jobs are not available in this session. Run the command without run_in_background, with a timeout."), nil
	}
	jb, err := env.Jobs.start(command, dir, reg)
	if err != nil {
		return failure("could not start", "The command could not be started in the background: %v", err), nil
	}
	return Result{
		Output:   fmt.Sprintf("Started background job %s. Read its output and status with bash_output (job_id %q); stop it with bash_kill. It is stopped when the session ends.", jb.id, jb.id),
		Title:    title,
		Metadata: metadata(map[string]any{"jobId": jb.id, "background": true}),
	}, nil
}
