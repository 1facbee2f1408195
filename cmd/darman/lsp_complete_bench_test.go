package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
	"github.com/darman-dev/darman/server/rpc/rpctest"
)

// benchLSP starts darman lsp in a fresh home with the Go module of
// testenv, gopls on its PATH and darman.json's completion section
// pointing at srv; it returns the client, initialized, the workspace and
// darman's process ID.
func benchLSP(b *testing.B, srv *llmtest.Server, completion string) (*rpctest.Client, string, int) {
	b.Helper()
	gopls := testenv.Gopls(b)
	home := b.TempDir()
	ws := filepath.Join(home, "project")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	testenv.GoModule(b, ws)
	testenv.WriteFile(b, filepath.Join(ws, "darman.json"), fmt.Sprintf(`{
		"model": "local/coder",
		"provider": {"local": {"type": "openai-compatible", "baseURL": %q}},
		"completion": {%s}
	}`, srv.OpenAIURL(), completion))
	testenv.TelemetryOff(b, home)
	// The workspace is its user's: a trust record, as newEnv writes, so
	// that its darman.json may name the provider.
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		b.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"folders": []map[string]string{{"path": real, "answer": "trusted", "at": "2026-12-01T00:00:00Z"}}})
	testenv.WriteFile(b, filepath.Join(home, ".config", "darman", "trust.json"), string(rec))
	vars := testenv.SetEnv([]string{"HOME=" + home, "PATH=" + filepath.Dir(gopls) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}, testenv.GoCaches(b)...)
	cmd := exec.Command(darmanBin, "lsp")
	cmd.Dir, cmd.Env = ws, vars
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	null := func(string, json.RawMessage) (any, error) { return nil, nil }
	c := rpctest.New(context.Background(), b, pipes{stdin, stdout}, rpctest.Options{Codec: rpctest.LSP, Answer: null, Wait: 60 * time.Second})
	b.Cleanup(func() { c.Conn.Close() })
	params := map[string]any{"processId": nil, "capabilities": map[string]any{},
		"workspaceFolders": []map[string]string{{"uri": "file://" + ws, "name": "p"}}}
	if err := c.Call("initialize", params, nil); err != nil {
		b.Fatal(err)
	}
	c.Notify("initialized", map[string]any{})
	testenv.Eventually(b, "the agent started", 60*time.Second, func() bool {
		var st struct {
			Agent struct{ State string } `json:"agent"`
		}
		c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st)
		return st.Agent.State == "ready"
	})
	return c, ws, cmd.Process.Pid
}

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds())
}

