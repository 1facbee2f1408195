package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/darman-dev/darman/agent/session"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/tool"
)

// logTool answers with about size bytes that name its input, so that a
// test can tell in a request which outputs were sent whole.
type logTool struct{ size int }

func (l logTool) Info() tool.Info {
	return tool.Info{Name: "fetch_log", Description: "Returns a log.", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		Kind: agent.ToolKindRead, ReadOnly: true}
}

func (l logTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct{ X string }
	json.Unmarshal(input, &in)
	word := payload(in.X) + " "
	return tool.Result{Output: strings.Repeat(word, l.size/len(word)), Title: in.X}, nil
}

func payload(x string) string { return "payload[" + x + "]" }

// The scripted model's window in these tests: 5,000 tokens for the
// request, about four outputs of logTool{5000}.
const (
	tinyWindow = 6000
	tinyOutput = 1000
)

var tinyModel = map[string]llm.ModelOverride{"claude-sonnet-4-5": {ContextWindow: tinyWindow, MaxOutput: tinyOutput}}

func fetchLog(id, x string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: "fetch_log", Arguments: json.RawMessage(fmt.Sprintf(`{"x":%q}`, x))}
}

// isSummaryCall tells the summarizing call from the turn's steps: it is the
// one that offers no tools.
func isSummaryCall(c *llmtest.Call) bool { return !c.Get("tools").Exists() }

// answersToolResult reports whether the request's last message carries
// tool results (the step after tool calls) rather than the user's prompt.
func answersToolResult(c *llmtest.Call) bool {
	return c.Get("messages.@reverse.0.content.0.type").String() == "tool_result"
}

// tooLong is the Anthropic API's answer to a request over the window.
var tooLong = llmtest.Step{Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 400, Type: "invalid_request_error",
	Message: "prompt is too long: 212345 tokens > 200000 maximum", Times: -1}}}

func storedOutputs(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	msgs, err := f.store.Messages(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind == agent.PartTool {
				out[p.Tool.CallID] = p.Tool.Output
			}
		}
	}
	return out
}

func TestCompactionPrunesOldToolOutputsFirst(t *testing.T) {
	var steps []llmtest.Step
	for i := 1; i <= 5; i++ {
		steps = append(steps,
			llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog(fmt.Sprintf("call_%d", i), fmt.Sprintf("t%d", i))}},
			llmtest.Step{Text: fmt.Sprintf("Log %d is fine.", i)})
	}
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: steps}, tools: []tool.Tool{logTool{size: 5000}}, models: tinyModel})
	for i := 1; i <= 5; i++ {
		msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text(fmt.Sprintf("check log %d", i))})
		if err != nil || msg.Finish != agent.FinishStop {
			t.Fatalf("turn %d: %+v, %v", i, msg, err)
		}
	}

	calls := f.srv.ModelCalls()
	if len(calls) != 10 {
		t.Fatalf("%d model calls, want 10: pruning needs no extra call", len(calls))
	}
	for i, c := range calls {
		if isSummaryCall(c) {
			t.Errorf("call %d summarized the conversation, though pruning old outputs was enough", i+1)
		}
		if tokens := len(c.Body) / 4; tokens > tinyWindow {
			t.Errorf("call %d sent about %d tokens to a %d-token window", i+1, tokens, tinyWindow)
		}
	}
	// Without pruning, the last request would hold five outputs: 25 KB.
	last := string(calls[len(calls)-1].Body)
	for i := 1; i <= 5; i++ {
		whole := strings.Contains(last, payload(fmt.Sprintf("t%d", i)))
		if keep := i >= 4; whole != keep {
			t.Errorf("last request: output of turn %d sent whole = %v, want %v (the last %d user turns keep theirs)", i, whole, keep, 2)
		}
	}
	if n := strings.Count(last, "[output pruned to save context; run the tool again if you need it]"); n != 3 {
		t.Errorf("last request has %d pruned outputs, want 3:\n%s", n, last)
	}
	// The store keeps every output as the tool gave it.
	for id, out := range storedOutputs(t, f) {
		if len(out) < 4900 || !strings.HasPrefix(out, "payload[t") {
			t.Errorf("stored output of %s: %.80q", id, out)
		}
	}
}

