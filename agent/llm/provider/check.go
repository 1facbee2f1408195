package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm"
)

// CheckResult is the outcome of [Check], for `darman doctor --check-model`.
type CheckResult struct {
	// Ref is the model checked, "provider/model-id".
	Ref string
	// URL is the provider's base URL.
	URL string
	// Latency is how long the whole answer took.
	Latency time.Duration
	// Reply is the model's answer.
	Reply string
	Usage llm.Usage
	// Retries counts the retries it took.
	Retries int
	// Err is why the check failed; nil when the model answered.
	Err *llm.Error
}

// OK reports whether the model answered.
func (r CheckResult) OK() bool { return r.Err == nil }

// String is the line doctor prints:
//
//	ok: anthropic/claude-sonnet-4-6 answered "OK" in 850 ms (14 tokens in, 2 out)
//	failed: anthropic/claude-sonnet-4-6: the Anthropic API rejected the key from ANTHROPIC_API_KEY (401)
func (r CheckResult) String() string {
	if r.Err != nil {
		return fmt.Sprintf("failed: %s: %v", r.Ref, r.Err)
	}
	reply := strings.TrimSpace(r.Reply)
	if len(reply) > 60 {
		reply = reply[:60] + "…"
	}
	s := fmt.Sprintf("ok: %s answered %q in %s (%d tokens in, %d out)", r.Ref, reply, llm.HumanDuration(r.Latency),
		r.Usage.ContextTokens(), r.Usage.Output)
	if r.Retries > 0 {
		s += fmt.Sprintf(" after %d retries", r.Retries)
	}
	return s
}

// Check makes one tiny request to see that the provider, the key and the
// model work together.
func Check(ctx context.Context, c *llm.Client, model string) CheckResult {
	res := CheckResult{Ref: c.Name() + "/" + model, URL: c.BaseURL()}
	req := &llm.Request{
		Model:           model,
		Messages:        []llm.Message{llm.UserText("Reply with the single word OK.")},
		MaxOutputTokens: 64,
		Cache:           llm.CacheOptions{Disabled: true},
	}
	if c.Model(model).Reasoning && c.Type() == llm.TypeOpenAI {
		// Reasoning models spend output tokens thinking before they answer.
		req.MaxOutputTokens = 1024
		req.Reasoning.Effort = "low"
	}
	start := time.Now()
	r, err := llm.Collect(c.Stream(ctx, req))
	res.Latency = time.Since(start)
	if r != nil {
		res.Reply, res.Usage, res.Retries = r.Text(), r.Usage, len(r.Retries)
	}
	if err != nil {
		var e *llm.Error
		if !errors.As(err, &e) {
			e = &llm.Error{Kind: llm.ErrOther, Provider: c.DisplayName(), Model: model, Err: err}
		}
		res.Err = e
	}
	return res
}
