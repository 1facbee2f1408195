package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNotRepository is what Options.Git returns (wrapped) when the workspace
// is not inside a git repository.
var ErrNotRepository = errors.New("not a git repository")

// gitTimeout bounds the git status run by Build; a slow repository costs
// the git facts, not the turn.
const gitTimeout = 2 * time.Second

// maxGitOutput bounds what is read from git status.
const maxGitOutput = 256 << 10

// GitStatus runs git status in dir and returns the current branch and the
// porcelain status lines. It is Build's default Options.Git. It takes no
// optional locks, so it never races another git command for the index. The
// branch is "HEAD (detached)" on a detached HEAD. It fails with
// ErrNotRepository outside a repository, and with another error when git
// is missing, times out or fails.
func GitStatus(ctx context.Context, dir string) (branch, status string, err error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	// A plain start, not internal/child's: the run is short, bounded by
	// gitTimeout and awaited, and what it may leave running, the
	// fsmonitor daemon of a repository with core.fsmonitor set, is the
	// user's and should outlive it, where on Windows a job of darman's
	// would end it.
	cmd := exec.CommandContext(ctx, "git", "--no-optional-locks", "status", "--porcelain=v1", "--branch")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	cmd.WaitDelay = time.Second
	out := &capped{limit: maxGitOutput}
	var stderr capped
	stderr.limit = 4 << 10
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		switch {
		case ctx.Err() != nil:
			return "", "", fmt.Errorf("git status: %w", ctx.Err())
		case strings.Contains(msg, "not a git repository"):
			return "", "", fmt.Errorf("%s: %w", dir, ErrNotRepository)
		case msg != "":
			return "", "", fmt.Errorf("git status: %w: %s", err, msg)
		}
		return "", "", fmt.Errorf("git status: %w", err)
	}
	head, rest, _ := strings.Cut(out.String(), "\n")
	return parseBranch(head), strings.TrimRight(rest, "\n"), nil
}

// parseBranch reads the "## ..." line of git status --branch.
func parseBranch(line string) string {
	b, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return ""
	}
	if s, ok := strings.CutPrefix(b, "No commits yet on "); ok {
		return s
	}
	if s, ok := strings.CutPrefix(b, "Initial commit on "); ok {
		return s
	}
	if strings.HasPrefix(b, "HEAD (no branch)") {
		return "HEAD (detached)"
	}
	b, _, _ = strings.Cut(b, "...")
	b, _, _ = strings.Cut(b, " [")
	return b
}

// capped keeps the first limit bytes written to it and drops the rest, so
// a runaway command cannot fill memory.
type capped struct {
	bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
