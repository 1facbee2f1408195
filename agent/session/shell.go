package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// Shell runs a shell command for a session the way its bash tool does,
// under the session's bash permission (rules, grants, and the Asker, with
// the question published as the session's events), and returns what the
// command printed: it is how a command template's !`cmd` runs
// (prompt.ExpandOptions.Run). A refused permission is an error wrapping
// permission.ErrDenied (a *permission.DeniedError); a command that could
// not start or did not finish within the bash tool's timeout is an error
// too. A command that ran and exited non-zero returns its output with a
// last line giving its exit status, since failing output is often what a
// command wants to show. It fails when the service has no tool named bash.
func (s *Service) Shell(ctx context.Context, id agent.ID, command string) (string, error) {
	return s.shell(ctx, id, s.workspaceOf(id), command)
}

// shell is Shell in the workspace ws.
func (s *Service) shell(ctx context.Context, id agent.ID, ws tool.Workspace, command string) (string, error) {
	var bash tool.Tool
	for _, tl := range s.opts.Tools {
		if tl.Info().Name == "bash" {
			bash = tl
		}
	}
	if bash == nil {
		return "", errors.New("commands cannot run here: the agent has no bash tool")
	}
	l, err := s.get(ctx, id)
	if err != nil {
		return "", err
	}
	var (
		mu     sync.Mutex
		output string
		denied error
	)
	var clock *tool.Clock
	if timeout := bash.Info().Timeout; timeout > 0 {
		clock = tool.NewClock(ctx, timeout)
		defer clock.Stop()
		ctx = clock
	}
	env := &tool.Env{
		SessionID: id,
		Workspace: ws,
		Permit: l.askPausing(clock, func(err error) {
			if err != nil {
				mu.Lock()
				denied = err
				mu.Unlock()
			}
		}),
		// The bash tool reports the whole output so far, as the model would
		// see it but without its notes on the exit code.
		Progress: func(out string) {
			mu.Lock()
			output = out
			mu.Unlock()
		},
		Files:  l.files,
		Logger: s.log.With("shell", command),
	}
	input, _ := json.Marshal(map[string]string{"command": command, "description": "run for a command template"})
	res, err := runSafely(ctx, bash, env, &agent.ToolCall{Name: "bash", Input: input})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case denied != nil:
		return "", denied
	case err != nil:
		return "", err
	}
	var meta struct {
		ExitCode *int `json:"exitCode"`
		TimedOut bool `json:"timedOut"`
	}
	json.Unmarshal(res.Metadata, &meta)
	switch {
	case meta.TimedOut:
		return "", errors.New("it did not finish within the bash tool's timeout and was stopped")
	case meta.ExitCode == nil && res.IsError:
		return "", errors.New(res.Output)
	case meta.ExitCode != nil && *meta.ExitCode != 0:
		return fmt.Sprintf("%s\n(exit status %d)", output, *meta.ExitCode), nil
	}
	return output, nil
}

// askPausing is the Permit of a call the user makes themselves (Shell's
// command, Apply's edit): the session's checker asks, with clock, when
// there is one, stopped while the question waits (the person's time is
// not the call's), and answered gets what it said.
func (l *live) askPausing(clock *tool.Clock, answered func(error)) func(context.Context, permission.Call) error {
	return func(ctx context.Context, c permission.Call) error {
		if clock != nil {
			defer clock.Pause()()
		}
		err := l.checker.Check(ctx, c)
		answered(err)
		return err
	}
}
