package lsp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// darman.prompt's images reach the model; darman.session.load shows each
// as a link without its bytes, and darman.session.image reads them.
func TestPromptImageOverLSP(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "A small picture."}}}, optIns: map[string]bool{"sessionUpdates": true}})
	pic := llmtest.PNG(30, 20)
	var tr turn
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": "what is this?", "images": []map[string]any{
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pic), "name": "pasted.png"},
	}}, &tr)
	e.client.Await(0, "the end", isState("idle"))
	calls := e.model.ModelCalls()
	if len(calls) != 1 || len(calls[0].Images) != 1 || !bytes.Equal(calls[0].Images[0].Data, pic) || calls[0].Images[0].Width != 30 {
		t.Fatalf("the model's request carried: %+v", calls)
	}

	var l struct {
		Updates []struct {
			SessionUpdate string          `json:"sessionUpdate"`
			Content       json.RawMessage `json:"content"`
		} `json:"updates"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, &l)
	var link struct {
		Type, URI, Name, MimeType, Text string
		Size                            int
	}
	for _, u := range l.Updates {
		if u.SessionUpdate == "user_message_chunk" && strings.Contains(string(u.Content), "resource_link") {
			json.Unmarshal(u.Content, &link)
			if len(u.Content) > 400 {
				t.Errorf("the load ships the image: %d bytes", len(u.Content))
			}
		}
	}
	if !strings.HasPrefix(link.URI, "darman-image:"+tr.SessionID+"/") || link.Name != "pasted.png" || link.MimeType != "image/png" ||
		link.Size != len(pic) || !strings.Contains(link.Text, "30×20") {
		t.Fatalf("the image in the history: %+v", link)
	}
	var got struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
		Width    int    `json:"width"`
	}
	e.client.mustCommand("darman.session.image", map[string]any{"uri": link.URI}, &got)
	if data, _ := base64.StdEncoding.DecodeString(got.Data); !bytes.Equal(data, pic) || got.MimeType != "image/png" || got.Width != 30 {
		t.Errorf("darman.session.image: %s %d bytes", got.MimeType, len(got.Data))
	}
}

// An image that is not one is refused with the reason, and no turn runs.
func TestPromptBadImageOverLSP(t *testing.T) {
	e := start(t, options{script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}}})
	for _, img := range []map[string]any{
		{"mimeType": "image/png", "data": base64.StdEncoding.EncodeToString([]byte("plain text"))},
		{"mimeType": "image/png", "data": "%%% not base64"},
		{"type": "audio", "data": ""},
	} {
		err := e.client.command("darman.prompt", map[string]any{"prompt": "look", "images": []any{img}}, nil)
		if err == nil || !strings.Contains(err.Error(), "images[0]") {
			t.Errorf("%v: err = %v", img, err)
		}
	}
	if n := len(e.model.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}
