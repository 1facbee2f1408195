package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// A user who ran `gcloud auth application-default login` and configured
// Vertex AI: darman refreshes the user's token at Google's token endpoint
// (here a test server speaking its wire format) and sends the token to
// Vertex, once for the turn's two calls.
func TestRunOnVertexWithApplicationDefaultCredentials(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var grants []string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		grants = append(grants, r.Method+" "+r.URL.Path+" "+r.PostForm.Encode())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("refresh_token") != "1//user-refresh" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error": "invalid_grant", "error_description": "Bad Request"}`)
			return
		}
		fmt.Fprint(w, `{"access_token": "ya29.user-token", "expires_in": 3599, "scope": "https://www.googleapis.com/auth/cloud-platform", "token_type": "Bearer"}`)
	}))
	defer tokens.Close()
	adc, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "darman-test.apps.googleusercontent.com",
		"client_secret": "client-secret", "refresh_token": "1//user-refresh", "token_uri": tokens.URL + "/token",
		"quota_project_id": "my-project"})
	e.write(filepath.Join(e.home, ".config", "gcloud", "application_default_credentials.json"), string(adc))

	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("read", `{"path":"notes.txt"}`)}},
		{Text: "The notes say hello."},
	}})
	e.write("notes.txt", "hello\n")
	e.write("darman.json", fmt.Sprintf(`{
		"model": "vertex/claude-sonnet-4-5@20250929",
		"provider": {"vertex": {"baseURL": %q, "project": "my-project", "region": "us-east5"}},
		"retry": {"maxAttempts": 1}
	}`, srv.URL))

	out, errs, code := e.run("run", "what do the notes say?")
	if code != 0 || !strings.Contains(out, "The notes say hello.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	for _, c := range calls {
		if c.Cloud != "vertex" || c.Path != "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict" {
			t.Errorf("a call to %s (%q)", c.Path, c.Cloud)
		}
		if a := c.Header.Get("Authorization"); a != "Bearer ya29.user-token" {
			t.Errorf("Authorization %q, want the token from Google's token endpoint", a)
		}
	}
	want := "POST /token client_id=darman-test.apps.googleusercontent.com&client_secret=client-secret&grant_type=refresh_token&refresh_token=1%2F%2Fuser-refresh"
	mu.Lock()
	defer mu.Unlock()
	if len(grants) != 1 || grants[0] != want {
		t.Errorf("token requests %q, want one: %s", grants, want)
	}
	if strings.Contains(out+errs, "ya29.user-token") {
		t.Error("the token was printed")
	}
}
