package tool

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool/internal/jobs"
)

//go:embed bash_output.md
var bashOutputDescription string

//go:embed bash_kill.md
var bashKillDescription string

type jobInput struct {
	JobID string `json:"job_id" jsonschema:"the id bash returned when it started the job, e.g. job-1"`
}

// newBashOutput returns the bash_output tool; guard (nil: none) looks at
// the protected names of the root, for what the jobs made so far.
func newBashOutput(guard *RootGuard) Tool {
	return newTyped(Info{
		Name:        "bash_output",
		Description: bashOutputDescription,
		Kind:        agent.ToolKindExecute,
		// Not read-only: each call takes the output it shows, so two at
		// once would split it.
		Timeout: 10 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in jobInput) (Result, error) {
		jb, res, ok := findJob(env, in.JobID)
		if !ok {
			return res, nil
		}
		return guard.lookAt(ctx, env, jobReport(env, jb, "bash_output"))
	})
}

// newBashKill returns the bash_kill tool; guard is as bash_output's.
func newBashKill(guard *RootGuard) Tool {
	return newTyped(Info{
		Name:        "bash_kill",
		Description: bashKillDescription,
		Kind:        agent.ToolKindExecute,
		Timeout:     jobs.StopGrace + 10*time.Second,
	}, nil, func(ctx context.Context, env *Env, in jobInput) (Result, error) {
		jb, res, ok := findJob(env, in.JobID)
		if !ok {
			return res, nil
		}
		if _, running, _ := jb.Status(); running {
			jb.Kill()
		}
		return guard.lookAt(ctx, env, jobReport(env, jb, "bash_kill"))
	})
}

func findJob(env *Env, id string) (*jobs.Job, Result, bool) {
	if env.Jobs == nil {
		return nil, failure("no background jobs", "This session has no background jobs."), false
	}
	jb, err := env.Jobs.Get(id)
	if err != nil {
		return nil, failure("no such job", "%v.", err), false
	}
	return jb, Result{}, true
}

// jobReport tells the model a job's new output and status.
func jobReport(env *Env, jb *jobs.Job, tool string) Result {
	status, running, code := jb.Status()
	data, dropped := jb.Take()
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (%s) is %s; started %s ago.\n", jb.ID(), shorten(jb.Command(), 200), status, time.Since(jb.Started()).Round(time.Second))
	meta := map[string]any{"jobId": jb.ID(), "running": running, "status": status}
	if !running {
		meta["exitCode"] = code
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "(%d bytes of earlier output were dropped: only the last %d KiB unread are kept.)\n", dropped, jobs.JobBuffer>>10)
	}
	if len(data) == 0 {
		b.WriteString("No new output.")
		return Result{Output: b.String(), Title: jb.ID() + ": " + status, Metadata: metadata(meta)}
	}
	text, cut := headTail(string(data), jobs.OutputMax, jobs.OutputHead)
	fmt.Fprintf(&b, "New output (%d bytes):\n%s", len(data), strings.TrimRight(text, "\n"))
	if cut {
		if path, err := saveOutput(env, tool, data); err == nil {
			fmt.Fprintf(&b, "\nThe output was cut to its beginning and end; all of it is in %s.", path)
			meta["outputPath"] = path
		}
	}
	return Result{Output: b.String(), Title: jb.ID() + ": " + status, Metadata: metadata(meta)}
}
