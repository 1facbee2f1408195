package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/prompt"
)

// systemPrompt builds a session's system prompt once and keeps it (for the
// sessions that ran last, see prompt.Memo), so the provider's prompt cache
// holds from one step and turn to the next.
func systemPrompt(root string, skills *prompt.Skills, log *slog.Logger) func(context.Context, agent.Session, []string) (string, error) {
	memo := prompt.NewMemo(0, func(ctx context.Context, _, model string, tools []string) (string, error) {
		p, err := prompt.Build(ctx, prompt.Options{Root: root, Tools: tools, Model: model, Skills: skills.List(), Logger: log})
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
