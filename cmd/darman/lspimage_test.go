package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestLSPImageLive drives two real darman lsp processes on one data
// directory, two editors on one project: the first one's turn sends the
// prompt's image live, as a user_message_chunk linking to the stored image
// (no bytes), the same update the second one's darman.session.load
// replays; the second reads the image's bytes from the link. A prompt of
// an image alone is the image without an empty text, live and replayed.
func TestLSPImageLive(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "A wide picture."}, {Text: "The same again."}}})
	pic := llmtest.PNG(40, 10)
	image := map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pic), "name": "shot.png"}

	_, first, _, firstErr := startLSP(t, e, "--stdio")
	first.initialize(e.workspace, nil)
	var tr struct{ SessionID, TurnID string }
	if err := first.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
		"arguments": []any{map[string]any{"prompt": "what is this?", "images": []any{image}}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, firstErr)
	}
	first.await("the first turn's end", isIdle)
	live := userChunks(t, first, 0)
	if len(live) != 2 || live[0]["content"].(map[string]any)["text"] != "what is this?" {
		t.Fatalf("the live turn's user message: %v", live)
	}
	link := live[1]["content"].(map[string]any)
	uri, _ := link["uri"].(string)
	if link["type"] != "resource_link" || !strings.HasPrefix(uri, "darman-image:"+tr.SessionID+"/") || link["name"] != "shot.png" ||
		link["mimeType"] != "image/png" || link["size"] != float64(len(pic)) || link["text"] != "[image shot.png, 40×10]" {
		t.Errorf("the live image: %v", link)
	}
	if b, _ := json.Marshal(link); len(b) > 400 {
		t.Errorf("the live update ships the image: %d bytes", len(b))
	}

	_, second, _, secondErr := startLSP(t, e, "--stdio")
	second.initialize(e.workspace, nil)
	if got := loadedUserChunks(t, second, tr.SessionID); !reflect.DeepEqual(got, live) {
		t.Errorf("the second editor's darman.session.load replays\n  %v\nthe first editor saw live\n  %v\nstderr: %s", got, live, secondErr)
	}
	var got struct{ MimeType, Data string }
	if err := second.Call("workspace/executeCommand", map[string]any{"command": "darman.session.image", "arguments": []any{map[string]any{"uri": uri}}}, &got); err != nil {
		t.Fatalf("darman.session.image: %v", err)
	}
	if data, _ := base64.StdEncoding.DecodeString(got.Data); !bytes.Equal(data, pic) || got.MimeType != "image/png" {
		t.Errorf("darman.session.image: %s, %d bytes of base64; want the %d-byte PNG sent", got.MimeType, len(got.Data), len(pic))
	}

	// The image alone.
	from := first.Count()
	if err := first.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
		"arguments": []any{map[string]any{"sessionId": tr.SessionID, "prompt": "", "images": []any{image}}}}, nil); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, firstErr)
	}
	first.Await(from, "the second turn's end", isIdle)
	alone := userChunks(t, first, from)
	if len(alone) != 1 || alone[0]["content"].(map[string]any)["uri"] != uri {
		t.Errorf("the live user message of an image alone: %v", alone)
	}
	if got := loadedUserChunks(t, second, tr.SessionID); !reflect.DeepEqual(got, append(live, alone...)) {
		t.Errorf("replayed\n  %v\nwant what was seen live\n  %v", got, append(live, alone...))
	}
}

// userChunks are the user_message_chunk updates c was sent from its
// message from on.
func userChunks(t *testing.T, c *lspClient, from int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, n := range c.Since(from) {
		var p struct{ Update map[string]any }
		if n.Method == "darman/sessionUpdate" && json.Unmarshal(n.Params, &p) == nil && p.Update["sessionUpdate"] == "user_message_chunk" {
			out = append(out, p.Update)
		}
	}
	return out
}

// loadedUserChunks are the user_message_chunk updates of darman.session.load.
func loadedUserChunks(t *testing.T, c *lspClient, session string) []map[string]any {
	t.Helper()
	var l struct{ Updates []map[string]any }
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.session.load", "arguments": []any{map[string]any{"sessionId": session}}}, &l); err != nil {
		t.Fatalf("darman.session.load: %v", err)
	}
	var out []map[string]any
	for _, u := range l.Updates {
		if u["sessionUpdate"] == "user_message_chunk" {
			out = append(out, u)
		}
	}
	return out
}
