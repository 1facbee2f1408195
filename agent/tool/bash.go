package tool

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/jobs"
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
// timeout a call may ask for; sp says how its commands start (their
// registry, environment and sandbox).
func newBash(maxTimeout time.Duration, sp bashSpawn) *bashTool {
	if maxTimeout <= 0 {
		maxTimeout = bashMaxTimeout
	}
	return &bashTool{Tool: newBashTool(maxTimeout, func(ctx context.Context, env *Env, in bashInput) (Result, error) {
		return runBash(ctx, env, in, maxTimeout, sp)
	}), sb: sp.sb}
}

// bashSpawn is how the local bash tool starts a command: the registry that
// records its group (nil: none), its environment (nil: darman's own;
// secrets already filtered out, see internal/childenv) and its sandbox
// (nil: none).
type bashSpawn struct {
	reg     *child.Registry
	environ []string
	sb      *bashSandbox
}

// bashTool is the local bash tool, which knows its sandbox, so that the
// editor-terminal variant (NewTerminalBash) confines its commands too.
type bashTool struct {
	Tool
	sb *bashSandbox
}

// newBashTool is a bash tool, local or in the editor's terminal: the same
// name, description and input, with run running the calls.
func newBashTool(maxTimeout time.Duration, run func(ctx context.Context, env *Env, in bashInput) (Result, error)) Tool {
	return newTyped(Info{
		Name:        "bash",
		Description: bashDescription + shellNote(),
		Kind:        agent.ToolKindExecute,
		// The tool stops the command itself; this leaves room for that.
		Timeout: maxTimeout + jobs.StopGrace + 5*time.Second,
	}, func(s *jsonschema.Schema) {
		setMinimum(s, 0, "timeout")
		max := float64(maxTimeout.Milliseconds())
		s.Properties["timeout"].Maximum = &max
	}, run)
}

// bashCall is a bash call checked and permitted, ready to run.
type bashCall struct {
	dir, title string
	timeout    time.Duration
}

// prepareBash checks a call's input, asks the permissions it needs (its
// workdir when outside the workspace, then the command) and works out
// where it runs, its title and its timeout (at most maxTimeout). When ok
// is false, answer (or err) is the call's result already: bad input or a
// denial.
func prepareBash(ctx context.Context, env *Env, in bashInput, maxTimeout time.Duration) (c bashCall, answer Result, ok bool, err error) {
	ws, err := workspace(env)
	if err != nil {
		return c, Result{}, false, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return c, failure("invalid input", "The command is empty."), false, nil
	}
	root := ws.Root()
	c.dir = root
	if in.Workdir != "" {
		if c.dir, err = resolvePath(ws, in.Workdir); err != nil {
			return c, failure("invalid workdir", "%v", err), false, nil
		}
		info, err := os.Stat(c.dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return c, failure("no such directory", "The workdir %s does not exist.", displayPath(root, c.dir)), false, nil
		case err != nil:
			return c, failure("bad workdir", "The workdir %s cannot be used: %v", displayPath(root, c.dir), err), false, nil
		case !info.IsDir():
			return c, failure("not a directory", "The workdir %s is not a directory.", displayPath(root, c.dir)), false, nil
		}
		if outside, err := permission.Outside(root, c.dir); err != nil || outside {
			real, rerr := filepath.EvalSymlinks(c.dir)
			if rerr != nil {
				real = c.dir
			}
			if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.ExternalDirectory, Subjects: []string{real}, Title: "Run a command in " + real}); !ok {
				return c, denied, false, err
			}
		}
	}
	c.title = in.Description
	if c.title == "" {
		c.title = shorten(strings.Join(strings.Fields(in.Command), " "), 80)
	}
	if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.Bash, Shell: shellLanguage(), Subjects: []string{in.Command}, Dir: c.dir, Title: in.Command}); !ok {
		return c, denied, false, err
	}
	c.timeout = bashDefaultTimeout
	if in.Timeout > 0 {
		c.timeout = min(time.Duration(in.Timeout)*time.Millisecond, maxTimeout)
	}
	return c, Result{}, true, nil
}

