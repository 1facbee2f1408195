package llm_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// checkOrder asserts the stream's order contract: content, then one usage,
// then one finish, last.
func checkOrder(t *testing.T, events []llm.Event) {
	t.Helper()
	n := len(events)
	if n < 2 || events[n-2].Kind != llm.EventUsage || events[n-1].Kind != llm.EventFinish {
		t.Fatalf("stream does not end with usage, finish: %v", kinds(events))
	}
	if len(ofKind(events, llm.EventUsage)) != 1 || len(ofKind(events, llm.EventFinish)) != 1 {
		t.Fatalf("want one usage and one finish: %v", kinds(events))
	}
}

func TestStreamText(t *testing.T) {
	const text = "Hello there, this answer arrives in many small pieces."
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: text}}})
			c := newClient(t, api.settings(srv), fastRetry)
			events, err := drain(c.Stream(ctxT(t), ask("hi")))
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, events)
			deltas := ofKind(events, llm.EventTextDelta)
			if len(deltas) != 9 {
				t.Errorf("got %d text deltas, want one per word (9)", len(deltas))
			}
			if got := joined(events, llm.EventTextDelta); got != text {
				t.Errorf("text = %q, want %q", got, text)
			}
			for _, d := range deltas {
				if d.Index != deltas[0].Index {
					t.Errorf("text deltas of one part have indexes %d and %d", deltas[0].Index, d.Index)
				}
			}
			if f := events[len(events)-1].Finish; f != llm.FinishStop {
				t.Errorf("finish = %q, want stop", f)
			}
			if calls := srv.ModelCalls(); len(calls) != 1 || calls[0].API != api.api || !calls[0].Stream {
				t.Errorf("server saw %d calls, want one streamed %s call", len(calls), api.api)
			}
		})
	}
}

func TestStreamReasoning(t *testing.T) {
	const thinking = "The user greets me. A short greeting back is enough."
	wantOrigin := map[string]string{"anthropic": "anthropic", "chat": "openai-chat", "responses": "openai-responses"}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Reasoning: thinking, Text: "Hello!"}}})
			c := newClient(t, api.settings(srv), fastRetry)
			req := ask("hi")
			req.Reasoning.Effort = "low"
			events, err := drain(c.Stream(ctxT(t), req))
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, events)
			if got := joined(events, llm.EventReasoningDelta); got != thinking {
				t.Errorf("reasoning = %q, want %q", got, thinking)
			}
			ends := ofKind(events, llm.EventReasoningEnd)
			if len(ends) != 1 {
				t.Fatalf("got %d reasoning ends, want 1: %v", len(ends), kinds(events))
			}
			r := ends[0].Reasoning
			if r.Text != thinking || r.Origin != wantOrigin[api.name] || r.Origin != c.API() {
				t.Errorf("reasoning end = %+v", r)
			}
			switch api.name {
			case "anthropic":
				if r.Signature != "sig-step0" {
					t.Errorf("signature = %q, want the scripted sig-step0", r.Signature)
				}
			case "responses":
				if r.Encrypted != "enc-step0" || r.ItemID == "" {
					t.Errorf("encrypted content %q, item id %q", r.Encrypted, r.ItemID)
				}
			}
			text := ofKind(events, llm.EventTextDelta)
			if len(text) == 0 || text[0].Index == ends[0].Index {
				t.Errorf("text and reasoning share part index %d", ends[0].Index)
			}
			// The reasoning comes before the text.
			first := slices.IndexFunc(events, func(e llm.Event) bool { return e.Kind == llm.EventTextDelta })
			last := slices.IndexFunc(events, func(e llm.Event) bool { return e.Kind == llm.EventReasoningEnd })
			if last > first {
				t.Errorf("reasoning ends after the text starts: %v", kinds(events))
			}
		})
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	read := json.RawMessage(`{"path":"internal/config/config.go","offset":10,"limit":200}`)
	grep := json.RawMessage(`{"pattern":"func (c \\*Client) Stream","glob":"**/*.go","context":{"before":2,"after":3}}`)
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{
				Text:       "Let me look.",
				Interleave: true,
				ToolCalls: []llmtest.ToolCall{
					{ID: "call_read", Name: "read", Arguments: read, Chunks: 9},
					{ID: "call_grep", Name: "grep", Arguments: grep, Chunks: 13},
				},
			}}})
			c := newClient(t, api.settings(srv), fastRetry)
			events, err := drain(c.Stream(ctxT(t), ask("where is Stream defined?")))
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, events)
			starts := ofKind(events, llm.EventToolCallStart)
			ends := ofKind(events, llm.EventToolCallEnd)
			if len(starts) != 2 || len(ends) != 2 {
				t.Fatalf("got %d starts and %d ends, want 2 each: %v", len(starts), len(ends), kinds(events))
			}
			want := map[string]json.RawMessage{"call_read": read, "call_grep": grep}
			names := map[string]string{"call_read": "read", "call_grep": "grep"}
			for _, end := range ends {
				tc := end.ToolCall
				if end.Err != nil {
					t.Errorf("%s: %v", tc.ID, end.Err)
				}
				if tc.Name != names[tc.ID] || !jsonEqual(t, tc.Arguments, want[tc.ID]) {
					t.Errorf("end %s %s(%s), want %s(%s)", tc.ID, tc.Name, tc.Arguments, names[tc.ID], want[tc.ID])
				}
				// The fragments of one call, joined, are its arguments.
				var frags string
				n := 0
				for _, d := range ofKind(events, llm.EventToolCallDelta) {
					if d.Index == end.Index {
						if d.ToolCall.ID != tc.ID {
							t.Errorf("delta of part %d names call %q, want %q", d.Index, d.ToolCall.ID, tc.ID)
						}
						frags += d.Text
						n++
					}
				}
				if frags != string(want[tc.ID]) || n < 9 {
					t.Errorf("%s: %d fragments joined to %s", tc.ID, n, frags)
				}
			}
			if starts[0].Index == starts[1].Index {
				t.Errorf("two tool calls share part index %d", starts[0].Index)
			}
			if f := events[len(events)-1].Finish; f != llm.FinishToolUse {
				t.Errorf("finish = %q, want tool_use", f)
			}
		})
	}
}

