package acp_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/server/rpc/rpctest"
)

var updateGoldens = flag.Bool("update", false, "rewrite the wire transcripts in testdata/wire from this run")

// wire records the lines crossing the client's end of the pipe, in the
// order the client wrote and read them, split into the steps of a
// scenario (rpctest.Recorder): the wire transcripts (testdata/wire/*.txtar)
// are made of it.
type wire struct{ *rpctest.Recorder }

type wireLine = rpctest.Frame

func newWire(c net.Conn) *wire { return &wire{rpctest.NewRecorder(c, rpctest.ACP, "initialize")} }

// transcript renders the recorded lines, one archive file per step. In a
// step, the client's messages come first, in the order sent, each request
// followed by darman's answer; then darman's notifications in the order
// they came (runs of text chunks merged: darman merges them too for a slow
// client); then darman's requests in the order they came, each followed by
// the client's answer. darman's notifications and its requests come from
// different goroutines, so their order between them is not fixed (the
// order that matters, a question after the tool call it is about, is
// asserted by the tests that drive each case).
func (w *wire) transcript(comment string, norm func(string) string) []byte {
	lines := w.Frames()
	ar := &txtar.Archive{Comment: []byte(strings.TrimSpace(comment) + "\n")}
	for len(lines) > 0 {
		name := lines[0].Step
		lines = lines[1:]
		end := len(lines)
		for i, l := range lines {
			if l.Step != "" {
				end = i
				break
			}
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(renderLines(lines[:end], norm))})
		lines = lines[end:]
	}
	return txtar.Format(ar)
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func renderLines(lines []wireLine, norm func(string) string) string {
	type msg struct {
		wireMessage
		fromClient bool
	}
	var msgs []msg
	answers := map[string]wireMessage{} // by the side that asked and id
	for _, l := range lines {
		var m msg
		m.fromClient = l.FromClient
		json.Unmarshal(l.Body, &m.wireMessage)
		if m.Method == "" {
			answers[fmt.Sprint(!m.fromClient, string(m.ID))] = m.wireMessage
			continue
		}
		msgs = append(msgs, m)
	}
	answer := func(asker bool, id json.RawMessage) string {
		a, ok := answers[fmt.Sprint(asker, string(id))]
		if !ok {
			return "(no answer in this step)"
		}
		if a.Error != nil {
			return "error " + canonical(a.Error, norm)
		}
		return canonical(a.Result, norm)
	}
	var client, notes, requests strings.Builder
	lastChunk := -1 // index in chunks of the run being merged
	var noteLines []string
	for _, m := range msgs {
		switch {
		case m.fromClient:
			fmt.Fprintf(&client, "→ %s %s\n", m.Method, canonical(m.Params, norm))
			if m.ID != nil {
				fmt.Fprintf(&client, "  ← %s\n", answer(true, m.ID))
			}
		case m.ID == nil:
			if merged, ok := mergeChunk(noteLines, lastChunk, m.Params); ok {
				noteLines[lastChunk] = merged
				continue
			}
			noteLines = append(noteLines, string(m.Params))
			lastChunk = -1
			if isChunk(m.Params) {
				lastChunk = len(noteLines) - 1
			}
		default:
			fmt.Fprintf(&requests, "⇠ %s %s\n", m.Method, canonical(m.Params, norm))
			fmt.Fprintf(&requests, "  → %s\n", answer(false, m.ID))
		}
	}
	for _, n := range noteLines {
		fmt.Fprintf(&notes, "⇠ session/update %s\n", canonical(json.RawMessage(n), norm))
	}
	return client.String() + notes.String() + requests.String()
}

// isChunk reports a session/update of answer or thought text.
func isChunk(params json.RawMessage) bool {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
	}
	json.Unmarshal(params, &p)
	return p.Update.SessionUpdate == "agent_message_chunk" || p.Update.SessionUpdate == "agent_thought_chunk"
}

// mergeChunk appends a chunk's text to the run of the same kind at last.
func mergeChunk(lines []string, last int, params json.RawMessage) (string, bool) {
	if last < 0 || !isChunk(params) {
		return "", false
	}
	var prev, next map[string]any
	json.Unmarshal([]byte(lines[last]), &prev)
	json.Unmarshal(params, &next)
	pu, nu := prev["update"].(map[string]any), next["update"].(map[string]any)
	if pu["sessionUpdate"] != nu["sessionUpdate"] || prev["sessionId"] != next["sessionId"] {
		return "", false
	}
	pc, nc := pu["content"].(map[string]any), nu["content"].(map[string]any)
	pc["text"] = fmt.Sprint(pc["text"]) + fmt.Sprint(nc["text"])
	b, _ := json.Marshal(prev)
	return string(b), true
}

