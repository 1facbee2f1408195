package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// routerTurn is a DeepSeek thinking-mode exchange as a generic
// OpenAI-compatible router (LiteLLM and the like) streams it, chunk for
// chunk in DeepSeek's documented shape: reasoning_content, then a tool
// call. DeepSeek answers 400 to the next request unless that
// reasoning_content comes back with the tool call.
func routerTurn(model string) []string {
	chunk := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-7f3a","object":"chat.completion.chunk","created":1764990000,"model":%q,"choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, model, delta, finish)
	}
	return []string{
		chunk(`{"role":"assistant","content":null,"reasoning_content":"The user wants the files; "}`, "null"),
		chunk(`{"reasoning_content":"ls lists them."}`, "null"),
		chunk(`{"tool_calls":[{"index":0,"id":"call_00_ls","type":"function","function":{"name":"bash","arguments":""}}]}`, "null"),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\",\"description\":\"list the files\"}"}}]}`, "null"),
		chunk(`{}`, `"tool_calls"`),
		`[DONE]`,
	}
}

// Through a server darman has no preset for, the model family's rule
// decides what goes back: DeepSeek's and GLM's reasoning returns with
// their tool-call turns, another family's does not, and a model's own
// reasoningReturn in the configuration still wins.
func TestReasoningThroughARouter(t *testing.T) {
	for _, c := range []struct {
		model, models string
		back          bool
	}{
		{model: "deepseek/deepseek-v3.2", back: true},
		{model: "z-ai/glm-4.6", back: true},
		{model: "meta-llama/llama-3.3-70b"},
		{model: "deepseek/deepseek-v3.2", models: `, "models": {"deepseek/deepseek-v3.2": {"reasoningReturn": {"field": "none"}}}`},
	} {
		t.Run(c.model+c.models, func(t *testing.T) {
			e := newEnv(t)
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Events: routerTurn(c.model)}, {Text: "Listed."}}})
			e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
				"model": "router/%s",
				"provider": {"router": {"type": "openai-compatible", "baseURL": %q, "apiKey": "sk-router-0123456789"%s}}
			}`, c.model, srv.URL+"/v1", c.models))
			if out, errs, code := e.run("run", "--allow", "bash:ls", "list the files"); code != 0 || !strings.Contains(out, "Listed.") {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			calls := srv.ModelCalls()
			if len(calls) != 2 {
				t.Fatalf("%d model calls", len(calls))
			}
			asked := calls[1].Get(`messages.#(role=="assistant")`)
			if !asked.Get("tool_calls.0.id").Exists() {
				t.Fatalf("the second request has no assistant tool call: %s", calls[1].Get("messages").Raw)
			}
			got := gjson.Get(asked.Raw, "reasoning_content").String()
			if c.back && got != "The user wants the files; ls lists them." || !c.back && got != "" {
				t.Errorf("reasoning_content sent back = %q (want it back: %v)", got, c.back)
			}
		})
	}
}