// BenchmarkCompletionOverhead is darman's own time per completion through
// darman lsp, measured from outside the process (so it includes the pipe
// and both JSON encodings): "out" from the client writing the request to
// the scripted model receiving its HTTP request, "in" from the model's
// last byte to the client holding the answer. The definitions from gopls
// are on: the first request warms gopls and the definition cache; the LS
// time is reported apart (ls-ms-per-query, from darman.status). Each
// iteration types one character the suggestion does not start with, so
// the prefix cache never answers.
func BenchmarkCompletionOverhead(b *testing.B) {
	var mu sync.Mutex
	arrived := map[int]time.Time{}
	finished := map[int]chan time.Time{}
	n := 0
	srv := llmtest.Start(b, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		mu.Lock()
		k := n
		n++
		arrived[k] = time.Now()
		ch := make(chan time.Time, 1)
		finished[k] = ch
		mu.Unlock()
		go func() { <-c.Done(); ch <- time.Now() }()
		return llmtest.Step{Text: "Greet(name)"}
	}})
	c, ws, _ := benchLSP(b, srv, `"model": "local/coder", "api": "completions", "context": {"lspBudget": "30s"}`)
	uri := "file://" + filepath.Join(ws, "b", "b.go")
	text := "package b\n\nimport \"example.com/m/a\"\n\n// Use greets x.\nfunc Use() string {\n\tname := \"x\"\n\treturn a.Greet(name) + a.\n}\n"
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	line, col := 7, len("\treturn a.Greet(name) + a.")
	ask := func() {
		var res json.RawMessage
		if err := c.Call("textDocument/inlineCompletion", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]int{"line": line, "character": col}, "context": map[string]any{"triggerKind": 1}}, &res); err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(string(res), "Greet(name)") {
			b.Fatalf("answer %s", res)
		}
	}
	ask() // warms gopls and the definition cache
	version := 1
	var out, in []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version++
		c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]int{"line": line, "character": col},
				"end": map[string]int{"line": line, "character": col}}, "text": "x"}}})
		col++
		mu.Lock()
		k := n
		mu.Unlock()
		t0 := time.Now()
		ask()
		t3 := time.Now()
		mu.Lock()
		t1, ch := arrived[k], finished[k]
		mu.Unlock()
		t2 := <-ch
		out = append(out, t1.Sub(t0))
		in = append(in, max(0, t3.Sub(t2)))
	}
	b.StopTimer()
	var st struct {
		Completion struct {
			Usage struct {
				LSPQueries int   `json:"lspQueries"`
				LSPMillis  int64 `json:"lspMillis"`
			} `json:"usage"`
		} `json:"completion"`
	}
	c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st)
	b.ReportMetric(pct(out, 0.5), "out-p50-µs")
	b.ReportMetric(pct(out, 0.99), "out-p99-µs")
	b.ReportMetric(pct(in, 0.5), "in-p50-µs")
	b.ReportMetric(pct(in, 0.99), "in-p99-µs")
	if u := st.Completion.Usage; u.LSPQueries > 0 {
		b.ReportMetric(float64(u.LSPMillis)/float64(u.LSPQueries), "ls-ms-per-query")
		b.ReportMetric(float64(u.LSPQueries), "ls-queries")
	}
}

// BenchmarkCompletionSupersededClose: from the client writing a newer
// request for a document to the scripted model seeing the older
// request's HTTP connection closed.
func BenchmarkCompletionSupersededClose(b *testing.B) {
	srv := llmtest.Start(b, llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if strings.HasSuffix(c.Conversation, "slow") {
			return llmtest.Step{Text: "x", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, Times: -1}}}
		}
		return llmtest.Step{Text: "y"}
	}})
	c, ws, _ := benchLSP(b, srv, `"model": "local/coder", "api": "completions", "debounce": "0s", "context": {"definitions": false}`)
	uri := "file://" + filepath.Join(ws, "main.go")
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1,
		"text": "package main\n\nfunc main() {\n\tslow\n\tquick\n}\n"}})
	params := func(line, char int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]int{"line": line, "character": char},
			"context": map[string]any{"triggerKind": 2}}
	}
	var d []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := len(srv.ModelCalls())
		done := make(chan struct{})
		go func() {
			var res json.RawMessage
			c.Call("textDocument/inlineCompletion", params(3, 5), &res)
			close(done)
		}()
		var slow *llmtest.Call
		for slow == nil {
			for _, call := range srv.ModelCalls()[before:] {
				if strings.HasSuffix(call.Conversation, "slow") {
					slow = call
				}
			}
			if slow == nil {
				time.Sleep(50 * time.Microsecond)
			}
		}
		t0 := time.Now()
		quick := make(chan struct{})
		go func() {
			var res json.RawMessage
			c.Call("textDocument/inlineCompletion", params(4, 6), &res)
			close(quick)
		}()
		<-slow.ClientGone()
		d = append(d, time.Since(t0))
		// Both answered before the next round, so that round's model
		// calls are its own.
		<-done
		<-quick
	}
	b.StopTimer()
	b.ReportMetric(pct(d, 0.5), "p50-µs")
	b.ReportMetric(pct(d, 0.99), "p99-µs")
}