// canonical re-encodes JSON with sorted keys, then normalizes what changes
// from run to run.
func canonical(raw json.RawMessage, norm func(string) string) string {
	if len(raw) == 0 {
		return "null"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return norm(string(raw))
	}
	b, _ := json.Marshal(v)
	return norm(string(b))
}

var (
	sessionIDs = regexp.MustCompile(`ses_[0-9A-Z]{26}`)
	counts     = regexp.MustCompile(`"(used|amount)":[0-9.e+-]+`)
	times      = regexp.MustCompile(`"updatedAt":"[^"]*"`)
)

// normalizer replaces the workspace root, session ids in order of
// appearance, token counts and costs (they follow the request's size,
// which the temporary paths change) and times.
func normalizer(root string) func(string) string {
	ids := map[string]string{}
	return func(s string) string {
		s = strings.ReplaceAll(s, root, "$ROOT")
		s = sessionIDs.ReplaceAllStringFunc(s, func(id string) string {
			if _, ok := ids[id]; !ok {
				ids[id] = fmt.Sprintf("ses_%d", len(ids)+1)
			}
			return ids[id]
		})
		s = counts.ReplaceAllString(s, `"$1":N`)
		return times.ReplaceAllString(s, `"updatedAt":"T"`)
	}
}

// golden compares a transcript with testdata/wire/name.txtar, or writes it
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	rpctest.Golden(t, filepath.Join("testdata", "wire", name+".txtar"), got, *updateGoldens)
}

// TestWireTurn is the transcript of a session's life: the handshake, a new
// session, a turn whose write is asked about and goes through the client,
// the mode and model options, and the session loaded again.
func TestWireTurn(t *testing.T) {
	var w *wire
	e := start(t, options{
		caps:  fsCaps,
		files: map[string]string{"notes.txt": "on disk\n"},
		wrap:  func(c net.Conn) net.Conn { w = newWire(c); return w },
		script: llmtest.Script{Steps: []llmtest.Step{
			{Reasoning: "A new file.", Text: "Writing it.", ToolCalls: []llmtest.ToolCall{{ID: "toolu_write", Name: "write", Arguments: json.RawMessage(`{"path":"out.txt","content":"hello\n"}`)}}},
			{Text: "Done: out.txt says hello."},
		}},
		answer: func(method string, params json.RawMessage) (any, error) {
			switch method {
			case "session/request_permission":
				return allowOnce(params), nil
			case "fs/write_text_file":
				return map[string]any{}, nil
			}
			return defaultAnswer(method, params)
		},
	})
	w.Step("session/new")
	id := e.newSession()
	// The session's commands (darman's built-in ones) come after the
	// answer.
	e.client.Await(0, "available_commands_update", func(n note) bool {
		return strings.Contains(string(n.Params), "available_commands_update")
	})
	w.Step("session/prompt")
	e.prompt(id, "write hello to out.txt")
	w.Step("options")
	var r json.RawMessage
	e.client.MustCall("session/set_mode", map[string]any{"sessionId": id, "modeId": "accept_edits"}, &r)
	e.client.MustCall("session/set_config_option", map[string]any{"sessionId": id, "configId": "model", "value": "anthropic/claude-haiku-4-5"}, &r)
	e.client.Await(0, "the config_option_update", func(n note) bool {
		return strings.Contains(string(n.Params), "config_option_update")
	})
	w.Step("session/load")
	from := e.client.Count()
	e.client.MustCall("session/load", map[string]any{"sessionId": id, "cwd": e.root, "mcpServers": []any{}}, &r)
	e.client.MustCall("session/list", map[string]any{"cwd": e.root}, &r)
	e.client.Await(from, "available_commands_update", func(n note) bool {
		return strings.Contains(string(n.Params), "available_commands_update")
	})
	golden(t, "turn", w.transcript(`
A session's life over the wire, as a client offering fs/* sees it: the
handshake, session/new, a turn whose write is asked about (allowed once) and
sent to the client with fs/write_text_file, the mode and model options, and
session/load replaying the turn before its answer. See wire_test.go for how
the lines are ordered and normalized.`, normalizer(e.root)))
}
