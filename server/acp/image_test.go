package acp_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// initialize advertises images when the model new sessions get takes
// them; an image block then reaches the model's request.
func TestPromptImageBlock(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "seen"}}}, images: func() bool { return true }})
	var res struct {
		AgentCapabilities struct {
			PromptCapabilities map[string]bool `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
	}
	e.client.MustCall("initialize", map[string]any{"protocolVersion": 1}, &res)
	if !res.AgentCapabilities.PromptCapabilities["image"] {
		t.Errorf("promptCapabilities: %v", res.AgentCapabilities.PromptCapabilities)
	}
	id := e.newSession()
	pic := llmtest.PNG(24, 12)
	var out struct {
		StopReason string `json:"stopReason"`
	}
	e.client.MustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "what is it?"},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pic)},
	}}, &out)
	calls := e.model.ModelCalls()
	if out.StopReason != "end_turn" || len(calls) != 1 || len(calls[0].Images) != 1 || !bytes.Equal(calls[0].Images[0].Data, pic) ||
		calls[0].Images[0].Width != 24 {
		t.Fatalf("stop %q; the model's request carried %+v", out.StopReason, calls)
	}
}

// A text-only model: initialize says no images, and an image block is
// refused with the reason before the model is called.
func TestPromptImageRefusedForTextOnlyModel(t *testing.T) {
	no := false
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}},
		models: map[string]llm.ModelOverride{"claude-sonnet-4-5": {Images: &no}}})
	var res struct {
		AgentCapabilities struct {
			PromptCapabilities map[string]bool `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
	}
	e.client.MustCall("initialize", map[string]any{"protocolVersion": 1}, &res)
	if res.AgentCapabilities.PromptCapabilities["image"] {
		t.Error("a text-only darman advertised images")
	}
	id := e.newSession()
	err := e.client.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "look"},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(llmtest.PNG(4, 4))},
	}}, nil)
	if err == nil || !strings.Contains(err.Error(), "takes text only") {
		t.Errorf("err = %v", err)
	}
	if n := len(e.model.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}
