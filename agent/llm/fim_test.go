package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// fimClient is an OpenAI-compatible provider on the scripted server, for
// every FIM API (the native ones live at the server's root, as Ollama's
// and llama.cpp's do beside their /v1).
func fimClient(t *testing.T, srv *llmtest.Server, name string) *llm.Client {
	t.Helper()
	s := provider.Settings{Name: name, Type: llm.TypeOpenAICompatible, BaseURL: srv.OpenAIURL(), APIKey: "sk-fim-test"}
	c, err := provider.New(s, &provider.Options{Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFIM(t *testing.T, s *llm.FIMStream) string {
	t.Helper()
	var b strings.Builder
	for s.Next() {
		b.WriteString(s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return b.String()
}

var fimAPIs = []struct {
	api      llm.FIMAPI
	call     llmtest.API
	path     string
	prefix   string // where the prefix goes in the request body
	suffix   string
	noSuffix bool // with a template, no suffix field is sent
}{
	{llm.FIMCompletions, llmtest.APICompletions, "/v1/completions", "prompt", "suffix", true},
	{llm.FIMOllama, llmtest.APIGenerate, "/api/generate", "prompt", "suffix", true},
	{llm.FIMInfill, llmtest.APIInfill, "/infill", "input_prefix", "input_suffix", true},
	{llm.FIMMistral, llmtest.APIFIM, "/v1/fim/completions", "prompt", "suffix", false},
}

// TestFIMWireFormats: each FIM API, streamed and not, sends the prefix
// and suffix where its server reads them and reads the scripted text and
// usage back.
func TestFIMWireFormats(t *testing.T) {
	for _, tc := range fimAPIs {
		for _, noStream := range []bool{false, true} {
			name := string(tc.api)
			if noStream {
				name += "/whole"
			}
			t.Run(name, func(t *testing.T) {
				srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{TextChunks: []string{"a + ", "b"},
					Usage: &llmtest.Usage{Input: 21, Output: 2}}}})
				temp := 0.2
				s, err := fimClient(t, srv, "local").FIM(ctxT(t), &llm.FIMRequest{API: tc.api, Model: "coder", Prefix: "func add(a, b int) int {\n\treturn ",
					Suffix: "\n}\n", MaxTokens: 32, Temperature: &temp, Stop: []string{"\n"}, NoStream: noStream,
					Files: []llm.FIMFile{{Path: "b.go", Text: "var b = 2\n"}}})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if got := readFIM(t, s); got != "a + b" {
					t.Errorf("text %q", got)
				}
				if u := s.Usage(); u.Input != 21 || u.Output != 2 {
					t.Errorf("usage %+v", u)
				}
				calls := srv.ModelCalls()
				if len(calls) != 1 {
					t.Fatalf("%d calls", len(calls))
				}
				c := calls[0]
				if c.API != tc.call || c.Path != tc.path || c.Stream == noStream {
					t.Errorf("call %s %s stream %v", c.API, c.Path, c.Stream)
				}
				if c.Get(tc.prefix).String() != "func add(a, b int) int {\n\treturn " || c.Get(tc.suffix).String() != "\n}\n" {
					t.Errorf("body %s", c.Body)
				}
				if tc.api == llm.FIMInfill && c.Get("input_extra.0.filename").String() != "b.go" {
					t.Errorf("input_extra: %s", c.Body)
				}
				if c.Header.Get("Authorization") != "Bearer sk-fim-test" {
					t.Errorf("authorization %q", c.Header.Get("Authorization"))
				}
			})
		}
	}
}

// TestFIMTemplateSendsARawPrompt: with a template the prefix and suffix go
// in the model's tokens as the prompt, with no suffix field; Ollama gets
// raw, llama.cpp /completion, and the template's stop tokens are sent.
func TestFIMTemplateSendsARawPrompt(t *testing.T) {
	tmpl, err := llm.LookupFIMTemplate("auto", "qwen2.5-coder:7b")
	if err != nil || tmpl.Name != "qwen" {
		t.Fatalf("auto template for qwen2.5-coder: %v %v", tmpl, err)
	}
	want := "<|file_sep|>b.go\nvar b = 2\n<|fim_prefix|>x := <|fim_suffix|>\n<|fim_middle|>"
	for _, tc := range fimAPIs[:3] {
		t.Run(string(tc.api), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "1"}}})
			s, err := fimClient(t, srv, "local").FIM(ctxT(t), &llm.FIMRequest{API: tc.api, Model: "qwen2.5-coder:7b",
				Prefix: "x := ", Suffix: "\n", Template: tmpl, Files: []llm.FIMFile{{Path: "b.go", Text: "var b = 2"}}})
			if err != nil {
				t.Fatal(err)
			}
			readFIM(t, s)
			c := srv.ModelCalls()[0]
			if got := c.Get("prompt").String(); got != want {
				t.Errorf("prompt %q, want %q", got, want)
			}
			if c.Get("suffix").Exists() || c.Get("input_suffix").Exists() {
				t.Errorf("a templated request sent a suffix: %s", c.Body)
			}
			if stop := c.Get("stop").Raw + c.Get("options.stop").Raw; !strings.Contains(stop, `endoftext`) {
				t.Errorf("no template stop tokens: %s", c.Body)
			}
			if tc.api == llm.FIMOllama && !c.Get("raw").Bool() {
				t.Errorf("ollama without raw: %s", c.Body)
			}
			if tc.api == llm.FIMInfill && c.Path != "/completion" {
				t.Errorf("llama.cpp templated path %s", c.Path)
			}
		})
	}
	for _, name := range llm.FIMTemplateNames() {
		tmpl, _ := llm.LookupFIMTemplate(name, "")
		p := tmpl.Render("PRE", "SUF", nil)
		if !strings.Contains(p, "PRE") || !strings.Contains(p, "SUF") || strings.Index(p, "PRE") < 0 {
			t.Errorf("%s renders %q", name, p)
		}
	}
	if _, err := llm.LookupFIMTemplate("auto", "mystery-model"); err == nil {
		t.Error("auto for an unknown model family gave a template")
	}
}

