package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestACPImageRoundTrip drives the real darman acp: initialize says the
// configured model takes images, an image block reaches the model's
// request, the turn sends no user_message_chunk of it (the client shows
// the prompt it sent; one sent too would show it twice), and a second
// darman acp loading the session replays it as an image block holding
// the same bytes, after the prompt's text.
func TestACPImageRoundTrip(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "A wide picture."}}})
	pic := llmtest.PNG(40, 10)
	none := func(method string, _ json.RawMessage) (any, error) {
		return nil, fmt.Errorf("this client has no %s", method)
	}

	c := startACP(t, e, none)
	var init struct {
		AgentCapabilities struct {
			PromptCapabilities map[string]bool `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
	}
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, &init)
	if !init.AgentCapabilities.PromptCapabilities["image"] {
		t.Errorf("promptCapabilities %v: claude-sonnet-4-5 takes images", init.AgentCapabilities.PromptCapabilities)
	}
	id := c.newSession(e.workspace)
	var res struct {
		StopReason string `json:"stopReason"`
	}
	c.mustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "what is this?"},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pic)},
	}}, &res)
	calls := srv.ModelCalls()
	if res.StopReason != "end_turn" || len(calls) != 1 || len(calls[0].Images) != 1 || !bytes.Equal(calls[0].Images[0].Data, pic) {
		t.Fatalf("stop %q; the model's request carried %+v\nstderr: %s", res.StopReason, calls, c.stderr)
	}

	if echoed := c.updates("user_message_chunk"); len(echoed) != 0 {
		t.Errorf("the prompting client was sent its own prompt back: %v", echoed)
	}

	d := startACP(t, e, none)
	d.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	d.mustCall("session/load", map[string]any{"sessionId": id, "cwd": e.workspace, "mcpServers": []any{}}, nil)
	users := d.updates("user_message_chunk")
	if len(users) != 2 {
		t.Fatalf("replayed user messages: %v", users)
	}
	var text, image struct {
		Content struct {
			Type, Text, MimeType, Data string
		} `json:"content"`
	}
	json.Unmarshal([]byte(users[0]), &text)
	json.Unmarshal([]byte(users[1]), &image)
	got, err := base64.StdEncoding.DecodeString(image.Content.Data)
	if text.Content.Type != "text" || text.Content.Text != "what is this?" || image.Content.Type != "image" || image.Content.MimeType != "image/png" ||
		err != nil || !bytes.Equal(got, pic) {
		t.Errorf("replayed %s then an image of %d bytes (%s %s, err %v); want the prompt's text and its %d-byte PNG", users[0], len(got), image.Content.Type, image.Content.MimeType, err, len(pic))
	}
}
