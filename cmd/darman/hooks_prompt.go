package main

import (
	"context"
	"fmt"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/internal/config"
)

// promptHookTokens caps a prompt hook's answer: a JSON decision.
const promptHookTokens = 512

// hookAsker is how prompt hooks ask their question: one call, without
// tools, to the small model (smallModel, else the session's default
// model); nil without models.
func hookAsker(cfg config.Config, m *models) func(ctx context.Context, system, prompt string) (string, error) {
	if m == nil {
		return nil
	}
	return func(ctx context.Context, system, prompt string) (string, error) {
		ref := cfg.SmallModel
		if ref == "" {
			ref = cfg.Model
		}
		if ref == "" {
			sel, err := m.selectModel(ctx)
			if err != nil {
				return "", err
			}
			ref = sel.Ref()
		}
		p, id, err := m.resolve(ref)
		if err != nil {
			return "", err
		}
		req := &llm.Request{Model: id, System: system, MaxOutputTokens: promptHookTokens,
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: prompt}}}}}
		res, err := llm.Collect(p.Stream(ctx, req))
		if err != nil {
			return "", fmt.Errorf("model %s: %w", ref, err)
		}
		return res.Text(), nil
	}
}
