package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// completionEnv is a darman lsp whose completion model is the scripted
// server, through the workspace's darman.json as a user writes it: the
// provider "local" (an OpenAI-compatible server) and completion keys.
type completionEnv struct {
	e   *env
	srv *llmtest.Server
	c   *lspClient
}

// startCompletion writes darman.json with the completion section keys
// (a JSON object fragment) and starts darman lsp; caps are the client's
// capabilities.
func startCompletion(t *testing.T, script llmtest.Script, keys string, initOptions any, files map[string]string) *completionEnv {
	t.Helper()
	e := newEnv(t)
	// The document is Go: darman's gopls (the definitions around the
	// cursor) runs go list, which would fill a build cache in the test's
	// home and could still be writing there when the test removes it.
	e.vars = append(e.vars, testenv.GoCaches(t)...)
	testenv.TelemetryOff(t, e.home)
	srv := llmtest.Start(t, script)
	for rel, content := range files {
		e.write(rel, content)
	}
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {
			"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"},
			"local": {"type": "openai-compatible", "baseURL": %q}
		},
		"completion": {%s}
	}`, srv.URL, srv.OpenAIURL(), keys))
	_, c, _, _ := startLSP(t, e)
	c.initialize(e.workspace, initOptions)
	return &completionEnv{e: e, srv: srv, c: c}
}

func (ce *completionEnv) uri(rel string) string {
	return "file://" + filepath.Join(ce.e.workspace, rel)
}

func (ce *completionEnv) open(rel, language, text string) {
	ce.c.Conn.Notify(context.Background(), "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": ce.uri(rel), "languageId": language, "version": 1, "text": text}})
}

// inline asks textDocument/inlineCompletion at a UTF-16 position.
func (ce *completionEnv) inline(rel string, line, char int) inlineList {
	ce.c.t.Helper()
	var res inlineList
	if err := ce.c.Call("textDocument/inlineCompletion", inlineParams(ce.uri(rel), line, char), &res); err != nil {
		ce.c.t.Fatalf("inlineCompletion: %v", err)
	}
	return res
}

func inlineParams(uri string, line, char int) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]int{"line": line, "character": char},
		"context": map[string]any{"triggerKind": 1}}
}

type lspRange struct {
	Start struct{ Line, Character int } `json:"start"`
	End   struct{ Line, Character int } `json:"end"`
}

type inlineList struct {
	Items []struct {
		InsertText string   `json:"insertText"`
		Range      lspRange `json:"range"`
	} `json:"items"`
}

// utf16Len is the length of s in UTF-16 units, as LSP counts columns.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// fimLocal is the completion section for the OpenAI-compatible
// /v1/completions path with suffix, asked at once (no debounce).
const fimLocal = `"model": "local/qwen2.5-coder:1.5b", "api": "completions", "debounce": "0s"`

// TestInlineCompletionRangeAndRequest: the scripted text comes back as one
// item whose range is the cursor, in UTF-16 columns on a line with
// non-ASCII text (é is one unit, 🎉 two); the model's /v1/completions
// request holds the text before the cursor as prompt and the text after
// it as suffix, with darman's stop rule for the middle of a line.
func TestInlineCompletionRangeAndRequest(t *testing.T) {
	ce := startCompletion(t, llmtest.Script{Steps: []llmtest.Step{{TextChunks: []string{"strings.To", "Upper(s)"}}}}, fimLocal, nil, nil)
	before := "package main\n\nfunc shout(s string) string {\n\tgreeting := \"héllo 🎉\" + "
	after := " + \"!\"\n\treturn greeting\n}\n"
	ce.open("main.go", "go", before+after)
	lastLine := before[strings.LastIndexByte(before, '\n')+1:]
	col := utf16Len(lastLine)
	res := ce.inline("main.go", 3, col)
	if len(res.Items) != 1 || res.Items[0].InsertText != "strings.ToUpper(s)" {
		t.Fatalf("items: %+v, want one with strings.ToUpper(s)", res.Items)
	}
	r := res.Items[0].Range
	if r.Start.Line != 3 || r.Start.Character != col || r.End != r.Start {
		t.Errorf("range %+v, want the cursor 3:%d (UTF-16)", r, col)
	}
	calls := ce.srv.ModelCalls()
	if len(calls) != 1 || calls[0].API != llmtest.APICompletions {
		t.Fatalf("model calls: %d, want one /v1/completions", len(calls))
	}
	c := calls[0]
	if got := c.Get("prompt").String(); !strings.HasSuffix(got, before) {
		t.Errorf("prompt %q does not end with the text before the cursor", got)
	}
	if got := c.Get("suffix").String(); got != after {
		t.Errorf("suffix %q, want %q", got, after)
	}
	if c.Get("model").String() != "qwen2.5-coder:1.5b" || !c.Stream {
		t.Errorf("model %q stream %v", c.Get("model"), c.Stream)
	}
	if !strings.Contains(c.Get("stop").Raw, `"\n"`) {
		t.Errorf("stop %s: a cursor in the middle of a line asks for one line", c.Get("stop").Raw)
	}
	var status struct {
		Completion struct {
			Enabled bool `json:"enabled"`
			Usage   struct {
				Requests, ModelCalls, OutputTokens int
				Model                              string
			} `json:"usage"`
		} `json:"completion"`
	}
	if err := ce.c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &status); err != nil {
		t.Fatal(err)
	}
	if u := status.Completion.Usage; !status.Completion.Enabled || u.Requests != 1 || u.ModelCalls != 1 || u.OutputTokens == 0 || u.Model != "qwen2.5-coder:1.5b" {
		t.Errorf("darman.status completion: %+v", status.Completion)
	}
}

// TestInlineCompletionCapability: inlineCompletionProvider is advertised
// when a completion model is configured, and not without one.
func TestInlineCompletionCapability(t *testing.T) {
	for _, tc := range []struct {
		keys string
		want bool
	}{{fimLocal, true}, {`"enabled": false, ` + fimLocal, false}, {`"maxTokens": 64`, false}} {
		e := newEnv(t)
		srv := llmtest.Start(t, llmtest.Script{})
		e.write("darman.json", fmt.Sprintf(`{"provider": {"local": {"type": "openai-compatible", "baseURL": %q}}, "completion": {%s}}`, srv.OpenAIURL(), tc.keys))
		_, c, _, _ := startLSP(t, e)
		var res struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		params := map[string]any{"processId": nil, "capabilities": map[string]any{},
			"workspaceFolders": []map[string]string{{"uri": "file://" + e.workspace, "name": "p"}}}
		if err := c.Call("initialize", params, &res); err != nil {
			t.Fatal(err)
		}
		_, got := res.Capabilities["inlineCompletionProvider"]
		if got != tc.want {
			t.Errorf("completion {%s}: inlineCompletionProvider %v, want %v", tc.keys, got, tc.want)
		}
		if _, items := res.Capabilities["completionProvider"]; items {
			t.Errorf("completion {%s}: completionProvider offered without completion.items", tc.keys)
		}
	}
}

// TestCompletionItemForHelix: a client without inline completions (as
// Helix) that opts in through initializationOptions gets the suggestion
// as a textDocument/completion item that keeps the typed word, sorts after
// the language server's items and leaves the list incomplete.
func TestCompletionItemForHelix(t *testing.T) {
	ce := startCompletion(t, llmtest.Script{Steps: []llmtest.Step{{Text: "ntln(total)"}}}, fimLocal, map[string]any{
		"darman": map[string]any{"completion": map[string]any{"items": true}}}, nil)
	text := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\ttotal := 3\n\tfmt.Pri\n}\n"
	ce.open("main.go", "go", text)
	var list struct {
		IsIncomplete bool `json:"isIncomplete"`
		Items        []struct {
			Label    string `json:"label"`
			SortText string `json:"sortText"`
			TextEdit struct {
				Range   lspRange `json:"range"`
				NewText string   `json:"newText"`
			} `json:"textEdit"`
		} `json:"items"`
	}
	err := ce.c.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": ce.uri("main.go")},
		"position": map[string]int{"line": 6, "character": 8}}, &list)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || !list.IsIncomplete {
		t.Fatalf("completion list %+v, want one item, incomplete", list)
	}
	it := list.Items[0]
	if it.TextEdit.NewText != "Println(total)" || it.Label != "Println(total)" {
		t.Errorf("item %+v, want Println(total) replacing the typed Pri", it)
	}
	if r := it.TextEdit.Range; r.Start.Line != 6 || r.Start.Character != 5 || r.End.Character != 8 {
		t.Errorf("textEdit range %+v, want 6:5-6:8 (the word Pri)", r)
	}
	if !strings.HasPrefix(it.SortText, "~") {
		t.Errorf("sortText %q: the suggestion should sort after the language server's items", it.SortText)
	}
}

// TestCompletionTypingThroughAsksNothing: after a suggestion, typing its
// first characters gets the rest of it from the cache, without a model
// call; typing something else asks again.
func TestCompletionTypingThroughAsksNothing(t *testing.T) {
	ce := startCompletion(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Println(total)"}, {Text: "Sprint(total)"}}}, fimLocal, nil, nil)
	text := "package main\n\nfunc main() {\n\tfmt.\n}\n"
	ce.open("main.go", "go", text)
	if res := ce.inline("main.go", 3, 5); len(res.Items) != 1 || res.Items[0].InsertText != "Println(total)" {
		t.Fatalf("first: %+v", res)
	}
	change := func(version int, char int, typed string) {
		ce.c.Conn.Notify(context.Background(), "textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": ce.uri("main.go"), "version": version},
			"contentChanges": []any{map[string]any{"range": map[string]any{
				"start": map[string]int{"line": 3, "character": char}, "end": map[string]int{"line": 3, "character": char}}, "text": typed}}})
	}
	change(2, 5, "Pri")
	res := ce.inline("main.go", 3, 8)
	if len(res.Items) != 1 || res.Items[0].InsertText != "ntln(total)" || res.Items[0].Range.Start.Character != 8 {
		t.Fatalf("after typing Pri: %+v, want ntln(total) at 3:8", res)
	}
	if n := len(ce.srv.ModelCalls()); n != 1 {
		t.Errorf("%d model calls after typing through, want 1", n)
	}
	change(3, 8, "X")
	if res := ce.inline("main.go", 3, 9); len(res.Items) != 1 || res.Items[0].InsertText != "Sprint(total)" {
		t.Errorf("after typing off the suggestion: %+v", res)
	}
	if n := len(ce.srv.ModelCalls()); n != 2 {
		t.Errorf("%d model calls after typing off the suggestion, want 2", n)
	}
}

// TestCompletionSupersededClosesTheModelConnection: a second request for
// the same document answers, and the first one's HTTP request is closed
// (the scripted server sees the client gone) and it answers an empty
// list; $/cancelRequest does the same to a request of its own.
func TestCompletionSupersededClosesTheModelConnection(t *testing.T) {
	script := llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if strings.HasSuffix(c.Conversation, "slow") {
			return llmtest.Step{Text: "never", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, Times: -1}}}
		}
		return llmtest.Step{Text: "fast()"}
	}}
	ce := startCompletion(t, script, fimLocal, nil, nil)
	ce.open("main.go", "go", "package main\n\nfunc main() {\n\tslow\n\tquick\n}\n")
	first := make(chan inlineList, 1)
	go func() {
		var res inlineList
		ce.c.Call("textDocument/inlineCompletion", inlineParams(ce.uri("main.go"), 3, 5), &res)
		first <- res
	}()
	slow := awaitCall(t, ce.srv, 1)
	if res := ce.inline("main.go", 4, 6); len(res.Items) != 1 || res.Items[0].InsertText != "fast()" {
		t.Fatalf("second request: %+v", res)
	}
	select {
	case <-slow.ClientGone():
	case <-time.After(10 * time.Second):
		t.Fatal("the superseded request's HTTP connection is still open")
	}
	if res := <-first; len(res.Items) != 0 {
		t.Errorf("superseded request answered %+v, want no items", res)
	}

	// $/cancelRequest.
	done := make(chan error, 1)
	go func() {
		var res json.RawMessage
		done <- ce.c.Conn.Call(context.Background(), "textDocument/inlineCompletion", inlineParams(ce.uri("main.go"), 3, 5), &res,
			jsonrpc2.PickID(jsonrpc2.ID{Num: 424242}))
	}()
	cancelled := awaitCall(t, ce.srv, 3)
	ce.c.Conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": 424242})
	select {
	case <-cancelled.ClientGone():
	case <-time.After(10 * time.Second):
		t.Fatal("$/cancelRequest left the model's HTTP connection open")
	}
	var jerr *jsonrpc2.Error
	if err := <-done; err == nil || !asRPC(err, &jerr) || jerr.Code != -32800 {
		t.Errorf("cancelled request: %v, want RequestCancelled", err)
	}
}

func asRPC(err error, target **jsonrpc2.Error) bool {
	e, ok := err.(*jsonrpc2.Error)
	if ok {
		*target = e
	}
	return ok
}

// awaitAgent waits for the agent (and its language servers) to be up, as
// darman.status tells.
func (ce *completionEnv) awaitAgent() {
	testenv.Eventually(ce.c.t, "the agent started", 30*time.Second, func() bool {
		var st struct {
			Agent struct{ State string } `json:"agent"`
		}
		ce.c.Call("workspace/executeCommand", map[string]any{"command": "darman.status"}, &st)
		return st.Agent.State == "ready"
	})
}

// awaitCall waits for the scripted server's n-th model call.
func awaitCall(t *testing.T, srv *llmtest.Server, n int) *llmtest.Call {
	t.Helper()
	var c *llmtest.Call
	testenv.Eventually(t, fmt.Sprintf("model call %d", n), 20*time.Second, func() bool {
		calls := srv.ModelCalls()
		if len(calls) >= n {
			c = calls[n-1]
			return true
		}
		return false
	})
	return c
}

// TestCompletionExcludedFileNeverReachesTheModel: a completion in .env
// asks nothing, and a .env buffer open beside the file being completed is
// never sent as a snippet, though it is the most similar buffer.
func TestCompletionExcludedFileNeverReachesTheModel(t *testing.T) {
	ce := startCompletion(t, llmtest.Script{Steps: []llmtest.Step{{Text: "value"}}}, fimLocal+`, "exclude": ["private/"]`, nil, nil)
	secret := "API_TOKEN=tok-SECRET-4242\nDB_PASSWORD=hunter2-SECRET\n"
	ce.open(".env", "dotenv", secret)
	ce.open("private/notes.go", "go", "package private\n\n// db password API token value SECRET-PRIVATE\nvar x = 1\n")
	if res := ce.inline(".env", 2, 0); len(res.Items) != 0 {
		t.Fatalf("a completion in .env: %+v", res)
	}
	if n := len(ce.srv.ModelCalls()); n != 0 {
		t.Fatalf("a completion in .env made %d model calls", n)
	}
	ce.open("config.go", "go", "package main\n\n// API token and DB password value\nvar token = ")
	if res := ce.inline("config.go", 3, 12); len(res.Items) != 1 {
		t.Fatalf("config.go: %+v", res)
	}
	for _, c := range ce.srv.ModelCalls() {
		if strings.Contains(string(c.Body), "SECRET") {
			t.Errorf("the model received an excluded file's text:\n%s", c.Body)
		}
	}
}

// TestCompletionContextHasBufferSnippetAndGoplsDefinition: through real
// gopls, the model's request holds the definition of the function called
// at the cursor (from a file that is not open) and a snippet of the open
// buffer most like the cursor's neighbourhood.
func TestCompletionContextHasBufferSnippetAndGoplsDefinition(t *testing.T) {
	e := newEnv(t)
	e.withGopls(t, false)
	testenv.GoModule(t, e.workspace)
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: `"y")`}}})
	e.write("darman.json", fmt.Sprintf(`{
		"model": "local/qwen2.5-coder:1.5b",
		"provider": {"local": {"type": "openai-compatible", "baseURL": %q}},
		"completion": {%s, "context": {"lspBudget": "60s"}}
	}`, srv.OpenAIURL(), fimLocal))
	_, c, _, _ := startLSP(t, e)
	c.initialize(e.workspace, nil)
	ce := &completionEnv{e: e, srv: srv, c: c}
	ce.awaitAgent()
	helper := "package b\n\n// greetAll greets every name with a.Greet.\nfunc greetAll(names []string) (out []string) {\n\tfor _, name := range names {\n\t\tout = append(out, a.Greet(name))\n\t}\n\treturn out\n}\n"
	ce.open("b/helper.go", "go", helper)
	text := "package b\n\nimport \"example.com/m/a\"\n\n// Use greets x.\nfunc Use() string {\n\tnames := []string{\"x\"}\n\treturn a.Greet(\n}\n"
	ce.open("b/b.go", "go", text)
	res := ce.inline("b/b.go", 7, 16)
	if len(res.Items) != 1 {
		t.Fatalf("items %+v", res)
	}
	calls := srv.ModelCalls()
	prompt := calls[len(calls)-1].Get("prompt").String()
	if !strings.Contains(prompt, "// func Greet(name string) string {") || !strings.Contains(prompt, "Context from a/a.go") {
		t.Errorf("the prompt has no definition of Greet from gopls:\n%s", prompt)
	}
	if !strings.Contains(prompt, "Context from b/helper.go") || !strings.Contains(prompt, "// \t\tout = append(out, a.Greet(name))") {
		t.Errorf("the prompt has no snippet of the open buffer b/helper.go:\n%s", prompt)
	}
	if !strings.HasSuffix(prompt, "\treturn a.Greet(") {
		t.Errorf("the prompt does not end at the cursor:\n%s", prompt)
	}
}

// TestCompletionEachWireFormat: darman lsp reaches each kind of completion
// server in its own wire format, chosen by the provider (or
// completion.api/template), and shows the scripted text: Ollama's
// /api/generate, llama.cpp's /infill, Codestral's /v1/fim/completions,
// OpenAI's /v1/completions, vLLM with the Qwen template, and a chat model
// (Anthropic) with the hole-filling prompt.
func TestCompletionEachWireFormat(t *testing.T) {
	for _, tc := range []struct {
		name, provider, completion string
		api                        llmtest.API
		path                       string
		check                      func(t *testing.T, c *llmtest.Call)
	}{
		{"ollama", `"ollama": {"baseURL": "%s/v1"}`, `"model": "ollama/qwen2.5-coder:1.5b"`, llmtest.APIGenerate, "/api/generate",
			func(t *testing.T, c *llmtest.Call) {
				if !strings.HasSuffix(c.Get("prompt").String(), "return ") || c.Get("suffix").String() != "\n}\n" || c.Get("raw").Bool() {
					t.Errorf("body %s", c.Body)
				}
			}},
		{"llamacpp", `"llamacpp": {"baseURL": "%s/v1"}`, `"model": "llamacpp/default"`, llmtest.APIInfill, "/infill",
			func(t *testing.T, c *llmtest.Call) {
				if !strings.HasSuffix(c.Get("input_prefix").String(), "return ") || c.Get("input_suffix").String() != "\n}\n" {
					t.Errorf("body %s", c.Body)
				}
			}},
		{"codestral", `"codestral": {"baseURL": "%s/v1", "apiKey": "csk-test"}`, `"model": "codestral/codestral-latest"`, llmtest.APIFIM, "/v1/fim/completions",
			func(t *testing.T, c *llmtest.Call) {
				if c.Header.Get("Authorization") != "Bearer csk-test" || c.Get("suffix").String() != "\n}\n" {
					t.Errorf("body %s headers %v", c.Body, c.Header)
				}
			}},
		{"completions", `"local": {"type": "openai-compatible", "baseURL": "%s/v1"}`, `"model": "local/deepseek-coder", "api": "completions"`, llmtest.APICompletions, "/v1/completions",
			func(t *testing.T, c *llmtest.Call) {
				if c.Get("suffix").String() != "\n}\n" {
					t.Errorf("body %s", c.Body)
				}
			}},
		{"vllm-template", `"vllm": {"baseURL": "%s/v1"}`, `"model": "vllm/Qwen2.5-Coder-7B"`, llmtest.APICompletions, "/v1/completions",
			func(t *testing.T, c *llmtest.Call) {
				p := c.Get("prompt").String()
				if !strings.HasPrefix(p, "<|fim_prefix|>") || !strings.HasSuffix(p, "<|fim_suffix|>\n}\n<|fim_middle|>") || c.Get("suffix").Exists() {
					t.Errorf("prompt %q body %s", p, c.Body)
				}
			}},
		{"chat", `"anthropic": {"baseURL": "%s", "apiKey": "sk-ant-test-0123456789"}`, `"model": "anthropic/claude-haiku-4-5"`, llmtest.APIAnthropic, "/v1/messages",
			func(t *testing.T, c *llmtest.Call) {
				if !strings.Contains(c.Get("system").Raw, "code completion engine") ||
					!strings.Contains(c.Get("messages.0.content.0.text").String(), "return <|CURSOR|>\n}") || c.Get("system.0.cache_control").Exists() {
					t.Errorf("body %s", c.Body)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "a + b"}}})
			provider := strings.ReplaceAll(tc.provider, "%s", srv.URL)
			e.write("darman.json", fmt.Sprintf(`{"model": "anthropic/claude-sonnet-4-5", "provider": {%s}, "completion": {%s, "debounce": "0s"}}`,
				provider, tc.completion))
			_, c, _, _ := startLSP(t, e)
			c.initialize(e.workspace, nil)
			ce := &completionEnv{e: e, srv: srv, c: c}
			ce.open("add.go", "go", "package calc\n\nfunc add(a, b int) int {\n\treturn \n}\n")
			res := ce.inline("add.go", 3, 8)
			if len(res.Items) != 1 || res.Items[0].InsertText != "a + b" {
				t.Fatalf("items %+v", res)
			}
			calls := srv.ModelCalls()
			if len(calls) != 1 || calls[0].API != tc.api || calls[0].Path != tc.path {
				for _, c := range calls {
					t.Logf("call %s %s", c.API, c.Path)
				}
				t.Fatalf("want one %s call to %s", tc.api, tc.path)
			}
			tc.check(t, calls[0])
		})
	}
}

// TestDoctorShowsTheCompletionModel: doctor names the completion model
// and how it is reached, says why there is none, and --check-completion
// asks it for one completion.
func TestDoctorShowsTheCompletionModel(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "a + b"}}})
	e.write("darman.json", fmt.Sprintf(`{"provider": {"ollama": {"baseURL": %q}}, "completion": {"model": "ollama/qwen2.5-coder:1.5b"}}`, srv.OpenAIURL()))
	out, _, _ := e.run("doctor", "--check-completion")
	for _, want := range []string{"completion\n", "✓ ollama/qwen2.5-coder:1.5b: ollama/qwen2.5-coder:1.5b over ollama: fill-in-the-middle, api \"ollama\" chosen for provider \"ollama\"",
		"✓ check: \"a + b\" in "} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if n := len(srv.ModelCalls()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	e.write("darman.json", `{"completion": {"maxTokens": 64}}`)
	if out, _, _ := e.run("doctor"); !strings.Contains(out, "· model: inline completions are off: no completion.model is set") {
		t.Errorf("doctor without a completion model:\n%s", out)
	}
}
