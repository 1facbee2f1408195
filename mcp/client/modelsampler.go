package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/darman-dev/darman/agent/llm"
)

// ModelSampler serves servers' sampling requests with darman's own model,
// through agent/llm.
type ModelSampler struct {
	// Model returns the provider, the model id it knows and the
	// "provider/model-id" reference reported to the server; it is called
	// per request, so a model chosen later (or changed) is used.
	Model func(ctx context.Context) (p llm.Provider, model, ref string, err error)
}

// Sample runs one completion, capped at req.MaxTokens, without tools.
func (s ModelSampler) Sample(ctx context.Context, req SampleRequest) (SampleResult, error) {
	if s.Model == nil {
		return SampleResult{}, errors.New("no model is configured")
	}
	p, model, ref, err := s.Model(ctx)
	if err != nil {
		return SampleResult{}, err
	}
	lr := &llm.Request{Model: model, System: req.System, MaxOutputTokens: req.MaxTokens}
	for _, m := range req.Messages {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		lr.Messages = append(lr.Messages, llm.Message{Role: role, Parts: []llm.Part{llm.Text{Text: m.Text}}})
	}
	res, err := llm.Collect(p.Stream(ctx, lr))
	if err != nil {
		return SampleResult{}, fmt.Errorf("model %s: %w", ref, err)
	}
	stop := "endTurn"
	if res.Finish == llm.FinishLength {
		stop = "maxTokens"
	}
	return SampleResult{Model: ref, Text: res.Text(), StopReason: stop,
		InputTokens: res.Usage.Input + res.Usage.CacheRead + res.Usage.CacheWrite, OutputTokens: res.Usage.Output, Cost: res.Cost}, nil
}