func TestCompactionSummarizesALongTurnAndTheTurnGoesOn(t *testing.T) {
	const logs = 8
	const summary = "Goal: read logs t1 to t8 and say whether they are clean.\nDone: the first logs read, clean.\nRemains: the rest."
	var steps atomic.Int32
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if isSummaryCall(c) {
			return llmtest.Step{Text: summary}
		}
		k := int(steps.Add(1))
		if k > logs {
			return llmtest.Step{Text: "All 8 logs are clean."}
		}
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog(fmt.Sprintf("call_%d", k), fmt.Sprintf("t%d", k))}}
	}}, tools: []tool.Tool{logTool{size: 5000}}, models: tinyModel})
	wait := f.events(t)

	const request = "Read the logs t1 to t8 and tell me whether they are clean."
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text(request)})
	if err != nil {
		t.Fatal(err)
	}
	evs := wait()
	if msg.Finish != agent.FinishStop {
		t.Fatalf("the turn ended %q: %s", msg.Finish, msg.Error)
	}

	// The model was asked for a summary, from the older history, and the
	// steps after it started from the summary.
	calls := f.srv.ModelCalls()
	var summaries, after int
	for i, c := range calls {
		body := string(c.Body)
		if tokens := len(body) / 4; tokens > tinyWindow {
			t.Errorf("call %d sent about %d tokens to a %d-token window", i+1, tokens, tinyWindow)
		}
		if isSummaryCall(c) {
			if summaries++; summaries == 1 {
				for _, want := range []string{request, payload("t1"), "Remains:"} {
					if !strings.Contains(body, want) {
						t.Errorf("the summary request lacks %q:\n%s", want, body)
					}
				}
			}
			continue
		}
		if summaries > 0 && after == 0 {
			after++
			first := c.Get("messages.0.content").Raw
			for _, want := range []string{"Remains: the rest.", request} {
				if !strings.Contains(first, want) {
					t.Errorf("the first request after the summary does not open with %q:\n%s", want, first)
				}
			}
			if strings.Contains(body, payload("t1")) {
				t.Error("the first request after the summary still holds the summarized outputs")
			}
		}
	}
	if summaries == 0 || after == 0 {
		t.Fatalf("%d summary calls, %d steps after one, in %d calls", summaries, after, len(calls))
	}

	// The summary is a compaction part of a user message; the originals
	// stay, and the answer after it is stored.
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	var compactions int
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind == agent.PartCompaction {
				compactions++
				if m.Message.Role != agent.RoleUser || p.Text != summary {
					t.Errorf("compaction part in a %s message: %q", m.Message.Role, p.Text)
				}
			}
		}
	}
	if compactions != summaries {
		t.Errorf("%d compaction parts for %d summaries", compactions, summaries)
	}
	outputs := storedOutputs(t, f)
	for k := 1; k <= logs; k++ {
		if out := outputs[fmt.Sprintf("call_%d", k)]; !strings.HasPrefix(out, payload(fmt.Sprintf("t%d", k))) || len(out) < 4900 {
			t.Errorf("stored output of call %d: %.60q", k, out)
		}
	}
	lastMsg := msgs[len(msgs)-1]
	if lastMsg.Message.Role != agent.RoleAssistant || len(lastMsg.Parts) == 0 || lastMsg.Parts[0].Text != "All 8 logs are clean." {
		t.Errorf("last stored message: %+v", lastMsg)
	}

	// People watching were told.
	var told bool
	for _, e := range evs {
		told = told || e.Kind == agent.EventState && strings.Contains(e.Reason, "compacting")
	}
	if !told {
		t.Error("no event said the conversation was being compacted")
	}

	// The next turn goes on from the summary.
	if msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("And t9?")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the turn after compaction: %+v, %v", msg, err)
	}
	calls = f.srv.ModelCalls()
	next := calls[len(calls)-1]
	if first := next.Get("messages.0.content").Raw; !strings.Contains(first, "Remains: the rest.") {
		t.Errorf("the next turn does not start from the summary: %s", first)
	}
	if latest := next.Get("messages.@reverse.0.content").Raw; !strings.Contains(latest, "And t9?") {
		t.Errorf("the next turn's prompt is not last: %s", latest)
	}
	t.Logf("%d model calls, %d of them summaries, for %d logs", len(calls), summaries, logs)
}

