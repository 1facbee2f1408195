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

// Trust granted through session/request_permission applies at once: the
// session that asked, and a second one opened before the answer, run
// their next prompt with the folder's configuration (its allow rule
// writes the file without a question), in the same darman acp, keeping
// their history.
func TestACPTrustAppliesToTheRunningAgent(t *testing.T) {
	e := newEnv(t)
	e.distrust()
	e.userProvider(llmtest.Start(t, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		for _, name := range []string{"first.txt", "second.txt"} {
			if c.Step == 0 && strings.Contains(string(c.Body), "write "+name) {
				return llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo by-rule > `+name+`","description":"write"}`)}}
			}
		}
		return llmtest.Step{Text: "done"}
	}}))
	e.write("darman.json", `{"permission": {"bash": "allow", "edit": "allow"}}`)
	grant := make(chan struct{})
	var otherQuestions atomic.Int32
	c := startACP(t, e, func(method string, params json.RawMessage) (any, error) {
		if method == "session/request_permission" {
			if strings.Contains(string(params), "configures what only a folder you trust may") {
				<-grant // the user answers after the second session opened
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}, nil
			}
			otherQuestions.Add(1)
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil
		}
		return nil, fmt.Errorf("no %s", method)
	})
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	id := c.newSession(e.workspace)
	id2 := c.newSession(e.workspace)
	close(grant)
	c.await("the trusted notice", func(n acpNote) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), "this folder is trusted")
	})
	for _, s := range []struct{ id, file string }{{id, "first.txt"}, {id2, "second.txt"}} {
		c.prompt(s.id, "write "+s.file)
		if !exists(filepath.Join(e.workspace, s.file)) {
			t.Errorf("session %s: the trusted folder's allow rule did not apply to %s (questions refused: %d)\nstderr: %s", s.id, s.file, otherQuestions.Load(), c.stderr)
		}
	}
	if n := otherQuestions.Load(); n != 0 {
		t.Errorf("%d permission questions after trust; the allow rule answers them", n)
	}
}