// bashEnd is how a command ended.
type bashEnd struct {
	code     int // -1 when a signal ended it
	signal   string
	timedOut bool
	timeout  time.Duration
}

// report writes what the model reads of a finished command: its output
// (or that there was none), then how it ended; stopped says what a
// timeout stopped. It returns the result's metadata, which notes may add
// to.
func (e bashEnd) report(b *strings.Builder, output, stopped string) map[string]any {
	if output == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString(strings.TrimRight(output, "\n"))
	}
	b.WriteString("\n\n")
	switch {
	case e.timedOut:
		fmt.Fprintf(b, "The command timed out after %s and was stopped%s.", e.timeout, stopped)
	case e.signal != "":
		fmt.Fprintf(b, "The command was killed by signal %s.", e.signal)
	default:
		fmt.Fprintf(b, "Exit code %d.", e.code)
	}
	meta := map[string]any{"exitCode": e.code, "timedOut": e.timedOut}
	if e.signal != "" {
		meta["signal"] = e.signal
	}
	return meta
}

// failed reports whether the model should see the call as failed.
func (e bashEnd) failed() bool { return e.timedOut || e.signal != "" || e.code != 0 }

func runBash(ctx context.Context, env *Env, in bashInput, maxTimeout time.Duration, sp bashSpawn) (Result, error) {
	c, answer, ok, err := prepareBash(ctx, env, in, maxTimeout)
	if !ok {
		return answer, err
	}
	confine, notice, err := sp.sb.prepare(env, in.Command)
	if err != nil {
		return failure("no sandbox", "The command was not run: %v. Tell the user; they can change sandbox.mode.", err), nil
	}
	guard := sp.sb.guard
	if in.RunInBackground {
		res, _, err := guard.guardRoot(ctx, env, func() (Result, string, error) {
			res, err := startBackground(env, in.Command, c.dir, c.title, sp, confine)
			return res, "", err
		})
		return withNotice(res, notice), err
	}
	res, output, err := guard.guardRoot(ctx, env, func() (Result, string, error) {
		return runForeground(ctx, env, in, c, sp, confine)
	})
	if err != nil || !res.IsError || confine == nil {
		return withNotice(res, notice), err
	}
	return sp.sb.escape(ctx, env, in.Command, c.dir, output, res, func() (Result, error) {
		res, _, err := guard.guardRoot(ctx, env, func() (Result, string, error) {
			return runForeground(ctx, env, in, c, sp, nil)
		})
		return res, err
	})
}

// withNotice adds the once-per-session note about the sandbox to res.
func withNotice(res Result, notice string) Result {
	if notice != "" {
		res.Output += "\n" + notice
	}
	return res
}

