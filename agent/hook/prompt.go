package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// promptSystem is what the model is told of a prompt hook's question.
const promptSystem = `You are a hook of a coding agent: you decide whether what the agent is about to do, or has done, may go on. The user's question follows, with the event's details as JSON. Answer with one JSON object and nothing else: {"ok": true} to let it go on, or {"ok": false, "reason": "..."} to stop it, the reason being what the agent is told to do instead.`

// askOne runs a prompt hook: the question, with the event's JSON in place
// of $ARGUMENTS, goes to the model, and its answer is read as a command
// hook's JSON output would be ({"ok": false, "reason"} as decision
// "block"; Claude Code's older {"decision": "approve"|"block"} too).
// An answer that is not such an object, a model error or a timeout is a
// failure, which never blocks.
func (e *Engine) askOne(ctx context.Context, h Hook, payload []byte) outcome {
	began := time.Now()
	question := h.Prompt
	if strings.Contains(question, "$ARGUMENTS") {
		question = strings.ReplaceAll(question, "$ARGUMENTS", string(payload))
	} else {
		question += "\n\n" + string(payload)
	}
	askCtx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	answer, err := e.opts.Ask(askCtx, promptSystem, question)
	o := outcome{took: time.Since(began)}
	switch {
	case ctx.Err() != nil:
		o.cancelled = true
		return o
	case askCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		o.timedOut = true
		return o
	case err != nil:
		o.startErr = fmt.Errorf("the model did not answer: %w", err)
		return o
	}
	out, err := promptOutput(answer)
	if err != nil {
		o.code, o.stderr = 1, err.Error()
		return o
	}
	o.stdout = out
	return o
}

// promptOutput turns the model's answer into a hook's JSON output.
func promptOutput(answer string) (string, error) {
	s := strings.TrimSpace(answer)
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return "", fmt.Errorf("the model's answer is not a JSON object: %q", clip(s, 200))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s[i:j+1]), &m); err != nil {
		return "", fmt.Errorf("the model's answer is not a JSON object (%v): %q", err, clip(s, 200))
	}
	_, hasDecision := m["decision"]
	_, hasContinue := m["continue"]
	ok, hasOK := m["ok"].(bool)
	if !hasOK && !hasDecision && !hasContinue {
		return "", fmt.Errorf("the model's answer says neither ok nor decision: %q", clip(s, 200))
	}
	delete(m, "ok")
	if hasOK && !ok {
		m["decision"] = "block"
	}
	b, err := marshal(m)
	return string(b), err
}
