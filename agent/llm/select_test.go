package llm_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// closedAddr is a 127.0.0.1 address nobody listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestSelectConfiguredModel(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hi"}}})
	sel, err := provider.Select(context.Background(), provider.SelectOptions{
		Model:     "work/acme/coder-7b:q4",
		Providers: map[string]provider.Settings{"work": {Type: llm.TypeOpenAICompatible, BaseURL: srv.OpenAIURL()}},
		Options:   &provider.Options{LookupEnv: noEnv},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Client.Name() != "work" || sel.Model != "acme/coder-7b:q4" || sel.Ref() != "work/acme/coder-7b:q4" {
		t.Errorf("selected %s (%s)", sel.Ref(), sel.Model)
	}
	if !strings.Contains(sel.Reason, "the config sets model") {
		t.Errorf("reason %q", sel.Reason)
	}
	r, err := llm.Collect(sel.Client.Stream(ctxT(t), &llm.Request{Model: sel.Model, Messages: []llm.Message{llm.UserText("x")}}))
	if err != nil || r.Text() != "hi" {
		t.Fatalf("%v %+v", err, r)
	}
	if got := srv.ModelCalls()[0].Model; got != "acme/coder-7b:q4" {
		t.Errorf("sent model %q", got)
	}
}

func TestSelectBadModelRef(t *testing.T) {
	_, err := provider.Select(context.Background(), provider.SelectOptions{Model: "claude-sonnet-4-6", Options: &provider.Options{LookupEnv: noEnv}})
	if err == nil || !strings.Contains(err.Error(), "write it as provider/model-id") {
		t.Errorf("err = %v", err)
	}
}

func TestSelectConfiguredProviderWithModels(t *testing.T) {
	sel, err := provider.Select(context.Background(), provider.SelectOptions{
		Providers: map[string]provider.Settings{"lmstudio": {Models: map[string]llm.ModelOverride{"qwen2.5-coder-14b": {ContextWindow: 32768}}}},
		Options:   &provider.Options{LookupEnv: noEnv},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Ref() != "lmstudio/qwen2.5-coder-14b" {
		t.Errorf("selected %s", sel.Ref())
	}
}

func TestSelectFindsOllama(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Models: []string{"qwen3:8b", "llama3.2:3b"}, Steps: []llmtest.Step{{Text: "local"}}})
	host := strings.TrimPrefix(srv.URL, "http://")
	sel, err := provider.Select(context.Background(), provider.SelectOptions{
		Options: &provider.Options{LookupEnv: env(map[string]string{"OLLAMA_HOST": host, "ANTHROPIC_API_KEY": "sk-ant"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Ref() != "ollama/qwen3:8b" || sel.Client.BaseURL() != srv.OpenAIURL() {
		t.Errorf("selected %s at %s", sel.Ref(), sel.Client.BaseURL())
	}
	if !strings.Contains(sel.Reason, "Ollama runs at "+srv.OpenAIURL()+" with 2 model(s)") {
		t.Errorf("reason %q", sel.Reason)
	}
	r, err := llm.Collect(sel.Client.Stream(ctxT(t), &llm.Request{Model: sel.Model, Messages: []llm.Message{llm.UserText("x")}}))
	if err != nil || r.Text() != "local" {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestSelectFallsBackToKeys(t *testing.T) {
	host := closedAddr(t)
	cases := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, "anthropic/claude-sonnet-4-6"},
		{map[string]string{"OPENAI_API_KEY": "o", "OPENROUTER_API_KEY": "r"}, "openai/gpt-5.1"},
		{map[string]string{"OPENROUTER_API_KEY": "r"}, "openrouter/anthropic/claude-sonnet-4.6"},
	}
	for _, tc := range cases {
		tc.vars["OLLAMA_HOST"] = host
		sel, err := provider.Select(context.Background(), provider.SelectOptions{Options: &provider.Options{LookupEnv: env(tc.vars)}})
		if err != nil {
			t.Fatal(err)
		}
		if sel.Ref() != tc.want || !strings.Contains(sel.Reason, "_API_KEY is") {
			t.Errorf("selected %s (%s), want %s", sel.Ref(), sel.Reason, tc.want)
		}
		if sel.Client.KeySource() == "" || !strings.HasSuffix(sel.Client.KeySource(), "_API_KEY") {
			t.Errorf("key source %q", sel.Client.KeySource())
		}
	}
}

func TestSelectExplainsWhatToSet(t *testing.T) {
	host := closedAddr(t)
	_, err := provider.Select(context.Background(), provider.SelectOptions{
		Options: &provider.Options{LookupEnv: env(map[string]string{"OLLAMA_HOST": host})},
	})
	var nm *provider.NoModelError
	if !errors.Is(err, provider.ErrNoModel) || !errors.As(err, &nm) {
		t.Fatalf("err = %v, want a NoModelError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`set "model" in darman's config`,
		"set ANTHROPIC_API_KEY (darman then uses anthropic/claude-sonnet-4-6)",
		"set OPENAI_API_KEY",
		"set OPENROUTER_API_KEY",
		"ollama pull",
		"Ollama is not running at http://" + host + "/v1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestCheck(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "OK", Usage: &llmtest.Usage{Input: 14, Output: 2}}}})
	c := newClient(t, apis[0].settings(srv), fastRetry)
	res := provider.Check(ctxT(t), c, "claude-haiku-4-5")
	if !res.OK() || res.Reply != "OK" {
		t.Fatalf("%+v", res)
	}
	if s := res.String(); !strings.HasPrefix(s, `ok: anthropic/claude-haiku-4-5 answered "OK" in `) || !strings.HasSuffix(s, "(14 tokens in, 2 out)") {
		t.Errorf("%q", s)
	}
	expect(t, srv.ModelCalls()[0], "max_tokens", 64)

	srv.SetScript(faulted(llmtest.Fault{Kind: llmtest.FaultStatus, Status: 401, Times: -1}))
	res = provider.Check(ctxT(t), c, "claude-haiku-4-5")
	if res.OK() || res.Err.Kind != llm.ErrAuth {
		t.Fatalf("%+v", res)
	}
	if s := res.String(); !strings.HasPrefix(s, "failed: anthropic/claude-haiku-4-5: the Anthropic API rejected the key from provider.anthropic.apiKey (401)") {
		t.Errorf("%q", s)
	}
}
