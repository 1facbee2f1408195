package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// darman acp asks once per folder, at its first session/new, through
// session/request_permission with the folder's summary; "reject always"
// leaves it untrusted (its allow rule does not apply) and is recorded;
// each session is told in one line, and the next one is not asked again.
func TestACPAsksTrustOncePerFolder(t *testing.T) {
	e := newEnv(t)
	e.distrust()
	e.userProvider(llmtest.Start(t, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if c.Step == 0 && strings.Contains(string(c.Body), "write rule.txt") {
			return llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo by-rule > rule.txt","description":"write"}`)}}
		}
		return llmtest.Step{Text: "done"}
	}}))
	e.write("darman.json", `{"permission": {"bash": "allow", "edit": "allow"}}`)
	var trustAsked atomic.Int32
	c := startACP(t, e, func(method string, params json.RawMessage) (any, error) {
		if method == "session/request_permission" {
			if strings.Contains(string(params), "configures what only a folder you trust may") {
				trustAsked.Add(1)
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_always"}}, nil
			}
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil
		}
		return nil, fmt.Errorf("no %s", method)
	})
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	id := c.newSession(e.workspace)
	c.prompt(id, "write rule.txt")
	if exists(filepath.Join(e.workspace, "rule.txt")) {
		t.Fatal("the untrusted folder's allow rule applied")
	}
	id2 := c.newSession(e.workspace)
	c.prompt(id2, "again")
	if n := trustAsked.Load(); n != 1 {
		t.Errorf("the trust question was asked %d times, want once", n)
	}
	if shown := strings.Join(c.updates("agent_message_chunk"), "\n"); strings.Count(shown, "this folder is not trusted") != 2 {
		t.Errorf("want the one-line notice in each session:\n%s", shown)
	}
	if b, _ := os.ReadFile(e.trustFile()); !strings.Contains(string(b), `"answer": "never"`) {
		t.Errorf("never was not recorded: %s", b)
	}
}
