package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// webSite is a local web server counting the requests it saw.
func webSite(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><h2>Release notes</h2><p>Version <em>7.1</em> fixes the <a href="/bugs/42">crash</a>.</p></body></html>`)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// withFetchModel writes the project's config: the scripted model, and
// extra top-level keys.
func (e *env) withFetchModel(t *testing.T, script llmtest.Script, extra string) *llmtest.Server {
	srv := e.withModel(t, script)
	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"},
		%s
	}`, srv.URL, extra))
	return srv
}

// TestRunWebFetch: with webfetch allowed and the test server's address
// allowed in the config, the page reaches the model as Markdown.
func TestRunWebFetch(t *testing.T) {
	e := newEnv(t)
	site, hits := webSite(t)
	srv := e.withFetchModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("webfetch", fmt.Sprintf(`{"url":%q}`, site.URL+"/notes"))}},
		{Text: "7.1 fixes the crash."},
	}}, fmt.Sprintf(`"permission": {"webfetch": "allow"}, "webfetch": {"allow": [%q]}`, strings.TrimPrefix(site.URL, "http://")))

	out, errs, code := e.run("run", "what does the release fix?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if hits.Load() != 1 {
		t.Errorf("the site saw %d requests, want 1", hits.Load())
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls\nstderr: %s", len(calls), errs)
	}
	body := string(calls[1].Body)
	for _, want := range []string{"## Release notes", "Version *7.1* fixes the [crash](" + site.URL + "/bugs/42)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the next model request lacks %q:\n%s", want, body)
		}
	}
	if !strings.Contains(errs, "✓ webfetch") {
		t.Errorf("stderr:\n%s", errs)
	}
}

// TestRunWebFetchNotAllowed: webfetch asks by default, and with no one to
// ask the fetch is refused before any request is made.
func TestRunWebFetchNotAllowed(t *testing.T) {
	e := newEnv(t)
	site, hits := webSite(t)
	srv := e.withFetchModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("webfetch", fmt.Sprintf(`{"url":%q}`, site.URL+"/notes"))}},
		{Text: "I could not fetch it."},
	}}, fmt.Sprintf(`"webfetch": {"allow": [%q]}`, strings.TrimPrefix(site.URL, "http://")))

	out, errs, code := e.run("run", "what does the release fix?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if hits.Load() != 0 {
		t.Errorf("the site saw %d requests, want none", hits.Load())
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), `"is_error":true`) {
		t.Errorf("the refusal did not reach the model as an error (%d calls)", len(calls))
	}
	if !strings.Contains(errs, "✗ webfetch") {
		t.Errorf("stderr:\n%s", errs)
	}
}

// TestRunWebFetchRefusesLocalByDefault: allowed to fetch, but not to reach
// the loopback address, the server sees nothing.
func TestRunWebFetchRefusesLocalByDefault(t *testing.T) {
	e := newEnv(t)
	site, hits := webSite(t)
	srv := e.withFetchModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("webfetch", fmt.Sprintf(`{"url":%q}`, site.URL+"/notes"))}},
		{Text: "Refused."},
	}}, `"permission": {"webfetch": "allow"}`)

	out, errs, code := e.run("run", "fetch it")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if hits.Load() != 0 {
		t.Errorf("the site saw %d requests, want none", hits.Load())
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "loopback address") {
		t.Errorf("the refusal did not reach the model (%d calls)", len(calls))
	}
}
