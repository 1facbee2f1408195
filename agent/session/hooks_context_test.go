package session_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// What PreToolUse and PostToolUse hooks say for the model reaches it with
// the call's result: a PostToolUse hook's decision "block" reason, and
// either hook's additionalContext, each marked as a hook's.
func TestToolHooksTalkToTheModel(t *testing.T) {
	h := withHooks(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "echo ran-it")}},
		{Text: "Noted."},
	}},
		hook.Hook{Event: hook.PreToolUse, Matcher: "Bash", Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"the CI runs on arm64 (ctx-4410)"}}'`},
		hook.Hook{Event: hook.PostToolUse, Matcher: "Bash", Command: `echo '{"decision":"block","reason":"the output must be checked in (ctx-4411)","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint passed (ctx-4412)"}}'`})
	h.run(t, "run it")
	calls := h.srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	result := calls[1].Get(`messages.#(role=="user")#.content.#(type=="tool_result")`).Raw
	for _, want := range []string{"ran-it", "ctx-4410", "ctx-4411", "ctx-4412", "[added by a PostToolUse hook]", "[added by a PreToolUse hook]"} {
		if !strings.Contains(result, want) {
			t.Errorf("the call's result the model reads lacks %q:\n%s", want, result)
		}
	}
}