// TestFIMFaults: an error status is a classified *llm.Error for each API,
// a cut stream is ErrStreamCut, a stream the client closes early closes
// the connection, and a server that answers JSON to a stream request is
// read all the same.
func TestFIMFaults(t *testing.T) {
	for _, tc := range fimAPIs {
		t.Run(string(tc.api), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "x y z", Faults: []llmtest.Fault{
				{Kind: llmtest.FaultStatus, Status: 429, Message: "slow down"},
				{Kind: llmtest.FaultCut, After: 1},
				{Kind: llmtest.FaultNoStream},
			}}}})
			c := fimClient(t, srv, "local")
			req := &llm.FIMRequest{API: tc.api, Model: "coder", Prefix: "p", Suffix: "s"}
			_, err := c.FIM(ctxT(t), req)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.ErrRateLimited || !strings.Contains(e.Error(), "slow down") {
				t.Errorf("429: %v", err)
			}
			s, err := c.FIM(ctxT(t), req)
			if err == nil {
				for s.Next() {
				}
				err = s.Err()
				s.Close()
			}
			if !errors.As(err, &e) || (e.Kind != llm.ErrStreamCut && e.Kind != llm.ErrNetwork) {
				t.Errorf("cut: %v", err)
			}
			s, err = c.FIM(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := readFIM(t, s); got != "x y z" {
				t.Errorf("JSON answer to a stream request: %q", got)
			}
		})
	}
}

// TestFIMCloseEndsTheRequest: closing a stream mid-answer (the engine
// has its line) closes the connection at once. The answer streams for
// 10 s, so that a test held up by a loaded machine still closes it
// mid-answer, and the 5 s wait ends before an open connection would.
func TestFIMCloseEndsTheRequest(t *testing.T) {
	for _, tc := range fimAPIs {
		t.Run(string(tc.api), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: strings.Repeat("tok ", 5000),
				Delay: llmtest.Duration(2 * time.Millisecond)}}})
			ctx, cancel := context.WithCancel(ctxT(t))
			defer cancel()
			s, err := fimClient(t, srv, "local").FIM(ctx, &llm.FIMRequest{API: tc.api, Model: "coder", Prefix: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if !s.Next() {
				t.Fatalf("no text: %v", s.Err())
			}
			s.Close()
			cancel()
			select {
			case <-srv.ModelCalls()[0].ClientGone():
			case <-time.After(5 * time.Second):
				t.Fatal("the connection stayed open after Close")
			}
		})
	}
}
