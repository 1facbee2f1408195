package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/server/lsp"
)

// BenchmarkPromptToFirstChunk is darman.prompt to the first
// agent_message_chunk notification, with the scripted model answering at
// once, through the real SDK, store and pipe.
func BenchmarkPromptToFirstChunk(b *testing.B) {
	e := start(b, options{
		script: llmtest.Script{Steps: []llmtest.Step{{Text: "first chunk and more"}}},
		optIns: map[string]bool{"sessionUpdates": true},
	})
	for b.Loop() {
		from := e.client.Count()
		var tr turn
		if err := e.client.command("darman.prompt", map[string]any{"prompt": "go"}, &tr); err != nil {
			b.Fatal(err)
		}
		e.client.Await(from, "the first chunk", func(n note) bool {
			return n.Method == "darman/sessionUpdate" && strings.Contains(string(n.Params), `"agent_message_chunk"`)
		})
		b.StopTimer()
		e.client.Await(from, "the end", func(n note) bool {
			return isState("idle")(n) && strings.Contains(string(n.Params), tr.TurnID)
		})
		b.StartTimer()
	}
}

// partsInMemory is the session service's store for BenchmarkRelay: the
// real store, which gets a part when it begins and when it ends but not
// every delta between, so the benchmark measures the turn's events on
// their way to the client and not the store's writes (agent/store's
// BenchmarkPutPart measures those).
type partsInMemory struct {
	*store.Store
	mu   sync.Mutex
	seen map[agent.ID]bool
}

func (m *partsInMemory) PutPart(ctx context.Context, p agent.Part) error {
	m.mu.Lock()
	first := !m.seen[p.ID]
	m.seen[p.ID] = true
	m.mu.Unlock()
	if first || !p.Ended.IsZero() {
		return m.Store.PutPart(ctx, p)
	}
	return nil
}

// BenchmarkRelay streams many chunks per turn, from the scripted model
// through the session service, to a client that opted into session
// updates and reports chunks/s. Deltas the client cannot take as fast as
// they come are merged (never other updates), so the queue, and memory,
// stay bounded: the benchmark reports the notifications actually sent and
// the heap in use after the turn.
//
// It runs with 20,000 chunks and with 100,000: the cost per chunk must not
// grow with the answer.
func BenchmarkRelay(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkRelay(b, n) })
	}
}