func TestStreamUsageAndCost(t *testing.T) {
	// Usage in each API's own terms; darman's Usage counts uncached input
	// apart, whatever the API.
	cases := []struct {
		api    string
		model  string
		script llmtest.Usage
		want   llm.Usage
		cost   llm.Cost
	}{
		{"anthropic", "claude-sonnet-4-5",
			llmtest.Usage{Input: 1200, Output: 340, CacheRead: 50000, CacheWrite: 2000, Reasoning: 120},
			llm.Usage{Input: 1200, Output: 340, CacheRead: 50000, CacheWrite: 2000, Reasoning: 120},
			llm.Cost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		{"responses", "gpt-5",
			llmtest.Usage{Input: 51200, Output: 340, CacheRead: 50000, Reasoning: 120},
			llm.Usage{Input: 1200, Output: 340, CacheRead: 50000, Reasoning: 120},
			llm.Cost{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"chat", "qwen3:8b",
			llmtest.Usage{Input: 51200, Output: 340, CacheRead: 50000, Reasoning: 120},
			llm.Usage{Input: 1200, Output: 340, CacheRead: 50000, Reasoning: 120},
			llm.Cost{Input: 0.2, Output: 0.8, CacheRead: 0.05}},
	}
	for _, tc := range cases {
		t.Run(tc.api, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ok", Usage: &tc.script}}})
			var s provider.Settings
			for _, a := range apis {
				if a.name == tc.api {
					s = a.settings(srv)
				}
			}
			if tc.api == "chat" {
				// Local models have no catalog prices; the config gives them.
				s.Models = map[string]llm.ModelOverride{"qwen3:8b": {Cost: &tc.cost}}
			}
			c := newClient(t, s, fastRetry)
			req := ask("hi")
			req.Model = tc.model
			events, err := drain(c.Stream(ctxT(t), req))
			if err != nil {
				t.Fatal(err)
			}
			u := ofKind(events, llm.EventUsage)[0]
			if u.Usage != tc.want {
				t.Errorf("usage = %+v, want %+v", u.Usage, tc.want)
			}
			want := (float64(tc.want.Input)*tc.cost.Input + float64(tc.want.Output)*tc.cost.Output +
				float64(tc.want.CacheRead)*tc.cost.CacheRead + float64(tc.want.CacheWrite)*tc.cost.CacheWrite) / 1e6
			if math.Abs(u.Cost-want) > 1e-9 || u.Cost == 0 {
				t.Errorf("cost = %v, want %v", u.Cost, want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("not JSON: %s", a)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Errorf("not JSON: %s", b)
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestConcurrentStreams(t *testing.T) {
	// One client serves many conversations at once; each gets its answer.
	srv := llmtest.Start(t, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		return llmtest.Step{Text: "answer to " + c.Conversation, Chunks: 5}
	}})
	for _, api := range apis {
		c := newClient(t, api.settings(srv), fastRetry)
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				q := api.name + " question " + string(rune('a'+i))
				r, err := llm.Collect(c.Stream(ctxT(t), ask(q)))
				if err == nil && r.Text() != "answer to "+q {
					err = fmt.Errorf("%q got %q", q, r.Text())
				}
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	}
}
