package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/mcp/client"
)

// serveHTTP serves the fake server's tools over streamable HTTP or, with
// sse, the legacy HTTP+SSE transport, and records the Authorization
// headers it receives.
func serveHTTP(t *testing.T, sse bool) (url string, auth func() []string) {
	t.Helper()
	var h http.Handler
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return newFake() }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newFake() }, nil)
	}
	var (
		mu   = make(chan struct{}, 1)
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu <- struct{}{}
		seen = append(seen, r.Header.Get("Authorization"))
		<-mu
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu <- struct{}{}
		defer func() { <-mu }()
		return append([]string(nil), seen...)
	}
}

func TestRemoteTransports(t *testing.T) {
	for _, tc := range []struct {
		name string
		sse  bool
	}{{"http", false}, {"sse", true}} {
		t.Run(tc.name, func(t *testing.T) {
			url, auth := serveHTTP(t, tc.sse)
			d := client.Definition{Name: "remote", URL: url, SSE: tc.sse, Headers: map[string]string{"Authorization": "Bearer sekrit-token"}}
			m, _ := newManager(t, d)
			if err := m.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			tools, err := m.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			res, err := find(t, tools, "remote_echo").Run(context.Background(), (&recorder{}).env(), json.RawMessage(`{"text":"hi"}`))
			if err != nil || res.IsError || res.Output != "echo: hi\ndone" {
				t.Fatalf("remote_echo = %+v, %v", res, err)
			}
			st := m.Status()[0]
			if st.Transport != tc.name || !strings.HasPrefix(st.Origin, tc.name+": http://127.0.0.1") || st.State != client.StateReady {
				t.Errorf("status = %+v; want transport %s, ready", st, tc.name)
			}
			if strings.Contains(st.Origin, "sekrit") {
				t.Errorf("origin %q shows the header", st.Origin)
			}
			for _, a := range auth() {
				if a != "Bearer sekrit-token" {
					t.Errorf("a request carried Authorization %q; want the configured header on every request", a)
				}
			}
		})
	}
}

func TestInvalidDefinitionSaysWhy(t *testing.T) {
	d := client.Definition{Name: "gh", URL: "https://example.com/mcp", ConfigFile: "/w/.vscode/mcp.json",
		Invalid: "uses ${input:token}, which darman cannot prompt for"}
	m, _ := newManager(t, d)
	err := m.Wait(context.Background())
	var se *client.StartupError
	if !errors.As(err, &se) || len(se.Failures) != 1 || se.Failures[0].Class != client.FailureInvalidConfig ||
		!strings.Contains(se.Failures[0].Message, "${input:token}") {
		t.Fatalf("Wait = %v; want an invalid-config failure naming the placeholder", err)
	}
	if st := m.Status()[0]; st.ConfigFile != "/w/.vscode/mcp.json" {
		t.Errorf("status config file %q", st.ConfigFile)
	}
}