func benchmarkRelay(b *testing.B, chunks int) {
	st, err := store.Open(context.Background(), b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	pieces := make([]string, chunks)
	for i := range pieces {
		pieces[i] = fmt.Sprintf("chunk %d ", i)
	}
	model := llmtest.Start(b, llmtest.Script{Steps: []llmtest.Step{{TextChunks: pieces}}})
	provider, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: model.URL, APIKey: "sk-ant-test-key-0000"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := lsp.New(lsp.Options{Start: func(_ context.Context, setup lsp.Setup) (*lsp.Agent, error) {
		svc, err := session.New(session.Options{Store: &partsInMemory{Store: st, seen: map[agent.ID]bool{}}, Workspace: setup.Workspace,
			Models: func(string) (llm.Provider, string, error) { return provider, "claude-sonnet-4-5", nil }})
		if err != nil {
			return nil, err
		}
		return &lsp.Agent{Sessions: svc, Store: st, Runtime: testRuntime{model: fixedModel("anthropic/claude-sonnet-4-5"), close: svc.Close}}, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, serverEnd)
	var notes, text atomic.Int64
	ended := make(chan struct{}, 1)
	h := jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		if req.Method == "darman/sessionUpdate" {
			notes.Add(1)
			var p struct {
				Update struct {
					SessionUpdate string
					State         string
					Content       struct{ Text string }
				}
			}
			json.Unmarshal(*req.Params, &p)
			text.Add(int64(strings.Count(p.Update.Content.Text, "chunk ")))
			if p.Update.SessionUpdate == "state_update" && p.Update.State == "idle" {
				ended <- struct{}{}
			}
		}
		return nil, nil
	})
	c := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(clientEnd, jsonrpc2.VSCodeObjectCodec{}), h)
	call := func(method string, params, result any) {
		if err := c.Call(ctx, method, params, result); err != nil {
			b.Fatal(err)
		}
	}
	call("initialize", map[string]any{"rootUri": fileURI(b.TempDir()), "capabilities": map[string]any{
		"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true}}}}, nil)
	c.Notify(ctx, "initialized", map[string]any{})
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		notes.Store(0)
		text.Store(0)
		// A new session each time: the script's first step is its answer.
		call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": "stream"}}}, nil)
		<-ended
		if text.Load() != int64(chunks) {
			b.Fatalf("the client got %d chunks of %d", text.Load(), chunks)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(chunks)*float64(b.N)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(float64(notes.Load()), "notifications/turn")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap")
}

// rawClient writes pre-encoded frames and reads frames without decoding
// them, so that a benchmark measures the server and not a client's JSON.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
}

func (c *rawClient) send(b testing.TB, msg string) {
	if _, err := fmt.Fprintf(c.conn, "Content-Length: %d\r\n\r\n%s", len(msg), msg); err != nil {
		b.Fatal(err)
	}
}

// until reads frames up to the response with id.
func (c *rawClient) until(b testing.TB, id int) []byte {
	want := fmt.Sprintf(`"id":%d,`, id)
	for {
		var n int
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
			fmt.Sscanf(line, "Content-Length: %d", &n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.r, body); err != nil {
			b.Fatal(err)
		}
		if head := string(body[:min(len(body), 40)]); strings.Contains(head, want) && !strings.Contains(head, `"method"`) {
			return body
		}
	}
}

// BenchmarkCodeAction asks for the code actions on a 10,000-line document
// with 100 diagnostics in range, and reports the median and 99th
// percentile of the time from writing the request to reading the answer.
// The client neither encodes nor decodes JSON in the loop, so the figures
// are the server's (and the pipe's).
func BenchmarkCodeAction(b *testing.B) {
	e := start(b, options{})
	var doc strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&doc, "\tvalue%d := compute(%d) // some code on this line\n", i, i)
	}
	e.open("big.go", doc.String())
	var diags []any
	for i := range 100 {
		diags = append(diags, map[string]any{"range": rng(5000+i, 1, 5000+i, 8), "severity": 1, "source": "compiler", "code": i, "message": "declared and not used"})
	}
	params, _ := json.Marshal(codeActionParams(e.uri("big.go"), 5000, 0, 5100, 0, diags...))
	// Check the answer once through the real client.
	var actions []codeAction
	e.client.MustCall("textDocument/codeAction", json.RawMessage(params), &actions)
	if len(actions) < 104 {
		b.Fatalf("%d actions, want 100 fixes and the selection's", len(actions))
	}
	raw := startRaw(b)
	raw.send(b, `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"`+e.uri("big.go")+`","languageId":"go","version":1,"text":`+string(mustJSON(doc.String()))+`}}}`)
	var times []time.Duration
	id := 100
	for b.Loop() {
		id++
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"textDocument/codeAction","params":%s}`, id, params)
		t0 := time.Now()
		raw.send(b, req)
		raw.until(b, id)
		times = append(times, time.Since(t0))
	}
	reportPercentiles(b, times)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func reportPercentiles(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	pct := func(p float64) float64 {
		return float64(times[min(int(p*float64(len(times))), len(times)-1)]) / 1e6
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// startRaw starts a server with an agent that has no model, and
// initializes it through a raw client.
func startRaw(b *testing.B) *rawClient {
	st, err := store.Open(context.Background(), b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	srv, err := lsp.New(lsp.Options{Start: func(context.Context, lsp.Setup) (*lsp.Agent, error) {
		return nil, errors.New("no agent in this benchmark")
	}})
	if err != nil {
		b.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, serverEnd); close(done) }()
	b.Cleanup(func() { cancel(); clientEnd.Close(); <-done })
	c := &rawClient{conn: clientEnd, r: bufio.NewReaderSize(clientEnd, 1<<20)}
	c.send(b, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"`+fileURI(b.TempDir())+`","capabilities":{}}}`)
	c.until(b, 1)
	c.send(b, `{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return c
}

// BenchmarkDidChange types one character in the middle of a 1 MB
// document, then asks a code action (which waits for the change, since
// notifications are handled before the requests that follow them), and
// reports the median and 99th percentile of the round trip.
func BenchmarkDidChange(b *testing.B) {
	raw := startRaw(b)
	var doc strings.Builder
	for doc.Len() < 1<<20 {
		doc.WriteString("\tx := computeSomething(a, b, \"héllo\") // line of code\n")
	}
	uri := fileURI(filepath.Join(b.TempDir(), "big.go"))
	raw.send(b, `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"`+uri+`","languageId":"go","version":1,"text":`+string(mustJSON(doc.String()))+`}}}`)
	var times []time.Duration
	id, version := 100, 1
	for b.Loop() {
		id++
		version++
		change := fmt.Sprintf(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"%s","version":%d},"contentChanges":[{"range":{"start":{"line":9000,"character":5},"end":{"line":9000,"character":5}},"text":"y"}]}}`, uri, version)
		probe := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"%s"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[],"only":["none"]}}}`, id, uri)
		t0 := time.Now()
		raw.send(b, change)
		raw.send(b, probe)
		raw.until(b, id)
		times = append(times, time.Since(t0))
	}
	reportPercentiles(b, times)
}