func TestContextTooLongErrorPrunesAndAsksAgain(t *testing.T) {
	var turns, refused atomic.Int32
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		body := string(c.Body)
		switch {
		case isSummaryCall(c):
			return llmtest.Step{Text: "summary"}
		case strings.Contains(body, "check log 3") && strings.Contains(body, payload("t1")):
			// The catalog's window is large, so only the API knows.
			refused.Add(1)
			return tooLong
		case answersToolResult(c):
			return llmtest.Step{Text: "fine"}
		}
		k := turns.Add(1)
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog(fmt.Sprintf("call_%d", k), fmt.Sprintf("t%d", k))}}
	}}, tools: []tool.Tool{logTool{size: 5000}}})
	for i := 1; i <= 4; i++ {
		msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text(fmt.Sprintf("check log %d", i))})
		if err != nil || msg.Finish != agent.FinishStop {
			t.Fatalf("turn %d: %+v, %v", i, msg, err)
		}
	}
	// Refused once: after that, the pruned history is sent from the start.
	if refused.Load() != 1 {
		t.Fatalf("refused %d times, want 1", refused.Load())
	}
	calls := f.srv.ModelCalls()
	for i, c := range calls {
		if isSummaryCall(c) {
			t.Errorf("call %d summarized the conversation, though pruning was enough", i+1)
		}
		if c.Fault != nil && i+1 < len(calls) {
			retry := string(calls[i+1].Body)
			if strings.Contains(retry, payload("t1")) || !strings.Contains(retry, payload("t2")) {
				t.Errorf("the call after the refusal did not prune exactly turn 1's output:\n%.300s", retry)
			}
		}
	}
	// The refused call is on record, and says what happened.
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	var failed []string
	for _, m := range msgs {
		if m.Message.Finish == agent.FinishError {
			failed = append(failed, m.Message.Error)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "context window") || !strings.Contains(failed[0], "compacted") {
		t.Errorf("failed messages on record: %q", failed)
	}
	if outputs := storedOutputs(t, f); !strings.HasPrefix(outputs["call_1"], payload("t1")) {
		t.Errorf("the store lost turn 1's output: %.60q", outputs["call_1"])
	}
}

func TestContextTooLongErrorInOneTurnSummarizes(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		body := string(c.Body)
		switch {
		case isSummaryCall(c):
			return llmtest.Step{Text: "Goal: read t1.\nDone: t1 read.\nRemains: answer."}
		case strings.Contains(body, "Remains: answer."):
			return llmtest.Step{Text: "t1 is clean."}
		case answersToolResult(c):
			return tooLong
		}
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{fetchLog("call_1", "t1")}}
	}}, tools: []tool.Tool{logTool{size: 5000}}})
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("is t1 clean?")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("%+v, %v", msg, err)
	}
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	last := msgs[len(msgs)-1]
	if len(last.Parts) == 0 || last.Parts[0].Text != "t1 is clean." {
		t.Fatalf("the turn did not go on after compacting: %+v", last)
	}
	var summaries int
	for _, c := range f.srv.ModelCalls() {
		if isSummaryCall(c) {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("%d summary calls, want 1 (one turn has nothing to prune)", summaries)
	}
}

func TestContextTooLongEvenAfterCompactionFailsTheTurn(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if isSummaryCall(c) {
			return llmtest.Step{Text: "Goal: hello."}
		}
		return tooLong
	}}, tools: []tool.Tool{logTool{size: 10}}})
	wait := f.events(t)
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	evs := wait()
	if msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "does not fit") {
		t.Fatalf("finish %q, error %q", msg.Finish, msg.Error)
	}
	if last := evs[len(evs)-1]; last.State != agent.StateFailed {
		t.Errorf("last event %+v", last)
	}
	if n := len(f.srv.ModelCalls()); n != 5 {
		t.Errorf("%d model calls, want 5: the request, then two rounds of summary and retry", n)
	}
}
