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
	args := append(safeGitArgs(ctx, dir), "--no-optional-locks", "status", "--porcelain=v1", "--branch", "--ignore-submodules=all")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
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

// gitEnv is what darman's own git commands add to the environment.
var gitEnv = []string{"LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0"}

// safeGitArgs are the -c options that keep darman's git status from
// running a program the repository's configuration names: a .git/config
// written by a command (or a cloned project's tooling) is not the user's
// choice of what darman runs. git status can reach core.fsmonitor (run on
// every status) and the clean filters of the drivers .gitattributes
// chooses (run to compare a changed file's content); it runs no hooks,
// pager or diff program, and --ignore-submodules=all keeps it out of
// submodules. Driver names are the configuration's own, so they are read
// first with git config, which runs nothing; the command line's -c wins
// over every configuration file.
func safeGitArgs(ctx context.Context, dir string) []string {
	args := []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"}
	cmd := exec.CommandContext(ctx, "git", "config", "--null", "--name-only", "--get-regexp", `^filter\..*\.(clean|process)$`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	out := &capped{limit: maxGitOutput}
	cmd.Stdout = out
	if cmd.Run() != nil {
		return args // none set (exit 1), or not a repository: status says
	}
	for _, key := range strings.Split(out.String(), "\x00") {
		if key = strings.TrimSpace(key); key != "" {
			args = append(args, "-c", key+"=")
		}
	}
	return args
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
