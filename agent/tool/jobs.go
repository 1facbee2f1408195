package tool

import (
	"log/slog"

	"github.com/darman-dev/darman/agent/tool/internal/jobs"
)

// Jobs are the background commands of one session: those started with
// bash's run_in_background, and the processes a command left running when
// it exited (a server started with "&"); bash_output reads them and
// bash_kill stops them. The agent loop makes one per session with NewJobs
// and closes it when the session ends; Close stops every process group
// still running. A Jobs is safe for concurrent use.
type Jobs = jobs.Jobs

// NewJobs returns an empty set of jobs. logger, nil to discard, hears
// about jobs starting and ending.
func NewJobs(logger *slog.Logger) *Jobs { return jobs.New(logger) }
