package lsp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/darman-dev/darman/server/rpc/rpctest"
)

var updateGoldens = flag.Bool("update", false, "rewrite the wire transcripts in testdata/wire from this run")

// wire records the LSP frames crossing the client's end of the pipe, in
// the order the client wrote and read them, split into the steps of a
// scenario (rpctest.Recorder). It is what the wire transcripts
// (testdata/wire/*.txtar) are made of.
type wire struct{ *rpctest.Recorder }

// frame is one message on the wire, or a step's beginning (Step set).
type frame = rpctest.Frame

func newWire(c net.Conn) *wire { return &wire{rpctest.NewRecorder(c, rpctest.LSP, "initialize")} }

// message is a JSON-RPC message as the transcript reads it.
type message struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	Result json.RawMessage  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// transcript writes the recorded frames as a readable archive, one file
// per step. Within a step, the client's messages come first, in the order
// sent, each request followed by its answer; then the server's own
// messages, each request followed by the client's answer. The server's
// messages are grouped by method, in the order they came within a method:
// messages from different goroutines (a session's updates, a permission
// question, progress) have no order between them that a client can rely
// on, and the transcript must not change from run to run.
//
// Also for that: runs of one answer's text chunks are merged (the server
// merges them too when the client reads slowly), and two kinds of
// messages are left out: progress reports (they come from the relay and
// from the permission asker, and the server merges those the client is
// slow to read, so their number and order change; TestProgressAndItsCancel
// and the permission tests check them) and the line darman logs every
// second while it waits for the client.
func (w *wire) transcript(comment string, n *normalizer) []byte {
	frames := w.Frames()

	ar := &txtar.Archive{Comment: []byte(strings.TrimSpace(comment) + "\n")}
	for len(frames) > 0 {
		name := frames[0].Step
		frames = frames[1:]
		i := slices.IndexFunc(frames, func(f frame) bool { return f.Step != "" })
		if i < 0 {
			i = len(frames)
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(renderStep(frames[:i], n))})
		frames = frames[i:]
	}
	return txtar.Format(ar)
}

func renderStep(frames []frame, n *normalizer) string {
	type parsed struct {
		frame
		msg message
		ok  bool
	}
	var msgs []parsed
	for _, f := range frames {
		p := parsed{frame: f}
		p.ok = !f.Raw && json.Unmarshal(f.Body, &p.msg) == nil
		msgs = append(msgs, p)
	}
	idOf := func(m message) string {
		if m.ID == nil {
			return ""
		}
		return string(*m.ID)
	}
	// answers: the responses, by the side that asked and the id; those
	// with a null id answer frames that could not be read.
	answers := map[string]message{}
	var unread []message
	for _, p := range msgs {
		switch {
		case !p.ok || p.msg.Method != "" || (p.msg.Result == nil && p.msg.Error == nil):
		case p.msg.ID == nil || string(*p.msg.ID) == "null":
			unread = append(unread, p.msg)
		default:
			answers[fmt.Sprint(!p.FromClient, idOf(p.msg))] = p.msg
		}
	}
	answer := func(asker bool, m message) string {
		a, ok := answers[fmt.Sprint(asker, idOf(m))]
		if !ok {
			return "no answer in this step"
		}
		delete(answers, fmt.Sprint(asker, idOf(m)))
		return describeAnswer(a)
	}

	// The client's messages, and the answers to its requests where they
	// came among them.
	var b strings.Builder
	asked := map[string]string{} // id → method of the client's requests
	for _, p := range msgs {
		switch {
		case !p.FromClient && p.ok && p.msg.Method == "" && asked[idOf(p.msg)] != "":
			fmt.Fprintf(&b, "  ← %s: %s\n", asked[idOf(p.msg)], answer(true, p.msg))
			delete(asked, idOf(p.msg))
		case !p.FromClient:
		case p.Raw || !p.ok:
			fmt.Fprintf(&b, "→ raw %q\n", p.Body)
		case p.msg.Method != "" && p.msg.ID != nil:
			fmt.Fprintf(&b, "→ request %s %s\n", p.msg.Method, compact(p.msg.Params))
			asked[idOf(p.msg)] = p.msg.Method
		case p.msg.Method != "":
			fmt.Fprintf(&b, "→ notify %s %s\n", p.msg.Method, compact(p.msg.Params))
		}
	}
	for _, method := range asked {
		fmt.Fprintf(&b, "  (%s has no answer in this step)\n", method)
	}
	// The server's messages, grouped by method.
	var server []message
	for _, p := range msgs {
		if !p.FromClient && p.ok && p.msg.Method != "" {
			if p.msg.Method == "window/logMessage" && strings.Contains(string(p.msg.Params), "darman is waiting for the editor") {
				continue
			}
			if p.msg.Method == "$/progress" && strings.Contains(string(p.msg.Params), `"kind":"report"`) {
				continue
			}
			server = append(server, p.msg)
		}
	}
	slices.SortStableFunc(server, func(a, b message) int { return methodGroup(a.Method) - methodGroup(b.Method) })
	server = mergeRuns(server)
	for _, m := range server {
		if m.ID != nil {
			fmt.Fprintf(&b, "← request %s %s\n", m.Method, compact(m.Params))
			fmt.Fprintf(&b, "  → %s\n", answer(false, m))
			continue
		}
		fmt.Fprintf(&b, "← notify %s %s\n", m.Method, compact(m.Params))
	}
	// Answers to nothing sent in this step: the server's replies to frames
	// it could not read (null id).
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range answers {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "← answer to id %s: %s\n", strings.TrimPrefix(strings.TrimPrefix(k, "true"), "false"), describeAnswer(answers[k]))
	}
	for _, a := range unread {
		fmt.Fprintf(&b, "← answer to id null: %s\n", describeAnswer(a))
	}
	return n.apply(b.String())
}

