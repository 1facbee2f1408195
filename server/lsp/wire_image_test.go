package lsp_test

import (
	"encoding/base64"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/store"
)

// A prompt with an image, as a client that opted into session updates
// sees it: the live user message is its text and a resource_link to the
// stored image, as darman.session.load replays it; darman.session.image
// reads the bytes the link names.
func TestWirePromptImage(t *testing.T) {
	e := start(t, options{record: true, script: llmtest.Script{Steps: []llmtest.Step{{Text: "A tiny picture."}}},
		optIns: map[string]bool{"sessionUpdates": true}})
	pic := base64.StdEncoding.EncodeToString(llmtest.PNG(4, 2))
	e.wire.Step("a prompt with an image")
	var tr turn
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": "what is this?", "images": []map[string]any{
		{"type": "image", "mimeType": "image/png", "data": pic, "name": "tiny.png"},
	}}, &tr)
	e.client.Await(0, "the end", isState("idle"))
	e.wire.Step("the session loaded")
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": tr.SessionID}, nil)
	e.wire.Step("the image's bytes")
	e.client.mustCommand("darman.session.image", map[string]any{"uri": "darman-image:" + tr.SessionID + "/" + store.BlobKey(llmtest.PNG(4, 2))}, nil)
	e.checkTranscript(t, "prompt_image", `
A prompt with an image: the live user message is a user_message_chunk of
its text, then one per image whose content is a resource_link to the
stored image (darman-image:<session>/<sha-256>, no bytes), the updates
darman.session.load replays; darman.session.image answers the bytes.`)
}
