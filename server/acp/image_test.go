package acp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/store"
)

// initialize advertises images when the model new sessions get takes
// them; an image block then reaches the model's request, and the prompt
// is not sent back to the client that sent it (agent.EventUserMessage
// carries the stored images; ACP replays them on session/load only).
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
	if echoed := e.client.updates(0, "user_message_chunk"); len(echoed) != 0 {
		t.Errorf("the prompt was sent back to its client: %v", echoed)
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

// session/load, on a new connection, replays a prompt's images as the
// image blocks the client sent, with the same bytes, after the prompt's
// text and before the answer; an image whose blob is gone from the store
// is replayed as text that says so.
func TestLoadReplaysImages(t *testing.T) {
	script := llmtest.Script{Steps: []llmtest.Step{{Text: "Two pictures."}}}
	first := start(t, options{script: script, images: func() bool { return true }})
	id := first.newSession()
	wide, tall := llmtest.PNG(24, 12), llmtest.PNG(5, 9)
	var out struct {
		StopReason string `json:"stopReason"`
	}
	first.client.MustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{
		{"type": "text", "text": "compare these"},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(wide)},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(tall)},
	}}, &out)
	if out.StopReason != "end_turn" {
		t.Fatal(out.StopReason)
	}
	first.stop()

	second := start(t, options{script: script, root: first.root, data: first.data})
	second.client.MustCall("session/load", map[string]any{"sessionId": id, "cwd": first.root, "mcpServers": []any{}}, nil)
	user := second.client.updates(0, "user_message_chunk")
	if len(user) != 3 {
		t.Fatalf("replayed %d user_message_chunk updates, want the text and two images: %v", len(user), user)
	}
	if c, _ := user[0]["content"].(map[string]any); c["type"] != "text" || c["text"] != "compare these" {
		t.Errorf("first chunk: %v", user[0])
	}
	for i, want := range [][]byte{wide, tall} {
		c, _ := user[i+1]["content"].(map[string]any)
		got, err := base64.StdEncoding.DecodeString(fmt.Sprint(c["data"]))
		if c["type"] != "image" || c["mimeType"] != "image/png" || err != nil || !bytes.Equal(got, want) {
			t.Errorf("image %d replayed as %.200v (%d bytes, err %v); want the %d bytes sent", i, c, len(got), err, len(want))
		}
	}
	if got := second.client.text(0); got != "Two pictures." {
		t.Errorf("replayed answer %q", got)
	}
	second.stop()

	// A message whose image's bytes the store does not have (a damaged
	// store): the replay says so in text.
	st, err := store.Open(context.Background(), filepath.Join(first.data, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().UTC()
	msg := agent.Message{ID: agent.NewMessageID(), SessionID: agent.ID(id), Role: agent.RoleUser, Created: now, Completed: now}
	lost := &agent.File{Name: "gone.png", MIME: "image/png", Blob: store.BlobKey([]byte("never stored")), Size: 12, Width: 7, Height: 3}
	if err := st.PutMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: msg.ID, SessionID: msg.SessionID, Kind: agent.PartFile, File: lost}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	third := start(t, options{script: script, root: first.root, data: first.data})
	third.client.MustCall("session/load", map[string]any{"sessionId": id, "cwd": first.root, "mcpServers": []any{}}, nil)
	user = third.client.updates(0, "user_message_chunk")
	if len(user) != 4 || !strings.Contains(toJSON(user[3]), "[image gone.png, 7×3] (its bytes are no longer in darman's store)") {
		t.Errorf("replay of an image the store lost: %v", user[len(user)-1])
	}
}