// methodGroup sorts the server's messages of a step: each group is sent
// by one goroutine at a time and keeps its order; between groups there is
// none, so the transcript puts them in this order.
func methodGroup(method string) int {
	switch method {
	case "window/workDoneProgress/create", "$/progress":
		return 0
	case "darman/sessionUpdate", "darman/openDiff":
		return 1
	case "darman/requestPermission", "window/showMessageRequest", "window/showMessage":
		return 2
	case "workspace/applyEdit", "window/showDocument":
		return 3
	case "window/logMessage":
		return 4
	}
	return 5
}

func describeAnswer(a message) string {
	if a.Error != nil {
		return fmt.Sprintf("error %d %q", a.Error.Code, a.Error.Message)
	}
	return "result " + compact(a.Result)
}

// mergeRuns merges runs of text chunks of one kind and turn into one; a
// chunk of other content (a user's image) stands alone.
func mergeRuns(ms []message) []message {
	type chunk struct {
		SessionID string `json:"sessionId"`
		TurnID    string `json:"turnId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	isChunk := func(m message) (chunk, bool) {
		var c chunk
		if m.Method != "darman/sessionUpdate" || json.Unmarshal(m.Params, &c) != nil {
			return c, false
		}
		switch c.Update.SessionUpdate {
		case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
			return c, c.Update.Content.Type == "text"
		}
		return c, false
	}
	var out []message
	for _, m := range ms {
		if len(out) > 0 {
			last := &out[len(out)-1]
			if c, ok := isChunk(m); ok {
				if p, ok := isChunk(*last); ok && p.TurnID == c.TurnID && p.Update.SessionUpdate == c.Update.SessionUpdate {
					p.Update.Content.Text += c.Update.Content.Text
					last.Params, _ = json.Marshal(p)
					continue
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// compact is JSON on one line with its keys sorted.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return strconv.Quote(string(raw))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// normalizer replaces what changes from run to run: ids by their order of
// appearance, times, and the test's directories and ports.
type normalizer struct {
	fixed []string // old, new pairs
	ids   map[string]string
	count map[string]int
}

var (
	idPattern   = regexp.MustCompile(`\b(ses|turn|msg|prt|toolu|call)_[0-9A-Za-z]+`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	portPattern = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	pidPattern  = regexp.MustCompile(`"processId":\d+`)
	// Token counts and costs change with the tools' descriptions and the
	// system prompt, which are not the protocol.
	usagePattern = regexp.MustCompile(`"(inputTokens|outputTokens|cacheReadTokens|cacheWriteTokens|contextUsed|cost)":[0-9.e+-]+`)
)

func newNormalizer(e *env) *normalizer {
	return &normalizer{fixed: []string{fileURI(e.root), "file://$ROOT", e.root, "$ROOT", e.data, "$DATA"},
		ids: map[string]string{}, count: map[string]int{}}
}

func (n *normalizer) apply(s string) string {
	s = strings.NewReplacer(n.fixed...).Replace(s)
	s = timePattern.ReplaceAllString(s, "<time>")
	s = portPattern.ReplaceAllString(s, "127.0.0.1:<port>")
	s = pidPattern.ReplaceAllString(s, `"processId":<pid>`)
	s = usagePattern.ReplaceAllString(s, `"$1":<n>`)
	return idPattern.ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := n.ids[id]; ok {
			return r
		}
		kind, _, _ := strings.Cut(id, "_")
		n.count[kind]++
		r := fmt.Sprintf("<%s-%d>", kind, n.count[kind])
		n.ids[id] = r
		return r
	})
}

// checkTranscript compares the scenario's transcript with its golden file,
// testdata/wire/<name>.txtar, or rewrites the file with -update.
func (e *env) checkTranscript(t *testing.T, name, comment string) {
	t.Helper()
	got := e.wire.transcript(comment, newNormalizer(e))
	rpctest.Golden(t, filepath.Join("testdata", "wire", name+".txtar"), got, *updateGoldens)
}
