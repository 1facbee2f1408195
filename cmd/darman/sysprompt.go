package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/prompt"
)

// systemPrompt builds a session's system prompt once and keeps it (for the
// sessions that ran last, see prompt.Memo), so the provider's prompt cache
// holds from one step and turn to the next.
// git, when set, has the repository's facts gathered at start-up for the
// first prompt.
func systemPrompt(root string, skills *prompt.Skills, git *earlyGit, log *slog.Logger) func(context.Context, agent.Session, []string) (string, error) {
	memo := prompt.NewMemo(0, func(ctx context.Context, _, model string, tools []string) (string, error) {
		p, err := prompt.Build(ctx, prompt.Options{Root: root, Tools: tools, Model: model, Skills: skills.List(), Git: git.facts(root), Logger: log})
		if err != nil {
			return "", err
		}
		for _, problem := range p.Problems {
			log.Warn("instruction file skipped", "problem", fmt.Sprint(problem))
		}
		return p.Text(), nil
	})
	return func(ctx context.Context, s agent.Session, tools []string) (string, error) {
		return memo.Prompt(ctx, string(s.ID), s.Model, tools)
	}
}

// earlyGit is git status of a workspace started with darman, beside the
// rest of its start-up, so that the first turn's prompt need not wait for
// it: the first prompt built takes its answer (the facts of the session's
// start), later ones run git again.
type earlyGit struct {
	done           chan struct{}
	taken          atomic.Bool
	branch, status string
	err            error
}

// startGit starts git status in root (prompt.GitStatus, bounded by its
// own timeout).
func startGit(root string) *earlyGit {
	g := &earlyGit{done: make(chan struct{})}
	go func() {
		defer close(g.done)
		g.branch, g.status, g.err = prompt.GitStatus(context.Background(), root)
	}()
	return g
}

// facts is the prompt's Options.Git: nil (prompt.GitStatus) when g is.
func (g *earlyGit) facts(root string) func(context.Context) (string, string, error) {
	if g == nil {
		return nil
	}
	return func(ctx context.Context) (string, string, error) {
		if !g.taken.CompareAndSwap(false, true) {
			return prompt.GitStatus(ctx, root)
		}
		select {
		case <-g.done:
			return g.branch, g.status, g.err
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
}