// runForeground runs a checked call to its end, confined by confine (nil:
// as it is), and returns its result and its output as captured.
func runForeground(ctx context.Context, env *Env, in bashInput, c bashCall, sp bashSpawn, confine func(*exec.Cmd) error) (Result, string, error) {
	out := jobs.NewCapture(func() (*os.File, error) { return saveFile(env, "bash") }, env.Progress)
	cmd, err := bashCommand(in.Command, c.dir, sp.environ, confine)
	if err != nil {
		return failure("could not start", "The command could not be started: %v", err), "", nil
	}
	p, err := jobs.StartProc(cmd, "bash: "+in.Command, out, sp.reg)
	if err != nil {
		return failure("could not start", "The command could not be started: %v", err), "", nil
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-p.Exited():
	case <-timer.C:
		timedOut = true
		p.Stop(jobs.StopGrace)
	case <-ctx.Done():
		p.Stop(cancelGrace)
		out.Finish()
		return Result{}, "", ctx.Err()
	}

	// The command has exited. What it started may live on: holding its
	// output (a server started with "&"), or not (one whose output goes to
	// a file).
	var notes []string
	held := !p.WaitRead(pipeGrace)
	if held || p.GroupAlive() {
		if jb, ok := adoptLeftovers(env, p, in.Command, sp.sb.ended(env)); ok {
			notes = append(notes, fmt.Sprintf("The command exited, but processes it started are still running; they are now background job %s. Read their output with bash_output, stop them with bash_kill.", jb.ID()))
		} else {
			p.Stop(jobs.StopGrace)
			notes = append(notes, "The command exited, leaving processes it started running; they were stopped. To keep a process running, start it with run_in_background: true.")
		}
	}
	if !held {
		p.CloseOut()
	}
	end := bashEnd{timedOut: timedOut, timeout: c.timeout}
	end.code, end.signal = p.ExitCode()
	text := out.Text()
	saved, saveErr := out.Finish()

	var b strings.Builder
	meta := end.report(&b, text, ", with every process it started")
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	if out.Truncated() {
		switch {
		case saved != "":
			fmt.Fprintf(&b, "\nThe output was cut to its beginning and end; all of it is in %s (read it with offset and limit).", saved)
			meta["outputPath"] = saved
		case saveErr != nil:
			fmt.Fprintf(&b, "\nThe output was cut to its beginning and end (the full output could not be saved: %v).", saveErr)
		}
	}
	return Result{
		Output:   b.String(),
		IsError:  end.failed(),
		Title:    c.title,
		Metadata: metadata(meta),
	}, text, nil
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
func adoptLeftovers(env *Env, p *jobs.Proc, command string, ended func()) (*jobs.Job, bool) {
	if env.Jobs == nil || !p.GroupAlive() {
		return nil, false
	}
	return env.Jobs.Adopt(p, command, ended)
}

func startBackground(env *Env, command, dir, title string, sp bashSpawn, confine func(*exec.Cmd) error) (Result, error) {
	if env.Jobs == nil {
		return failure("no background jobs", "Background jobs are not available in this session. Run the command without run_in_background, with a timeout."), nil
	}
	cmd, err := bashCommand(command, dir, sp.environ, confine)
	if err != nil {
		return failure("could not start", "The command could not be started in the background: %v", err), nil
	}
	jb, err := env.Jobs.Start(cmd, command, sp.reg, sp.sb.ended(env))
	if err != nil {
		return failure("could not start", "The command could not be started in the background: %v", err), nil
	}
	return Result{
		Output:   fmt.Sprintf("Started background job %s. Read its output and status with bash_output (job_id %q); stop it with bash_kill. It is stopped when the session ends.", jb.ID(), jb.ID()),
		Title:    title,
		Metadata: metadata(map[string]any{"jobId": jb.ID(), "background": true}),
	}, nil
}

// bashCommand is the program a command line runs as: bash (or sh) -c
// command, in dir, with an environment in which nothing waits for a person
// at a terminal (no pagers, no prompts). Every bash command, foreground or
// background, is built here. environ is its environment (nil: darman's
// own), secrets already filtered out (internal/childenv); confine, when not
// nil, rewrites the command into its sandboxed form (see sandbox.go).
func bashCommand(command, dir string, environ []string, confine func(*exec.Cmd) error) (*exec.Cmd, error) {
	sh, err := findShell()
	if err != nil {
		return nil, err
	}
	argv := sh.argv(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if environ == nil {
		environ = os.Environ()
	}
	cmd.Env = append(slices.Clip(environ), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	if filepath.IsAbs(dir) {
		// $PWD and $OLDPWD (and ~+, ~-) name the command's directory, as
		// the permission checks read them, not wherever darman was started
		// from or had been before.
		cmd.Env = append(cmd.Env, "PWD="+dir, "OLDPWD="+dir)
	}
	if confine != nil {
		if err := confine(cmd); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}
